// The two column kernels (dst tile, register columns) called directly,
// with what plans reach rarely or not at all: calls that join dst holding
// negative NaNs, lanes of negatives only, the caller's MXCSR.
#include <functional>
#include <utility>

#include "backend/jit/generators.hpp"
#include "backend/jit/kernel_cache.hpp"
#include "jit_direct_util.hpp"

namespace crest::impl::jit::test {
namespace {

// The column kernels on n_outer slices of rows x ncols (row stride ncols +
// 5 elements), every ISA the machine runs. A NaN planted in one slice must
// not leak into the next (the register columns redo a slice exactly).
class JitColumns : public isa_dt_test {
protected:
    int vl() const { return isa() == isa_t::avx512_core ? 16 : 8; }

    // When set, src element (row, column) gets shape_src(row, column, its
    // random bits) instead.
    std::function<uint32_t(int64_t, int64_t, uint32_t)> shape_src;
    // The same with the slice first (slice, row, column, bits), when set.
    std::function<uint32_t(int64_t, int64_t, int64_t, uint32_t)> shape_slice;
    // Handed to the tiles (vert_call::modes) when set.
    lane_modes16 *modes = nullptr;
    // The tiles' last passes stream dst (kernel_config::stream_dst).
    bool stream = false;
    // dst this many bytes past a 64-byte boundary (-1: as allocated).
    int dst_offset = -1;

