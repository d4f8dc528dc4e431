// Generated kernels called directly, with what plans reach rarely or not
// at all: a call that joins dst (accumulate) holding negative NaNs. The
// inner kernel on short rows (blocks of 16 outputs; AVX2: 8); the column
// kernels are in jit_columns_test.cpp.
#include <functional>

#include "backend/jit/generators.hpp"
#include "backend/jit/kernel_cache.hpp"
#include "jit_direct_util.hpp"

namespace crest::impl::jit::test {
namespace {

class JitBlocks : public isa_dt_test {
protected:

    // blocks: the code has blocks; from memory (kernel_config::prefetch,
    // as plans for src past the L3 make it) they keep a register between
    // load and max, and with no blocks the row loop prefetches.
    // tiny_streamed: tiny rows writing dst with non-temporal stores where
    // it is aligned to them (kernel_config::stream_dst). long_rows: no
    // blocks, the row loop from the caches (AVX-512 f32 finds NaN by the
    // invalid flag); fused_rows: as long_rows with kernel_config::fused16
    // (AVX-512 16-bit: both statistics read each vector from memory);
    // fused_blocks: blocks with kernel_config::fused16 (AVX-512's word
    // blocks: both maxes from memory).
    enum class code_kind {
        blocks, blocks_from_memory, prefetching_rows, tiny_streamed, long_rows, fused_rows,
        fused_blocks
    };

    // src holds only the smallest magnitudes (raw bits 1..0x7f, either sign).
    bool tiny_values = false;
    // The odd elements of outputs [masked_from, masked_to) are -inf (those
    // with an odd index +inf), the even ones nonzero: masked scores.
    int64_t masked_from = 0, masked_to = 0;
    // This output's elements all negative (-1: none).
    int64_t negative_out = -1;
    // dst this many bytes past a 64-byte boundary (-1: as allocated).
    int dst_offset = -1;
    // Rows an output (an outer reduced dim), each the outputs' whole
    // block, the next 4 bytes past the line after it; nan_src's NaNs in
    // row nan_row.
    int rows = 1, nan_row = 0;

