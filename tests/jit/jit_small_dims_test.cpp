// Small innermost dims against the ref oracle: tiny inner rows
// (gen_inner_tiny.cpp), vertical rows of few or a few hundred columns one
// after another (plan::period_code, plan::chunk_code), and the plans
// that choose them, slabs on cache lines among them.
#include "tests/jit/jit_reduce_fixture.hpp"

#include <numeric>

namespace crest::impl::jit::test {
namespace {

// Rows of 2-16 elements, one after another, dst contiguous: AVX-512
// (and AVX2 for rows of 2-7) takes whole vectors of outputs by
// permutes in memory order (gen_inner_tiny.cpp) and leaves the rest, and any call that meets a
// NaN, to the other paths. Sizes around the vector of outputs; NaN of
// either sign at each position of a row, in the first vector of outputs
// and in a later one; infinities, ties, negative data; a padded src or
// dst (the other paths) and two threads' chunks.
TEST_P(JitReduce, TinyRows) {
    const std::vector<uint32_t> nans = dt() == data_type::f32
            ? std::vector<uint32_t> {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u}
            : dt() == data_type::bf16 ? std::vector<uint32_t> {0x7fc0u, 0xffc0u, 0x7f81u, 0xff81u}
                                      : std::vector<uint32_t> {0x7e00u, 0xfe00u, 0x7c01u, 0xfc01u};
    const thread_pool one(1);
    for (int64_t n = 2; n <= 33; ++n) {
        for (int64_t outs : {15, 16, 17, 31, 32, 33, 64, 65, 100, 1000})
            run(make_problem(dt(), {outs, n}, 2));
        check(make_problem(dt(), {3000, n}, 2), {}, one, seed_++);
        for (int64_t pos = 0; pos < n; ++pos) {
            planting pl;
            pl.nan_at.push_back(size_t((pos % 3 == 0 ? 3 : 40) * n + pos));
            pl.nan_bits = nans[size_t(pos) % nans.size()];
            run(make_problem(dt(), {64, n}, 2), pl);
        }
        planting inf;
        inf.bits_at = {{size_t(5 * n), inf_bits(dt(), true)},
                {size_t(5 * n + 1), inf_bits(dt(), false)},
                {size_t(9 * n + n - 1), inf_bits(dt(), false)},
                {size_t(20 * n), inf_bits(dt(), true)}};
        run(make_problem(dt(), {48, n}, 2), inf);
        planting ties;
        ties.ties = true;
        run(make_problem(dt(), {48, n}, 2), ties);
        planting neg;
        neg.negative = true;
        run(make_problem(dt(), {80, n}, 2), neg);
        // 16-bit: negative data switches to keys for the rest of the call
        // (each thread's fourth vector of outputs), where a negative NaN
        // sorts low.
        neg.nan_at = {size_t(250 * n + n / 2)};
        neg.nan_bits = nans[1];
        run(make_problem(dt(), {256, n}, 2), neg);
        run(make_problem(dt(), {48, n}, 2, {n + 1, 1}, {}));  // rows padded
        run(make_problem(dt(), {48, n}, 2, {}, {2, 0}));      // dst padded
        run(make_problem(dt(), {4, 48, n}, 4));               // outer kept dim
    }
}

// Tiny rows with an outer reduced dim (NCHW reducing N and W): AVX-512's
// permute trees take up to tiny_tree_max_rows rows an output, maxed lane
// by lane before the tree; more rows, and the other tiny paths, go to the
// blocks. Row counts around the limit; NaN of either sign, infinities and
// an all-negative output in a later row only; negative data; a later row
// of greater values than the first; two threads' chunks.
TEST_P(JitReduce, TinyRowsOfSeveralRows) {
    const std::vector<uint32_t> nans = dt() == data_type::f32
            ? std::vector<uint32_t> {0x7fc00000u, 0xffc00000u}
            : dt() == data_type::bf16 ? std::vector<uint32_t> {0x7fc0u, 0xffc0u}
                                      : std::vector<uint32_t> {0x7e00u, 0xfe00u};
    const uint32_t one = dt() == data_type::f32 ? 0x3f800000u
            : dt() == data_type::bf16 ? 0x3f80u : 0x3c00u;
    for (int64_t n : {2, 3, 5, 7, 14, 16, 17, 28, 31}) {
        for (int64_t r : {2, 3, 7, 8, 9}) {
            for (int64_t outs : {16, 33, 64, 200})
                run(make_problem(dt(), {r, outs, n}, 0b101));
            const int64_t outs = 96;
            const size_t row = size_t(outs * n), last = size_t(r - 1) * row;
            for (size_t k = 0; k < nans.size(); ++k) {
                planting pl;
                pl.nan_at.push_back(last + size_t((40 + 17 * k) * n + n / 2));
                pl.nan_bits = nans[k];
                run(make_problem(dt(), {r, outs, n}, 0b101), pl);
                planting neg;
                neg.nan_at = pl.nan_at;
                neg.nan_bits = pl.nan_bits;
                neg.negative = true;
                run(make_problem(dt(), {r, outs, n}, 0b101), neg);
            }
            planting inf;
            inf.bits_at = {{last + size_t(5 * n), inf_bits(dt(), true)},
                    {size_t(5 * n + 1), inf_bits(dt(), false)},
                    {last + size_t(70 * n + n - 1), inf_bits(dt(), false)}};
            run(make_problem(dt(), {r, outs, n}, 0b101), inf);
            // Every row negative but the last's elements of a few outputs.
            planting mixed;
            mixed.negative = true;
            for (size_t o : {3, 50, 95})
                for (size_t e = 0; e < size_t(n); e += 2)
                    mixed.bits_at.push_back({last + o * size_t(n) + e, one});
            run(make_problem(dt(), {r, outs, n}, 0b101), mixed);
            planting ties;
            ties.ties = true;
            run(make_problem(dt(), {r, outs, n}, 0b101), ties);
        }
    }
}

// The tiny rows' loads stay within their group of rows (the AVX2 word
// transposes read 16 bytes a row, the group's last rows the 16 that end
// at their end; AVX-512's windows end at their last element): src can
// end at a page nothing follows, whatever the row length and count.
TEST_P(JitReduce, TinyRowsEndAtAPage) {
    uint32_t seed = 4100;
    for (int64_t n = 2; n <= 33; ++n)
        for (int64_t outs : {16, 17, 32, 33, 50}) {
            check_at_page_end(make_problem(dt(), {outs, n}, 2), seed++);
            check_at_page_end(make_problem(dt(), {3, outs, n}, 0b101), seed++);
        }
}

// Vertical over rows of under 64 bytes, one after another: a period of
// whole vectors at a time, then a fold of the period's rows and the rows
// left over (plan::period_code); rows of 256-511 columns by register
// columns 256 at a time (plan::chunk_code); 16-bit rows of 512-1023
// columns, and f32 rows of 2 KiB and more off the lines' grid, by the
// tiles over periods of whole rows (f32 1250 columns: 8 rows a period).
// Column counts around each, row counts around the period, NaN in
// the periodic rows and in those left over, negative data, an outer
// kept dim, an extra reduced dim, one thread and two (rows split,
// partials combined).
TEST_P(JitReduce, FewColumns) {
    const thread_pool one(1);
    std::vector<int64_t> cols;
    for (int64_t c = 1; c <= 33; ++c) cols.push_back(c);
    for (int64_t c : {49, 100, 127, 128, 257, 300, 511, 600, 784, 1000, 1250}) cols.push_back(c);
    for (int64_t c : cols) {
        const bool narrow = c <= 33;
        const std::vector<int64_t> rows =
                narrow ? std::vector<int64_t>{1, 5, 63, 64, 65, 97, 1000, 4099, 70000}
                       : std::vector<int64_t>{5, 65, 1000, 1999};
        for (int64_t r : rows) {
            const reduce_problem p = make_problem(dt(), {r, c}, 1);
            run(p);
            if (r >= 1000) check(p, {}, one, seed_++);
        }
        const int64_t r = narrow ? 4099 : 999;
        const size_t n = size_t(r * c);
        run(make_problem(dt(), {r, c}, 1), {{size_t(c / 2), n - 1}, false});
        run(make_problem(dt(), {r, c}, 1), {{n / 2}, false, 0, {}, true});
        planting neg;
        neg.negative = true;
        run(make_problem(dt(), {r, c}, 1), neg);
        run(make_problem(dt(), {3, r / 2, c}, 2));
        run(make_problem(dt(), {3, r / 2, c}, 3));
        run(make_problem(dt(), {r / 2, c}, 1, {c + 1, 1}, {}));  // rows padded
        // Slices of few rows (register columns 256 at a time up to 511
        // columns, a slice after another), a NaN in the last slice's last
        // column.
        run(make_problem(dt(), {7, 9, c}, 2));
        run(make_problem(dt(), {7, 9, c}, 2), {{size_t(6 * 9 * c + 4 * c + c - 1)}, false});
    }
}

// Periods of many rows over slices off the lines' grid (the first stage
// of NCHW reducing C and W with an odd C: [N x C x H*W] reducing C): the
// rows before a slice's first line go to the plan's own kernel after the
// period's (run_periodic), as do those of a thread's range (N = 3 on two
// threads splits the rows). NaN of either sign in those rows, at the
// period's start and end and in the rows left over; one thread and two.
TEST_P(JitReduce, PeriodsStartOnALine) {
    for (int64_t c : {25, 49, 81}) {
        for (int64_t rows : {4001, 4003}) {
            const reduce_problem p = make_problem(dt(), {3, rows, c}, 0b010);
            if (max_isa() == isa_t::avx512_core) {
                const plan P = plan_on_two(p);
                EXPECT_GT(P.period, c) << c;  // periods of many rows, whole lines
                EXPECT_EQ(P.period % c, 0) << c;
                EXPECT_EQ(P.period * P.esz % 64, 0) << c;
            }
            const size_t s1 = size_t(rows * c);  // slice 1's first element
            run_with_nans(p, {s1, s1 + size_t(3 * c + 1), s1 + size_t(40 * c), 2 * s1 - 1,
                                     s1 + s1 / 2});
        }
    }
}

// Rows of 2 KiB and more off the lines' grid by periods of several rows.
// f32, 8 a period: 9000-byte rows (72000 bytes a period), whose rows
// left over (7) never fit behind the period in run_periodic's buffer and
// take a call of their own; 4356-byte rows (an odd number of columns:
// periods of half lines), whose rows before the first on a line (up to
// 15) go first. 16-bit, periods of whole lines: 3400-byte rows 8 a
// period, 6000-byte rows 4. Slices off the lines' grid (an outer kept
// dim) and a thread's range start at any row. NaN of either sign in the
// period's rows and in those left over.
TEST_P(JitReduce, WideRowPeriods) {
    const bool f32 = dt() == data_type::f32;
    const std::vector<std::pair<int64_t, int64_t>> cols_rows = f32
            ? std::vector<std::pair<int64_t, int64_t>> {{2250, 8}, {1089, 8}}
            : std::vector<std::pair<int64_t, int64_t>> {{1700, 8}, {3000, 4}};
    for (const auto &[c, k] : cols_rows)
        for (const reduce_problem &p :
                {make_problem(dt(), {39, c}, 1), make_problem(dt(), {3, 39, c}, 0b010)}) {
            if (max_isa() == isa_t::avx512_core) {
                EXPECT_EQ(plan_on_two(p).period, k * c) << c;
            }
            size_t n = 1;
            for (int64_t d : p.dims) n *= size_t(d);
            run_with_nans(p, {size_t(c + 17), n / 2, n - 1});
        }
}

// NCHW reducing C and W of maps whose rows pass 2 KiB off the lines'
// grid: the two stages, the slab over periods of lines only (f32 33x33
// maps, 8 rows of 4356 bytes, half lines; 16-bit 38x38 maps, 8 rows of
// 2888 bytes, whole lines), none where rows_a_period would pick rows
// that make no lines (16-bit 33x33). NaN of either sign in a period's
// rows and in the rows left over; one thread and two.
TEST_P(JitReduce, WideRowSlabPeriods) {
    const bool f32 = dt() == data_type::f32;
    const int64_t hw = f32 ? 33 : 38;
    const reduce_problem p = make_problem(dt(), {4, 64, hw, hw}, 0b1010);
    if (max_isa() == isa_t::avx512_core) {
        const plan P = plan_on_two(p);
        EXPECT_TRUE(P.slab_code);
        EXPECT_EQ(P.period, 8 * hw * hw);
        if (!f32) {
            EXPECT_FALSE(plan_on_two(make_problem(dt(), {4, 64, 33, 33}, 0b1010)).period_code);
        }
    }
    const size_t map = size_t(hw * hw), n = 4 * 64 * map;
    run_with_nans(p, {map * 3 + 5, map * 64 + map * 60 + 7, n - 1});
}

// Vertical plans that share out whole slices (outer_slices_share) start
// each thread's chunk on a slice, tiles too (a tile's bounds in
// multiples of 32 columns took part of a slice: [2 x 8359 x 784]).
TEST_P(JitReduce, SharedSlicesSplitWhole) {
    const plan P = plan_on_two(make_problem(dt(), {2, 8359, 784}, 0b010));
    EXPECT_EQ(P.nchunks, 2);
    EXPECT_EQ(P.out_align, 784);
    run(make_problem(dt(), {2, 400, 784}, 0b010));
    run(make_problem(dt(), {4, 200, 790}, 0b010));
}

// AVX2 plans rows of 2-7 as tiny rows (kernel_config::block_n; bf16/f16
// widened to f32), the rows inner_blocks_take past them as blocks
// (whole vectors, or an overlapping last vector), and the rest one output
// at a time; planned for AVX2 whatever this machine runs.
TEST(JitPlan, Avx2TakesTinyRows) {
    auto block_n = [](data_type dt, int64_t n) {
        const plan P = plan_on_two(make_problem(dt, {1000, n}, 2), isa_t::avx2);
        EXPECT_EQ(P.kind, plan_kind::inner) << n;
        return P.code ? P.code->cfg.block_n : -1;
    };
    for (int64_t n = 2; n <= 7; ++n) EXPECT_EQ(block_n(data_type::f32, n), n);
    EXPECT_EQ(block_n(data_type::f32, 8), 8);
    EXPECT_EQ(block_n(data_type::f32, 9), 9);
    EXPECT_EQ(block_n(data_type::f32, 255), 255);
    EXPECT_EQ(block_n(data_type::f32, 257), 0);
    EXPECT_EQ(block_n(data_type::bf16, 3), 3);
    EXPECT_EQ(block_n(data_type::f16, 7), 7);
    EXPECT_EQ(block_n(data_type::bf16, 12), 12);
    EXPECT_EQ(block_n(data_type::f16, 63), 63);
    EXPECT_EQ(block_n(data_type::f16, 65), 65);
    EXPECT_EQ(block_n(data_type::bf16, 96), 96);
    EXPECT_EQ(block_n(data_type::f16, 128), 128);
    EXPECT_EQ(block_n(data_type::bf16, 100), 100);
    EXPECT_EQ(block_n(data_type::bf16, 255), 255);
    EXPECT_EQ(block_n(data_type::f16, 256), 0);
}

// AVX-512 plans 16-bit rows of 256-512 as word blocks on Intel CPUs
// (inner_blocks_take's long_words), by the per-output loop elsewhere;
// longer rows, f32 past 256 and AVX2 by the loop everywhere.
TEST(JitPlan, LongWordBlocksOnIntel) {
    auto block_n = [](data_type dt, int64_t n, isa_t isa) {
        const plan P = plan_on_two(make_problem(dt, {1000, n}, 2), isa);
        EXPECT_EQ(P.kind, plan_kind::inner) << n;
        return P.code ? P.code->cfg.block_n : -1;
    };
    const bool intel = intel_cpu();
    for (int64_t n : {256, 300, 512}) {
        EXPECT_EQ(block_n(data_type::bf16, n, isa_t::avx512_core), intel ? n : 0) << n;
        EXPECT_EQ(block_n(data_type::f16, n, isa_t::avx512_core), intel ? n : 0) << n;
        EXPECT_EQ(block_n(data_type::bf16, n, isa_t::avx2), 0) << n;
    }
    EXPECT_EQ(block_n(data_type::bf16, 255, isa_t::avx512_core), 255);
    EXPECT_EQ(block_n(data_type::bf16, 513, isa_t::avx512_core), 0);
    EXPECT_EQ(block_n(data_type::f32, 300, isa_t::avx512_core), 0);
}

// AVX-512's 16-bit long inner rows on lines read both statistics from
// memory (kernel_config::fused16) from half the L3's size, and on Intel
// CPUs from 32 MiB too; never the f32 rows, nor AVX2's.
TEST(JitPlan, FusedLongRowsFrom32MiBOnIntel) {
    auto fused = [](data_type dt, int64_t rows, isa_t isa) {
        const plan P = plan_on_two(make_problem(dt, {rows, 3136}, 2), isa);
        EXPECT_EQ(P.kind, plan_kind::inner) << rows;
        EXPECT_EQ(P.code ? P.code->cfg.block_n : -1, 0) << rows;
        return P.code && P.code->cfg.fused16;
    };
    const bool intel = intel_cpu();
    const int64_t half_l3 = planned_l3_bytes() / 2;
    for (int64_t rows : {int64_t(4000), int64_t(5400)}) {  // 25.1 and 33.9 MB
        const int64_t bytes = rows * 3136 * 2;
        const bool want = (intel && bytes >= (int64_t(32) << 20)) || bytes >= half_l3;
        EXPECT_EQ(fused(data_type::bf16, rows, isa_t::avx512_core), want) << rows;
        EXPECT_EQ(fused(data_type::f16, rows, isa_t::avx512_core), want) << rows;
        EXPECT_FALSE(fused(data_type::bf16, rows, isa_t::avx2)) << rows;
        EXPECT_FALSE(fused(data_type::f32, rows, isa_t::avx512_core)) << rows;
    }
}

// From two thirds of the L3's size on, AVX-512's 16-bit two-stage plans over rows
// far apart take wide slabs (wide_slab_bytes of columns) whose tiles
// prefetch 4 KiB ahead (plan_prefetch.cpp, wide_slabs): bf16
// channels-last k x 64 x 56 x 56 reducing N and C, NCHW reducing N and
// W (rows of 112 bytes), against the reference with NaN and infinities;
// not below that size, nor f32, nor AVX2, nor where the slab is a
// period (NCHW reducing C and W).
TEST_P(JitReduce, WideSlabsFromTwoThirdsOfTheL3) {
    const int64_t l3 = planned_l3_bytes();
    const dims_t small {16, 64, 56, 56};
    const int64_t k = 2 * l3 / 3 / (64 * 56 * 56 * 2) + 1;
    const dims_t big {k, 64, 56, 56};
    const dims_t cl = permuted(big, {0, 2, 3, 1});
    auto width = [](const reduce_problem &p, isa_t isa) {
        const plan P = plan_on_two(p, isa);
        EXPECT_TRUE(P.slab_code) << describe(p);
        if (P.slab_code && P.slab_width == wide_slab_bytes) {
            EXPECT_TRUE(P.slab_code->cfg.prefetch);
            EXPECT_EQ(P.slab_code->cfg.prefetch_bytes, 4096);
        }
        return P.slab_width;
    };
    const isa_t z = isa_t::avx512_core;
    const reduce_problem wide_cl = make_problem(dt(), big, 0b0011, cl);
    const reduce_problem wide_nchw = make_problem(dt(), big, 0b1001);
    const int64_t w16 = dt() == data_type::f32 ? slab_bytes : wide_slab_bytes;
    EXPECT_EQ(width(wide_cl, z), w16);
    EXPECT_EQ(width(wide_nchw, z), w16);
    EXPECT_EQ(width(wide_cl, isa_t::avx2), slab_bytes);
    const bool small_wide = w16 > slab_bytes && 3 * (16 * 64 * 56 * 56 * 2) >= 2 * l3;
    EXPECT_EQ(width(make_problem(dt(), small, 0b0011, permuted(small, {0, 2, 3, 1})), z),
            small_wide ? wide_slab_bytes : slab_bytes);
    EXPECT_EQ(width(make_problem(dt(), big, 0b1010), z), slab_bytes);
    if (GetParam().isa != std::string("avx512_core") || dt() == data_type::f32) return;
    for (const reduce_problem &p : {wide_cl, wide_nchw}) {
        const size_t n = size_t(k * 64 * 56 * 56);
        planting pl;
        pl.nan_at = {n / 3, n - 1};
        pl.bits_at = {{n / 2, inf_bits(dt(), false)}, {n / 2 + 1, inf_bits(dt(), true)}};
        run(p, pl);
    }
}

// A two-stage plan's slabs, of either width, start and end on cache
// lines where the rows' length allows it (at most half a slab lost to
// rounding); the first slab runs up to the first output that starts a
// line. NCHW x 8 x 1001 x 37, reducing C and W, runs in slabs.
TEST(JitPlan, SlabsStartOnCacheLines) {
    for (int64_t width : {slab_bytes, wide_slab_bytes})
    for (int64_t row_bytes : {112, 148, 74, 64, 128, 100, 600, 1022}) {
        const int64_t fit = width / row_bytes, grid = std::gcd<int64_t>(row_bytes, 64);
        const bool aligned = fit >= 2 * 64 / grid;
        for (int64_t off = 0; off < 64; off += 2) {
            SCOPED_TRACE("row_bytes " + std::to_string(row_bytes) + " off " + std::to_string(off));
            const auto *s = reinterpret_cast<const char *>(uintptr_t(1) << 20) + off;
            const slab_split sp = split_slabs(s, row_bytes, 100000, width);
            EXPECT_LE(sp.per * row_bytes, width);
            EXPECT_GE(sp.first, 1);
            EXPECT_LE(sp.first, sp.per);
            if (!aligned) {
                EXPECT_EQ(sp.per, fit);
                continue;
            }
            EXPECT_EQ(sp.per * row_bytes % 64, 0);
            EXPECT_GT(2 * sp.per, fit);
            if (off % grid == 0) {
                EXPECT_EQ((off + sp.first * row_bytes) % 64, 0);
            }
        }
        // Fewer outputs than the line pattern: one slab, whole.
        const slab_split few =
                split_slabs(reinterpret_cast<const char *>(4096 + 16), row_bytes, 1, width);
        EXPECT_GE(few.first, 1);
    }
    if (max_isa() == isa_t::none) return;
    EXPECT_TRUE(plan_on_two(make_problem(data_type::f32, {1, 8, 1001, 37}, 0b1010)).slab_code);
    EXPECT_TRUE(plan_on_two(make_problem(data_type::bf16, {1, 8, 1001, 37}, 0b1010)).slab_code);
}

// Vertical over rows of few columns one after another (under 64 bytes a
// row, or not a whole number of vectors) takes a period of whole vectors
// (at least 4 where it can: lcm(3, 16) = 48 -> 96) and folds it; not
// with whole vectors of 64 bytes or more, rows padded, or too few rows.
// Each outer slice costs the periodic path two calls: slices of few
// periods keep the register columns.
TEST(JitPlan, FewColumnsTakeAPeriod) {
    if (max_isa() == isa_t::none) GTEST_SKIP() << "no JIT ISA";
    const bool z = max_isa() == isa_t::avx512_core;
    const plan three = plan_on_two(make_problem(data_type::f32, {100000, 3}, 1));
    ASSERT_TRUE(three.period_code);
    EXPECT_EQ(three.period, z ? 96 : 48);
    EXPECT_EQ(three.period_code->cfg.family, family_t::vert_reg);
    EXPECT_TRUE(plan_on_two(make_problem(data_type::bf16, {100000, 7}, 1)).period_code);
    EXPECT_FALSE(plan_on_two(make_problem(data_type::f32, {100000, 16}, 1)).period_code);
    // Under 64 bytes a row: 16-bit rows of 16 and 24 columns too.
    EXPECT_EQ(plan_on_two(make_problem(data_type::f16, {100000, 16}, 1)).period, z ? 64 : 32);
    EXPECT_TRUE(plan_on_two(make_problem(data_type::bf16, {100000, 24}, 1)).period_code);
    EXPECT_FALSE(plan_on_two(make_problem(data_type::bf16, {100000, 32}, 1)).period_code);
    // Past 256 elements for lcm(columns, vector) (AVX-512 only): a tile
    // over periods of whole lines (rows_a_period: 80 rows of 49, 40 rows
    // of 100, where they divide the rows), or where the rows are too few
    // for 4 such periods as many whole rows as 16 vectors hold, the last
    // vector masked.
    const plan lines49 = plan_on_two(make_problem(data_type::f32, {100000, 49}, 1));
    EXPECT_EQ(lines49.period, z ? 80 * 49 : 0);
    if (z) {
        ASSERT_TRUE(lines49.period_code);
        EXPECT_EQ(lines49.period_code->cfg.family, family_t::vert_tile);
    }
    EXPECT_EQ(plan_on_two(make_problem(data_type::f32, {100000, 100}, 1)).period, z ? 4000 : 0);
    EXPECT_EQ(plan_on_two(make_problem(data_type::f32, {40, 49}, 1)).period, z ? 245 : 0);
    EXPECT_FALSE(plan_on_two(make_problem(data_type::f32, {100000, 48}, 1)).period_code);
    // 256-511 columns (AVX-512): register columns 256 at a time, the
    // tiles the rest.
    EXPECT_EQ(bool(plan_on_two(make_problem(data_type::bf16, {100000, 300}, 1)).chunk_code), z);
    EXPECT_FALSE(plan_on_two(make_problem(data_type::bf16, {100000, 600}, 1)).chunk_code);
    // Slices of under 16 rows past 511 columns: the tiles (one pass of
    // the rows left).
    EXPECT_FALSE(plan_on_two(make_problem(data_type::bf16, {64, 14, 512}, 2)).chunk_code);
    // 16-bit rows of 512 columns to 2 KiB (AVX-512): the tiles over
    // periods of whole rows, at most 8 of them: whole lines first, then
    // at most 1/64 of the rows left over, then the most rows (8 of 784,
    // though 10 divide 100000 rows too; 8 of 512 rows of 600 columns,
    // where 12 left 8; 8 of 16718 rows of 784, 6 left; 4 rows of 600
    // columns of 127 rows: 3 left).
    const plan wide = plan_on_two(make_problem(data_type::bf16, {100000, 784}, 1));
    EXPECT_EQ(wide.period, z ? 8 * 784 : 0);
    EXPECT_EQ(plan_on_two(make_problem(data_type::f16, {16, 512, 600}, 2)).period,
            z ? 8 * 600 : 0);
    EXPECT_EQ(plan_on_two(make_problem(data_type::bf16, {16718, 784}, 1)).period,
            z ? 8 * 784 : 0);
    EXPECT_EQ(
            plan_on_two(make_problem(data_type::bf16, {16, 128, 784}, 2)).period, z ? 8 * 784 : 0);
    EXPECT_EQ(plan_on_two(make_problem(data_type::f16, {16, 127, 600}, 2)).period, z ? 4 * 600 : 0);
    if (z) {
        ASSERT_TRUE(wide.period_code);
        EXPECT_EQ(wide.period_code->cfg.family, family_t::vert_tile);
    }
    // Past 2 KiB only rows off the lines' grid, rows a period (0: none):
    // 16-bit whole lines of 4 or 8 rows within 32 KiB first (3400-byte
    // rows 8, 6000-byte rows 4), else rows_a_period's pick within 16 KiB
    // (4000-byte rows 4, whole lines the most that fit; 2500-byte rows 6,
    // no whole lines fit; 7000-byte rows 2), none from 8 KiB; f32 rows
    // the fewest that make whole lines (2400 bytes 2, 5000 and 5800
    // bytes 8, 10000 bytes 4); from 4 KiB half as many where those pass 8
    // rows or 72 KiB (half lines: 4996 bytes 8, 13000 bytes 4), none
    // below 4 KiB (2916 bytes) or where half pass them too (12100
    // bytes); rows on the grid (6272 and 2048 bytes, f32 4992), none.
    struct wide_case {
        data_type dt;
        int64_t rows, cols, period_rows;
    };
    for (const wide_case &w : std::vector<wide_case> {{data_type::bf16, 7710, 1700, 8},
                 {data_type::f16, 4369, 3000, 4}, {data_type::bf16, 100000, 2000, 4},
                 {data_type::f16, 10485, 1250, 6}, {data_type::bf16, 3744, 3500, 2},
                 {data_type::f16, 10000, 4100, 0}, {data_type::bf16, 10000, 3136, 0},
                 {data_type::bf16, 100000, 1024, 0}, {data_type::f32, 100000, 600, 2},
                 {data_type::f32, 5242, 1250, 8}, {data_type::f32, 4500, 1450, 8},
                 {data_type::f32, 2621, 2500, 4}, {data_type::f32, 5242, 1249, 8},
                 {data_type::f32, 2000, 3250, 4}, {data_type::f32, 9000, 729, 0},
                 {data_type::f32, 2000, 3025, 0}, {data_type::f32, 5242, 1248, 0}}) {
        const plan P = plan_on_two(make_problem(w.dt, {w.rows, w.cols}, 1));
        EXPECT_EQ(P.period, z ? w.period_rows * w.cols : 0) << w.cols;
        EXPECT_EQ(bool(P.period_code), z && w.period_rows > 0) << w.cols;
    }
    EXPECT_FALSE(
            plan_on_two(make_problem(data_type::bf16, {100000, 300}, 1, {301, 1}, {})).chunk_code);
    EXPECT_FALSE(plan_on_two(make_problem(data_type::f32, {100000, 3}, 1, {4, 1}, {})).period_code);
    EXPECT_FALSE(plan_on_two(make_problem(data_type::f32, {30, 3}, 1)).period_code);
    // Slices of few periods each (NCHW axis 2 of 28x28 maps: 7 periods of
    // 112 columns a channel) stay with the register columns, which loop
    // over the slices themselves; one slice of as many rows takes the
    // period, as do slices of 64 periods or more. (AVX2's register
    // columns take columns past whole vectors too: f32's last vector by
    // vmaskmovps, 16-bit's read whole but in a slice's last row.)
    const plan maps28 = plan_on_two(make_problem(data_type::f32, {8, 64, 28, 28}, 0b0100));
    EXPECT_FALSE(maps28.period_code);
    ASSERT_TRUE(maps28.code);
    EXPECT_EQ(maps28.code->cfg.family, family_t::vert_reg);
    EXPECT_EQ(maps28.code->cfg.partial_last, !z);
    EXPECT_FALSE(plan_on_two(make_problem(data_type::bf16, {8, 64, 28, 28}, 0b0100)).period_code);
    EXPECT_EQ(plan_on_two(make_problem(data_type::f32, {28, 28}, 1)).period, z ? 112 : 56);
    EXPECT_EQ(plan_on_two(make_problem(data_type::f32, {64, 256, 28}, 0b010)).period, z ? 112 : 56);
}

// NCHW reducing C and W of small maps: src is one [C x H*W] block per
// N, so two stages, the first over the block's H*W columns by a period
// (5 rows of 49 under 16 vectors; 196 columns one row a period).
TEST(JitPlan, SmallMapsReduceChannelsByAPeriod) {
    if (max_isa() == isa_t::none) GTEST_SKIP() << "no JIT ISA";
    const bool z = max_isa() == isa_t::avx512_core;
    const plan seven = plan_on_two(make_problem(data_type::bf16, {4, 2048, 7, 7}, 0b1010));
    ASSERT_TRUE(seven.slab_code);
    EXPECT_EQ(seven.period, z ? 128 * 49 : 0);  // whole lines, the most rows: 12.25 KiB
    const plan fourteen = plan_on_two(make_problem(data_type::f32, {4, 512, 14, 14}, 0b1010));
    ASSERT_TRUE(fourteen.slab_code);
    EXPECT_EQ(fourteen.period, z ? 16 * 196 : 0);
    // 5 x 3 maps: lcm(15, 16) = 240 columns; AVX2's lcm(15, 8) = 120
    // passes its 8 vectors.
    EXPECT_EQ(
            plan_on_two(make_problem(data_type::f32, {5, 400, 5, 3}, 0b1010)).period, z ? 240 : 0);
}

} // namespace
} // namespace crest::impl::jit::test