    // nan_src / nan_dst: (slice, column) pairs that get a negative NaN.
    // caller_mxcsr, when not 0: the MXCSR the kernel is called with, which
    // it must leave as it was (flags included).
    void run(family_t family, int64_t ncols, int64_t rows, bool accumulate,
            std::vector<std::pair<int64_t, int64_t>> nan_src,
            std::vector<std::pair<int64_t, int64_t>> nan_dst, uint32_t seed,
            uint32_t caller_mxcsr = 0) {
        // The tiles with and without prefetching, their (and the register
        // columns') 16-bit loads fused or not, prefetching near or far or
        // the next pass, into L1 or not, with and without a scratch tile
        // (same results).
        const bool prefetch = family == family_t::vert_tile && seed % 2;
        const bool fused16 = seed % 4 >= 2;  // tiles (some prefetching) and 16-bit register columns
        const bool with_scratch = family == family_t::vert_tile && seed % 3 != 0;
        SCOPED_TRACE(
                "family=" + std::to_string(int(family)) + " prefetch=" + std::to_string(prefetch)
                + " fused16=" + std::to_string(fused16) + " scratch=" + std::to_string(with_scratch)
                + " ncols=" + std::to_string(ncols) + " rows=" + std::to_string(rows)
                + " accumulate=" + std::to_string(accumulate) + " seed=" + std::to_string(seed));
        kernel_config cfg;
        cfg.isa = isa();
        cfg.family = family;
        cfg.src_dt = cfg.dst_dt = dt();
        cfg.unroll = family == family_t::vert_reg ? int((ncols + vl() - 1) / vl()) : 1;
        cfg.partial_last = family == family_t::vert_reg && isa() == isa_t::avx2
                && dt() == data_type::f32 && ncols % vl() != 0;
        cfg.prefetch = prefetch;
        cfg.fused16 = fused16;
        cfg.prefetch_bytes = prefetch && seed % 3 == 1 ? 4096 : 0;
        cfg.prefetch_pass = !prefetch && seed % 3 == 2;
        cfg.prefetch_l1_bytes = family == family_t::vert_tile && seed % 5 == 3 ? 512 : 0;
        cfg.stream_dst = stream;
        const auto code = get_code(cfg);
        const int64_t n_outer = 3, stride = ncols + 5, slice = rows * stride;
        const size_t es = esize(dt());
        guarded src(n_outer * slice * es), dst_buf(n_outer * ncols * es + 128);
        uint8_t *const dst =
                dst_offset < 0 ? dst_buf.data() : past_line(dst_buf.data(), dst_offset);
        std::mt19937 rng(seed);
        for (int64_t i = 0; i < n_outer * slice; ++i) {
            const uint32_t bits = random_bits(dt(), rng, false);
            const int64_t r = i % slice / stride, c = i % slice % stride;
            const uint32_t v = shape_slice ? shape_slice(i / slice, r, c, bits)
                    : shape_src                ? shape_src(r, c, bits)
                                               : bits;
            put(src.data(), i, dt(), v);
        }
        for (int64_t i = 0; i < n_outer * ncols; ++i)
            put(dst, i, dt(), random_bits(dt(), rng, false));
        for (auto [o, c] : nan_src)
            put(src.data(), o * slice + (c % rows) * stride + c, dt(), negative_nan(dt()));
        for (auto [o, c] : nan_dst) put(dst, o * ncols + c, dt(), negative_nan(dt()));
        std::vector<uint32_t> want(n_outer * ncols);
        for (int64_t o = 0; o < n_outer; ++o)
            for (int64_t c = 0; c < ncols; ++c)
                want[o * ncols + c] = expected(src.data() + (o * slice + c) * es, rows, stride,
                        dst + (o * ncols + c) * es, accumulate, dt());
        // The scratch at a 4 KiB boundary inside a guarded buffer.
        guarded scratch(vert_scratch_bytes + 4096, 0x5a);
        const uintptr_t at =
                (reinterpret_cast<uintptr_t>(scratch.data()) + 4095) & ~uintptr_t(4095);
        const vert_call a {src.data(), dst, ncols, rows, int64_t(stride * es), accumulate,
                n_outer, int64_t(slice * es), int64_t(ncols * es),
                with_scratch ? reinterpret_cast<void *>(at) : nullptr, modes, 1, 0};
        call_with_mxcsr(caller_mxcsr, [&] { code->fn(&a); });
        for (int64_t i = 0; i < n_outer * ncols; ++i)
            expect_same(get(dst, i, dt()), want[i], dt(), i);
        EXPECT_TRUE(src.guards_ok());
        EXPECT_TRUE(dst_buf.guards_ok());
        EXPECT_TRUE(scratch.guards_ok());
    }
};

TEST_P(JitColumns, JoinDstAndKeepNaNsInTheirSlice) {
    uint32_t seed = 1;
    for (family_t f : {family_t::vert_reg, family_t::vert_tile}) {
        // 33000: two tiles of f32 and one of 16-bit types, then a tail.
        // AVX2's f32 register columns past whole vectors: a last vector by
        // vmaskmovps, up to 7 vectors (1, 7, 33, 55 columns).
        for (int64_t ncols : {1, 7, 8, 16, 24, 33, 55, 64, 100, 256, 300, 33000}) {
            const bool reg = f == family_t::vert_reg;
            const bool avx2_partial = vl() == 8 && dt() == data_type::f32 && ncols < 56;
            if (reg && (ncols > 16 * vl() || (vl() == 8 && ncols % 8 && !avx2_partial))) continue;
            if (!reg && ncols <= 16) continue;
            for (int64_t rows : {1, 5, 13}) {
                if (ncols > 300 && rows != 13) continue;
                for (bool acc : {false, true}) {
                    run(f, ncols, rows, acc, {}, {}, seed++);
                    run(f, ncols, rows, acc, {{1, ncols - 1}}, {}, seed++);
                    if (acc) run(f, ncols, rows, acc, {}, {{0, 0}, {2, ncols / 2}}, seed++);
                }
            }
        }
    }
}

// 16-bit register columns start with two statistics a row (AVX-512); a
// slice with a lane of negatives only is redone with three, and so is the
// rest of the call: a column negative in every row of one slice (or none),
// with negative NaNs in src and dst (in a lane of positives, the unsigned
// max's business), stays exact in every slice.
TEST_P(JitColumns, RegisterColumnsGoExactAfterANegativeLane) {
    if (dt() == data_type::f32) GTEST_SKIP() << "16-bit only";
    const uint32_t sign = 0x8000u;
    uint32_t seed = 900;
    for (int64_t ncols : {8, 33, 64, 100}) {
        if (vl() == 8 && ncols % 8) continue;
        const int64_t neg_col = ncols / 3;
        // The negative column in slice `neg_slice` only (3: none): the
        // slices before it go checked, the ones after exact.
        for (int64_t neg_slice : {0, 1, 2, 3}) {
            shape_slice = [&](int64_t o, int64_t, int64_t c, uint32_t bits) {
                return o == neg_slice && c == neg_col ? bits | sign : bits & ~sign;
            };
            for (int64_t rows : {1, 6, 13})
                for (bool acc : {false, true}) {
                    run(family_t::vert_reg, ncols, rows, acc, {}, {}, seed++);
                    run(family_t::vert_reg, ncols, rows, acc, {{2, ncols - 1}, {1, neg_col}}, {},
                            seed++);
                    if (acc)
                        run(family_t::vert_reg, ncols, rows, acc, {}, {{2, 0}, {0, neg_col}},
                                seed++);
                }
        }
        shape_slice = nullptr;
    }
}

// Passes of 16 rows (AVX-512 f32 reads them skewed, a column per row and
// step): blocks of 256 columns that start, run and drain the pipeline, the
// unskewed rest and tail, and one NaN at a time in every row of a pass, in
// each kind of block, which must not be lost to the plain max.
TEST_P(JitColumns, SixteenRowPassesKeepEveryRowAndNaN) {
    uint32_t seed = 500;
    for (int64_t rows : {16, 35}) {
        for (int64_t ncols : {257, 16 * 16 * 3 + 37}) {
            for (bool acc : {false, true}) {
                run(family_t::vert_tile, ncols, rows, acc, {}, {}, seed++);
                if (acc) run(family_t::vert_tile, ncols, rows, acc, {}, {{1, 300 % ncols}}, seed++);
                // Column c holds the NaN in row c % rows: the first block's
                // columns, the middle, the last block's, the rest, the tail.
                std::vector<int64_t> at;
                for (int64_t c = 0; c < rows; ++c) at.push_back(c);
                for (int64_t c : {255, 256, 270, 511, 512, 700, 767, 768, 790}) at.push_back(c);
                for (int64_t c = ncols - rows; c < ncols; ++c) at.push_back(c);
                for (int64_t c : at)
                    if (c >= 0 && c < ncols)
                        run(family_t::vert_tile, ncols, rows, acc, {{1, c}}, {}, seed++);
            }
        }
    }
    run(family_t::vert_tile, 33000, 35, true, {{2, 16400}}, {}, seed++);
}

// Rows left past the full passes go in one pass of exactly that many
// (gen_vertical.cpp, tile()), or for AVX-512 f32 rows a multiple of 2 KiB apart
// (1024 columns) a pass of group() and one of the rest: odd counts
// included, a NaN of either sign in each row of such a pass (column c
// holds it in row c % rows), fresh and accumulating, negative data.
TEST_P(JitColumns, PassesOfAnyRowCount) {
    uint32_t seed = 900;
    for (int64_t ncols : {300, 1024}) {
        for (int64_t rows : {3, 5, 6, 7, 9, 11, 13, 15, 19, 23, 29}) {
            for (bool acc : {false, true}) {
                run(family_t::vert_tile, ncols, rows, acc, {}, {}, seed++);
                std::vector<std::pair<int64_t, int64_t>> at;
                for (int64_t c = 0; c < rows; ++c) at.push_back({c % 3, c});
                run(family_t::vert_tile, ncols, rows, acc, at, {}, seed++);
            }
        }
    }
    const uint32_t sign = dt() == data_type::f32 ? 0x80000000u : 0x8000u;
    shape_src = [&](int64_t, int64_t, uint32_t bits) { return bits | sign; };
    for (int64_t rows : {3, 7, 13})
        run(family_t::vert_tile, 300, rows, false, {{1, 2}}, {}, seed++);
    shape_src = nullptr;
}

// Tiles whose last passes stream dst (few rows from half the L3's size):
// non-temporal stores where a tile's dst is aligned to them, plain ones
// elsewhere (outer slices 4 or 2 bytes a column apart move it), the same
// values; a pass with a NaN is redone over what it streamed; the passes
// before the last (8-15 rows) keep writing the running max plainly.
TEST_P(JitColumns, LastPassesStreamDst) {
    uint32_t seed = 1200;
    stream = true;
    for (int64_t rows : {1, 2, 3, 4, 7, 8, 9, 12, 15, 17}) {
        for (int offset : {0, 2, 32, 48}) {
            dst_offset = offset;
            for (bool acc : {false, true}) {
                run(family_t::vert_tile, 5000, rows, acc, {}, {}, seed++);
                run(family_t::vert_tile, 5000, rows, acc, {{0, 64}, {2, 4999}}, {}, seed++);
            }
        }
    }
    stream = false;
    dst_offset = -1;
}

// 16-bit tiles keep one statistic per lane in passes of 16 rows and flip
// between positive and negative lanes (gen_vertical.hpp); where odd
// columns stay negative and even ones positive, both modes fail and the
// call's later passes go straight and exact: the values, NaNs planted in
// the later slices and a negative NaN running max stay exact.
TEST_P(JitColumns, SixteenBitLanesOfBothSigns) {
    if (dt() == data_type::f32) GTEST_SKIP() << "16-bit lanes only";
    const uint32_t sign = 0x8000;
    shape_src = [&](int64_t, int64_t c, uint32_t bits) {
        return c % 2 ? bits | sign : bits & ~sign;
    };
    uint32_t seed = 700;
    // Two skewed blocks of columns and a rest; two tiles (33000).
    for (auto [rows, ncols] : {std::pair<int64_t, int64_t> {64, 16 * 32 * 2 + 40}, {83, 1064},
                 {64, 33000}}) {
        for (bool acc : {false, true}) {
            run(family_t::vert_tile, ncols, rows, acc, {}, {}, seed++);
            run(family_t::vert_tile, ncols, rows, acc, {{1, 33}, {2, 600}, {2, 601}}, {}, seed++);
            if (acc) run(family_t::vert_tile, ncols, rows, acc, {}, {{2, 3}, {2, 520}}, seed++);
        }
    }
    shape_src = nullptr;
}

// The 16-bit tiles' lane modes carry from one call to the next
// (vert_call::modes): all-negative data leaves negative mode set, lanes of
// both signs the straight exact passes; a later call starts in them and
// stays exact on data of any sign, NaNs included.
TEST_P(JitColumns, LaneModesCarryOver) {
    if (dt() == data_type::f32) GTEST_SKIP() << "16-bit lanes only";
    const uint32_t sign = 0x8000;
    const auto negative = [&](int64_t, int64_t, uint32_t b) { return b | sign; };
    const auto both = [&](int64_t, int64_t c, uint32_t b) { return c % 2 ? b | sign : b & ~sign; };
    uint32_t seed = 800;
    for (bool to_mixed : {false, true}) {
        lane_modes16 m;
        modes = &m;
        shape_src = to_mixed ? std::function<uint32_t(int64_t, int64_t, uint32_t)>(both)
                             : std::function<uint32_t(int64_t, int64_t, uint32_t)>(negative);
        run(family_t::vert_tile, 1064, 64, false, {}, {}, seed++);
        if (isa() == isa_t::avx512_core) {
            EXPECT_NE(to_mixed ? m.mixed : m.neg, 0u);
        }
        shape_src = nullptr;
        run(family_t::vert_tile, 1064, 64, true, {{1, 40}}, {{2, 7}}, seed++);
        shape_src = negative;
        run(family_t::vert_tile, 1064, 35, false, {{0, 3}}, {}, seed++);
    }
    // One column of negatives among positives: a slow column, not a
    // reason to switch (random signs give a few such lanes every pass).
    lane_modes16 m;
    modes = &m;
    shape_src = [&](int64_t, int64_t c, uint32_t b) { return c == 300 ? b | sign : b & ~sign; };
    run(family_t::vert_tile, 1064, 64, false, {}, {}, seed++);
    EXPECT_EQ(m.neg, 0u);
    EXPECT_EQ(m.mixed, 0u);
    modes = nullptr;
    shape_src = nullptr;
}

// The f32 column kernels find NaN by the invalid flag of their maxes: a
// caller's MXCSR comes back as it was, flags set or clear, and a caller
// that unmasked the invalid exception gets no SIGFPE from a NaN.
TEST_P(JitColumns, LeaveTheCallersFloatingPointEnvironment) {
    if (dt() != data_type::f32) GTEST_SKIP() << "no flags used";
    uint32_t seed = 1300;
    for (uint32_t caller : callers_mxcsr()) {
        for (int64_t ncols : {64, 300, 33000}) {
            const family_t f = ncols == 64 ? family_t::vert_reg : family_t::vert_tile;
            run(f, ncols, 35, false, {}, {}, seed++, caller);
            run(f, ncols, 35, true, {{1, 20}}, {{2, 7}}, seed++, caller);
        }
    }
}

// All-negative rows (log-probabilities): the AVX-512 16-bit skewed passes
// switch to keeping the unsigned min after a pass whose columns took the
// slow path, and back. Exact through every switch: a value >= +0, a
// positive or negative NaN in a late pass, a negative NaN running max, and
// rows that turn positive.
TEST_P(JitColumns, AllNegativeRowsKeepExactThroughModeSwitches) {
    const uint32_t sign = dt() == data_type::f32 ? 0x80000000u : 0x8000u;
    const uint32_t qnan = qnan_bits(dt());
    const auto negative = [&](int64_t, int64_t, uint32_t b) { return b | sign; };
    uint32_t seed = 900;
    for (int64_t rows : {50, 70}) {
        for (bool acc : {false, true}) {
            const int64_t ncols = 16 * 16 * 3 + 37;
            shape_src = negative;
            run(family_t::vert_tile, ncols, rows, acc, {}, {}, seed++);
            // A negative NaN in row c % rows: passes 1 and 3.
            for (int64_t c : {300, 40, 545, 795})
                run(family_t::vert_tile, ncols, rows, acc, {{1, c}}, {}, seed++);
            if (acc) run(family_t::vert_tile, ncols, rows, acc, {}, {{0, 7}, {2, 600}}, seed++);
            for (uint32_t odd : {0u, 1u, qnan}) {
                shape_src = [&](int64_t r, int64_t c, uint32_t b) {
                    if (r == 40 && c == 300) return odd ? (odd == 1 ? b & ~sign : odd) : 0u;
                    return b | sign;
                };
                run(family_t::vert_tile, ncols, rows, acc, {}, {}, seed++);
            }
            shape_src = [&](int64_t r, int64_t, uint32_t b) {
                return r < 20 ? b | sign : b & ~sign;
            };
            run(family_t::vert_tile, ncols, rows, acc, {}, {}, seed++);
            shape_src = [&](int64_t r, int64_t c, uint32_t b) {
                return (r / 16 + c / 256) % 2 ? b | sign : b & ~sign;
            };
            run(family_t::vert_tile, ncols, rows, acc, {}, {}, seed++);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(All, JitColumns, every_isa_and_dtype(), isa_dt_name);

} // namespace
} // namespace crest::impl::jit::test