    // outs outputs of n contiguous elements; dst joined when accumulate.
    // nan_src / nan_dst: output indices that get a negative NaN.
    // caller_mxcsr, when not 0: the MXCSR the kernel is called with, which
    // it must leave as it was (flags included).
    void run(int64_t n, int64_t outs, bool accumulate, std::vector<int64_t> nan_src,
            std::vector<int64_t> nan_dst, uint32_t seed, code_kind kind = code_kind::blocks,
            uint32_t caller_mxcsr = 0) {
        const bool prefetching_rows = kind == code_kind::prefetching_rows;
        const bool row_loop = prefetching_rows || kind == code_kind::long_rows
                || kind == code_kind::fused_rows;
        SCOPED_TRACE("n=" + std::to_string(n) + " outs=" + std::to_string(outs)
                + " accumulate=" + std::to_string(accumulate) + " seed=" + std::to_string(seed)
                + " kind=" + std::to_string(int(kind)));
        kernel_config cfg;
        cfg.isa = isa();
        cfg.family = family_t::inner;
        cfg.src_dt = cfg.dst_dt = dt();
        cfg.unroll = row_loop ? (isa() == isa_t::avx512_core ? 8 : 4) : 2;
        cfg.block_n = row_loop ? 0 : static_cast<int>(n);
        cfg.prefetch = kind == code_kind::blocks_from_memory || prefetching_rows;
        cfg.fused16 = kind == code_kind::fused_rows || kind == code_kind::fused_blocks;
        cfg.stream_dst = kind == code_kind::tiny_streamed;
        const auto code = get_code(cfg);
        const size_t es = esize(dt());
        const int64_t block = outs * n * int64_t(es);
        const int64_t row_stride = rows > 1 ? (block + 63) / 64 * 64 + 4 : 0;
        guarded src(size_t(row_stride * (rows - 1) + block)), dst_buf(outs * es + 128);
        uint8_t *const dst =
                dst_offset < 0 ? dst_buf.data() : past_line(dst_buf.data(), dst_offset);
        std::mt19937 rng(seed);
        for (int r = 0; r < rows; ++r)
            for (int64_t i = 0; i < outs * n; ++i) {
                uint32_t b = random_bits(dt(), rng, false);
                if (tiny_values)
                    b = (b & (dt() == data_type::f32 ? 0x80000000u : 0x8000u)) | (b % 0x7f + 1);
                const int64_t o = i / n;
                if (o >= masked_from && o < masked_to)
                    b = i % 2 ? inf_bits(dt(), o % 2 == 0) : b | 1;
                if (o == negative_out) b |= dt() == data_type::f32 ? 0x80000000u : 0x8000u;
                put(src.data() + r * row_stride, i, dt(), b);
            }
        for (int64_t o = 0; o < outs; ++o) put(dst, o, dt(), random_bits(dt(), rng, false));
        for (int64_t o : nan_src)
            put(src.data() + nan_row * row_stride, o * n + (o * 7) % n, dt(), negative_nan(dt()));
        for (int64_t o : nan_dst) put(dst, o, dt(), negative_nan(dt()));
        std::vector<uint32_t> want(outs);
        for (int64_t o = 0; o < outs; ++o)
            want[o] = expected_rows(src.data() + o * n * es, n, rows, row_stride, dst + o * es,
                    accumulate, dt());
        const inner_call a {src.data(), dst, outs, int64_t(n * es), int64_t(es), rows,
                row_stride, n, accumulate};
        call_with_mxcsr(caller_mxcsr, [&] { code->fn(&a); });
        for (int64_t o = 0; o < outs; ++o) expect_same(get(dst, o, dt()), want[o], dt(), o);
        EXPECT_TRUE(src.guards_ok());
        EXPECT_TRUE(dst_buf.guards_ok());
    }
};

// Row lengths with and without a partial last vector (AVX-512 masked,
// AVX2 overlapping), unrolled and looped; negative NaNs in src and
// in dst (the sum check and the exact block must both keep them).
TEST_P(JitBlocks, JoinsDstAndCatchesNegativeNaN) {
    uint32_t seed = 1;
    // (AVX2 rows past whole vectors: an overlapping last vector.)
    // (16-bit rows of 256-512: the word blocks on Intel CPUs, on AVX-512.)
    for (int64_t n : {8, 9, 13, 16, 24, 32, 33, 48, 56, 64, 65, 81, 96, 100, 128, 160, 199, 255,
                 256, 300, 385, 512}) {
        if (!inner_blocks_take(dt(), n, isa() == isa_t::avx512_core)) continue;
        for (bool acc : {false, true}) {
            for (auto kind : {code_kind::blocks, code_kind::blocks_from_memory,
                         code_kind::fused_blocks}) {
                run(n, 37, acc, {}, {}, seed++, kind);
                run(n, 37, acc, {3}, {}, seed++, kind);
                run(n, 37, acc, {20, 36}, {}, seed++, kind);  // a later block, the remainder
                if (acc) run(n, 37, acc, {}, {5, 17}, seed++, kind);
            }
        }
    }
}

// Outputs of several rows (an outer reduced dim), from the caches and
// from memory (each row's block checked as it is read): negative NaNs in
// the first and in a later row, in a later block and the remainder, an
// output of negatives only.
TEST_P(JitBlocks, SeveralRowsAnOutput) {
    uint32_t seed = 50;
    for (int64_t n : {9, 17, 25, 56, 100, 199, 289}) {
        if (!inner_blocks_take(dt(), n, isa() == isa_t::avx512_core)) continue;
        for (auto kind : {code_kind::blocks, code_kind::blocks_from_memory}) {
            for (int r : {2, 3}) {
                rows = r;
                for (bool acc : {false, true}) {
                    run(n, 37, acc, {}, {}, seed++, kind);
                    for (int at : {0, r - 1}) {
                        nan_row = at;
                        run(n, 37, acc, {3}, {}, seed++, kind);
                        run(n, 37, acc, {20, 36}, {}, seed++, kind);
                    }
                    nan_row = 0;
                    if (acc) run(n, 37, acc, {}, {5, 17}, seed++, kind);
                    negative_out = 18;
                    run(n, 37, acc, {}, {}, seed++, kind);
                    negative_out = -1;
                }
            }
        }
    }
    rows = 1;
}

// Long rows in the prefetching row loop: the prefetches past a row's end
// (and past the buffer) change nothing.
TEST_P(JitBlocks, PrefetchingRowsLoop) {
    uint32_t seed = 100;
    for (int64_t n : {1000, 3136, 4099}) {
        for (bool acc : {false, true}) {
            run(n, 5, acc, {}, {}, seed++, code_kind::prefetching_rows);
            run(n, 5, acc, {1, 4}, {}, seed++, code_kind::prefetching_rows);
            if (acc) run(n, 5, acc, {}, {2}, seed++, code_kind::prefetching_rows);
        }
    }
}

// Long rows from the caches, and fused (both statistics from memory):
// whole vectors and a masked tail (AVX2: an overlapping last vector, or
// element by element under a vector), accumulators unrolled; negative NaNs
// in src and dst, an output of negatives only (the pass of unsigned
// mins), and outputs after a NaN one (f32: the invalid flag is cleared
// for them).
TEST_P(JitBlocks, LongRowsFromTheCachesAndFused) {
    uint32_t seed = 200;
    for (auto kind : {code_kind::long_rows, code_kind::fused_rows}) {
        for (int64_t n : {1, 5, 33, 64, 1000, 3136, 4099}) {
            for (bool acc : {false, true}) {
                run(n, 5, acc, {}, {}, seed++, kind);
                run(n, 5, acc, {1}, {}, seed++, kind);
                run(n, 5, acc, {0, 3}, {}, seed++, kind);
                if (acc) run(n, 5, acc, {}, {2}, seed++, kind);
                negative_out = 2;
                run(n, 5, acc, {}, {}, seed++, kind);
                run(n, 5, acc, {4}, {}, seed++, kind);
                negative_out = -1;
            }
        }
    }
}

// Blocks from the caches find NaN by the invalid flag of their maxes, in
// every dtype: a caller's MXCSR comes back as it was, flags set or clear,
// and a caller that unmasked the invalid exception gets no SIGFPE from a
// NaN.
TEST_P(JitBlocks, LeaveTheCallersFloatingPointEnvironment) {
    uint32_t seed = 300;
    for (uint32_t caller : callers_mxcsr()) {
        run(64, 37, false, {3}, {}, seed++, code_kind::blocks, caller);
        run(48, 37, true, {20}, {5}, seed++, code_kind::blocks, caller);
        run(3136, 5, true, {1}, {3}, seed++, code_kind::long_rows, caller);
    }
}

// f16 blocks compare raw bits as floats (gen_inner_blocks.cpp), where the
// smallest f16 values are float denormals: a caller's DAZ must not make
// them equal, so those kernels run with it clear (jit_generator.cpp); the
// caller's MXCSR, DAZ included, comes back. f32 and bf16 denormals are
// left to the caller's DAZ (decisions.md).
TEST_P(JitBlocks, F16TinyValuesUnderTheCallersDaz) {
    if (dt() != data_type::f16) GTEST_SKIP() << "f16 only";
    constexpr uint32_t daz = 0x40;
    tiny_values = true;
    const uint32_t caller = (_mm_getcsr() & ~0x3fu) | daz;
    run(64, 37, false, {}, {}, 400, code_kind::blocks, caller);
    run(56, 37, true, {}, {}, 401, code_kind::blocks, caller);
    run(40, 37, false, {}, {}, 402, code_kind::blocks, caller);
}

// bf16 blocks max raw dwords as floats, where an infinity beside a
// nonzero element is a NaN (gen_inner_blocks.cpp): such a block is redone
// with the low halves cleared, and so are the call's later blocks, whose
// NaNs must still be found. Infinities in the first block, then NaNs in a
// later one and in the remainder; infinities everywhere with NaNs; every
// dtype keeps the values exact.
TEST_P(JitBlocks, InfinitiesBesideOtherElements) {
    uint32_t seed = 500;
    for (auto kind : {code_kind::blocks, code_kind::blocks_from_memory}) {
        // 24: AVX2's 16-bit word blocks fall back to the bf16 pairs there;
        // past 64 (AVX2: 32) to the widened rows.
        for (int64_t n : {24, 32, 56, 64, 81, 200}) {
            for (bool acc : {false, true}) {
                masked_from = 0;
                masked_to = 16;
                run(n, 70, acc, {}, {}, seed++, kind);
                run(n, 70, acc, {40, 66}, {}, seed++, kind);
                masked_to = 70;
                run(n, 70, acc, {}, {}, seed++, kind);
                run(n, 70, acc, {3, 17, 50}, {}, seed++, kind);
                if (acc) run(n, 70, acc, {}, {20}, seed++, kind);
                masked_from = 20;
                run(n, 70, acc, {5, 33}, {}, seed++, kind);
                // 16-bit rows of 32 or more (AVX2: 17): an output of negatives only sends
                // the call from the signed 16-bit maxes to the pairs, and
                // infinities then to the clean pairs.
                negative_out = 2;
                masked_from = 16;
                run(n, 70, acc, {}, {}, seed++, kind);
                run(n, 70, acc, {40, 66}, {}, seed++, kind);
                masked_to = 0;
                run(n, 70, acc, {20}, {}, seed++, kind);
                negative_out = 21;
                run(n, 70, acc, {3, 50}, {}, seed++, kind);
                negative_out = -1;
            }
        }
    }
}

// AVX-512's 16-bit rows of 2-3 max floats of dwords
// (gen_inner_tiny_dwords.cpp): f16's smallest values are float
// denormals there, which a caller's DAZ must not make equal (bf16's are
// the caller's business, as f32's); infinities beside other elements
// (masked scores) stay exact; a negative NaN in a later vector of
// outputs sends the call to the exact paths.
TEST_P(JitBlocks, TinyRowsOfTwoOrThreeAsFloats) {
    if (dt() == data_type::f32) GTEST_SKIP() << "16-bit only";
    uint32_t seed = 700;
    const uint32_t daz = (_mm_getcsr() & ~0x3fu) | 0x40;
    for (int64_t n : {2, 3}) {
        tiny_values = true;
        run(n, 96, false, {}, {}, seed++, code_kind::blocks, dt() == data_type::f16 ? daz : 0);
        tiny_values = false;
        masked_from = 0;
        masked_to = 96;
        run(n, 96, false, {}, {}, seed++);
        run(n, 96, false, {50}, {}, seed++);
        masked_to = 0;
        negative_out = 40;
        run(n, 96, false, {}, {}, seed++);
        negative_out = -1;
    }
}

// Tiny rows that stream dst (large problems): non-temporal stores where
// the call's dst is aligned to them, plain ones where it is not, the
// same outputs either way; a NaN sends the call, streamed stores and all,
// to the exact paths.
TEST_P(JitBlocks, TinyRowsStreamDst) {
    uint32_t seed = 600;
    for (int64_t n = 2; inner_tiny_rows(isa(), dt(), n); ++n) {
        for (int offset : {0, 2, 4, 16, 32, 48}) {
            dst_offset = offset;
            run(n, 100, false, {}, {}, seed++, code_kind::tiny_streamed);
            run(n, 100, false, {70}, {}, seed++, code_kind::tiny_streamed);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(All, JitBlocks, every_isa_and_dtype(), isa_dt_name);

} // namespace
} // namespace crest::impl::jit::test
