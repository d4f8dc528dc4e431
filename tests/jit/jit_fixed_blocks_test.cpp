// Register columns over slices of a fixed block (kernel_config::block_rows,
// gen_vertical_fixed.cpp): NCHW reducing H of small maps and their kin,
// against the ref oracle, and the plans that choose them.
#include "tests/jit/jit_reduce_fixture.hpp"

namespace crest::impl::jit::test {
namespace {

// Slices of 2-16 rows of 1 column to 2 KiB (xmm, ymm, zmm, up to 8 zmm,
// a masked last vector or none; 16-bit past 512 bytes in groups of 8
// zmm), then 17 rows (the general loop).
// Each: random data; NaN of either sign in the last slice's last row and
// column, and in a row before the last (whose vectors read past their
// columns into the next row); a NaN in the column just past a slice's
// columns of a padded row (read as junk, never an answer); negative data
// (the unsigned min); an extra reduced dim (calls that accumulate, the
// general loop); padded rows and slices; two threads' chunks.
TEST_P(JitReduce, FixedBlocks) {
    const size_t es = esize(dt());
    const uint32_t neg_nan = dt() == data_type::f32    ? 0xffc00001u
                             : dt() == data_type::bf16 ? 0xffc1u
                                                       : 0xfe01u;
    const uint32_t pos_nan = qnan_bits(dt());
    for (int64_t r : {2, 3, 4, 5, 7, 8, 9, 12, 13, 16, 17}) {
        for (int64_t c : {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 128, 129,
                     255, 256, 257, 300, 511, 512, 513, 1000}) {
            // 16-bit past 256 columns: the tiles' fixed_code (groups of 8
            // vectors and the rest).
            if (c * int64_t(es) > 2048) continue;
            const int64_t n = 37;
            const size_t total = size_t(n * r * c);
            run(make_problem(dt(), {n, r, c}, 0b010));
            for (uint32_t nan : {pos_nan, neg_nan}) {
                run(make_problem(dt(), {n, r, c}, 0b010), {{total - 1}, false, nan});
                run(make_problem(dt(), {n, r, c}, 0b010),
                        {{size_t(5 * r * c + c / 2)}, false, nan});
            }
            // A NaN in the padding after each row's columns (but the
            // last, past src): src holds it, the problem does not.
            std::vector<size_t> pads;
            for (int64_t i = 0; i + 1 < n * r; ++i) pads.push_back(size_t(i * (c + 1) + c));
            run(make_problem(dt(), {n, r, c}, 0b010, {r * (c + 1), c + 1, 1}, {}), {pads, false});
            planting neg;
            neg.negative = true;
            run(make_problem(dt(), {n, r, c}, 0b010), neg);
            run(make_problem(dt(), {3, n, r, c}, 0b0101));
            run(make_problem(dt(), {n, r, c}, 0b010, {r * c + 5, c, 1}, {}));
        }
    }
    // Large enough for the thread split (and a NaN in the second chunk).
    run(make_problem(dt(), {4000, 7, 7}, 0b010));
    run(make_problem(dt(), {4000, 7, 7}, 0b010), {{size_t(3000 * 49 + 20)}, false});
}

// Fixed blocks that accumulate (an extra reduced dim's later indices:
// NCHW reducing N and H): f32 on both ISAs and AVX-512's 16-bit take dst
// as one more row, AVX2's 16-bit and the packed slices the general loop.
// NaN of either sign in the first index only (dst holds it when the
// second accumulates) and in the last only; infinities; outputs whose
// later index holds their max; negative data; from half the L3 (the
// staged dst, which accumulating calls bypass); two threads.
TEST_P(JitReduce, FixedBlocksAccumulate) {
    const uint32_t neg_nan = dt() == data_type::f32    ? 0xffc00001u
                             : dt() == data_type::bf16 ? 0xffc1u
                                                       : 0xfe01u;
    const uint32_t pos_nan = qnan_bits(dt());
    const uint32_t big = dt() == data_type::f32 ? 0x49742400u  // 1e6
            : dt() == data_type::bf16 ? 0x4974u : 0x7bffu;
    for (int64_t r : {2, 7, 14, 16})
        for (int64_t c : {3, 7, 14, 16, 28, 56, 100}) {
            const int64_t n = 40;
            for (int64_t batch : {2, 3}) {
                const reduce_problem p = make_problem(dt(), {batch, n, r, c}, 0b0101);
                const size_t slice = size_t(r * c), image = size_t(n) * slice;
                const size_t last = size_t(batch - 1) * image;
                run(p);
                for (uint32_t nan : {pos_nan, neg_nan}) {
                    run(p, {{size_t(3) * slice + size_t(c / 2)}, false, nan});
                    run(p, {{last + size_t(30) * slice + slice - 1}, false, nan});
                }
                planting neg;
                neg.negative = true;
                for (size_t o : {0, 17, 39})
                    neg.bits_at.push_back({last + o * slice + size_t(c - 1), big});
                neg.bits_at.push_back({size_t(9) * slice, inf_bits(dt(), false)});
                neg.bits_at.push_back({last + size_t(9) * slice + 1, inf_bits(dt(), true)});
                run(p, neg);
            }
        }
    run(make_problem(dt(), {2, 4000, 7, 7}, 0b0101), {{size_t(200000)}, false});
    const int64_t half_l3 = dt() == data_type::f32 ? 65536 : 131072;  // 25.7 MB
    run(make_problem(dt(), {2, half_l3, 7, 7}, 0b0101));
}

// A slice's last row reads its last vector under the tail mask, shifted
// or in pieces (AVX2 16-bit): the block that ends src can end at a page
// nothing follows.
TEST_P(JitReduce, RegisterColumnsEndAtAPage) {
    // Rows x columns: 7 rows of several widths, and small blocks (16-bit
    // rows of 3 columns or fewer are masked in every row: a whole xmm
    // from the second-to-last row of a 5x3 block ends past the slice);
    // past 16 rows the general loop.
    const std::vector<std::pair<int64_t, int64_t>> blocks{{7, 1}, {7, 5}, {7, 7}, {7, 9}, {7, 17},
            {7, 33}, {7, 300}, {7, 1001}, {3, 5}, {2, 9}, {4, 7}, {5, 3}, {40, 5}, {20, 12},
            {33, 17}, {17, 60}, {25, 31}};
    for (auto [r, c] : blocks)
        check_at_page_end(make_problem(dt(), {50, r, c}, 0b010), uint32_t(r * 1000 + c));
}

// AVX-512 unrolls slices of 2-16 rows of at most 512 bytes whose rows lie
// at least a row's columns apart; AVX2 those of f32 (up to 8 vectors) and
// of 16-bit rows of 4 columns or more (no masked word loads); longer
// slices and wider rows keep the general loop.
TEST(JitPlan, FixedBlocksForFewRowsAndColumns) {
    if (max_isa() == isa_t::none) GTEST_SKIP() << "no JIT ISA";
    const bool z = max_isa() == isa_t::avx512_core;
    auto block = [](const plan &P) {
        return P.code ? std::make_pair(P.code->cfg.block_rows, P.code->cfg.block_cols)
                      : std::make_pair(-1, -1);
    };
    using rc = std::pair<int, int>;
    EXPECT_EQ(
            block(plan_on_two(make_problem(data_type::bf16, {64, 2048, 7, 7}, 0b0100))), rc(7, 7));
    // AVX2 16-bit: register columns of up to 64 (4 or more), else a tile
    // whose fixed_code takes the whole slices up to 512 bytes; not under
    // 4 columns.
    if (!z) {
        EXPECT_EQ(block(plan_on_two(make_problem(data_type::f16, {64, 512, 16, 16}, 0b0100))),
                rc(16, 16));
        const plan t100 = plan_on_two(make_problem(data_type::bf16, {64, 256, 7, 100}, 0b0100));
        ASSERT_TRUE(t100.fixed_code);
        EXPECT_EQ(std::make_pair(t100.fixed_code->cfg.block_rows, t100.fixed_code->cfg.block_cols),
                rc(7, 100));
        EXPECT_EQ(block(plan_on_two(make_problem(data_type::bf16, {64, 2048, 7, 3}, 0b0100))),
                rc(0, 0));
        EXPECT_FALSE(
                plan_on_two(make_problem(data_type::bf16, {64, 2048, 7, 3}, 0b0100)).fixed_code);
    }
    // Rows of 8-16 bytes, several slices a call: two slices a ymm, the
    // plan's strides in the code, prefetching from half the L3 on.
    auto packed = [](const plan &P) {
        const auto &c = P.fixed_code ? P.fixed_code->cfg : P.code->cfg;
        return std::make_tuple(c.block_row_stride, c.block_slice_stride, c.prefetch);
    };
    EXPECT_EQ(packed(plan_on_two(make_problem(data_type::bf16, {64, 2048, 7, 7}, 0b0100))),
            std::make_tuple(14, 98, false));
    EXPECT_EQ(packed(plan_on_two(make_problem(data_type::f32, {64, 2048, 3, 3}, 0b0100))),
            std::make_tuple(12, 36, false));
    EXPECT_EQ(std::get<0>(
                      packed(plan_on_two(make_problem(data_type::f32, {64, 2048, 7, 7}, 0b0100)))),
            0);
    const int64_t l3_half = planned_l3_bytes() / 2;
    const int64_t n_big = l3_half / (2048 * 49 * 2) + 1;
    EXPECT_EQ(packed(plan_on_two(make_problem(data_type::f16, {n_big, 2048, 7, 7}, 0b0100))),
            std::make_tuple(14, 98, true));
    // From half the L3 on, the fixed blocks stage their dst (stream_dst,
    // packed or not); below it they store it.
    auto streams = [](const plan &P) {
        return (P.fixed_code ? P.fixed_code->cfg : P.code->cfg).stream_dst;
    };
    EXPECT_TRUE(streams(plan_on_two(make_problem(data_type::f16, {n_big, 2048, 7, 7}, 0b0100))));
    EXPECT_TRUE(streams(plan_on_two(make_problem(data_type::f32, {n_big, 2048, 7, 7}, 0b0100))));
    EXPECT_FALSE(streams(plan_on_two(make_problem(data_type::bf16, {64, 2048, 7, 7}, 0b0100))));
    // A staged dst's threads start on a line (lcm(a slice's dst bytes, 64)
    // apart: 16 slices of 7 f32 columns), an odd slice count too; the
    // stores as they go on whole slices.
    const plan odd = plan_on_two(make_problem(data_type::f32, {n_big, 2047, 7, 7}, 0b0100));
    EXPECT_TRUE(streams(odd));
    EXPECT_EQ(odd.out_align, 112);
    EXPECT_EQ(plan_on_two(make_problem(data_type::f32, {4, 2047, 7, 7}, 0b0100)).out_align, 7);
    // AVX2 f32: up to 8 vectors (the masked one by vmaskmovps).
    EXPECT_EQ(block(plan_on_two(make_problem(data_type::f32, {64, 512, 14, 14}, 0b0100))),
            rc(14, 14));
    EXPECT_EQ(block(plan_on_two(make_problem(data_type::f32, {64, 2048, 7, 7}, 0b0100))), rc(7, 7));
    EXPECT_EQ(block(plan_on_two(make_problem(data_type::f32, {64, 512, 16, 128}, 0b0100))),
            z ? rc(16, 128) : rc(0, 0));
    EXPECT_EQ(
            block(plan_on_two(make_problem(data_type::f32, {64, 128, 28, 28}, 0b0100))), rc(0, 0));
    EXPECT_EQ(
            block(plan_on_two(make_problem(data_type::f32, {64, 512, 16, 129}, 0b0100))).first, 0);
    EXPECT_EQ(block(plan_on_two(make_problem(data_type::bf16, {64, 512, 16, 256}, 0b0100))),
            z ? rc(16, 256) : rc(0, 0));
    // 16-bit tiles of 2-16 rows: fixed_code beside the tile (whole fresh
    // slices); f32 tiles keep to themselves.
    const dims_t nhwc {64, 512, 14, 14};
    const dims_t ss = permuted(nhwc, {0, 2, 3, 1});
    dims_t ds = permuted({64, 512, 14, 1}, {0, 2, 3, 1});
    ds[3] = 0;
    const plan w16 = plan_on_two(make_problem(data_type::f16, nhwc, 0b1000, ss, ds));
    EXPECT_EQ(bool(w16.fixed_code), z);
    if (z) {
        EXPECT_EQ(w16.code->cfg.family, family_t::vert_tile);
        EXPECT_EQ(std::make_pair(w16.fixed_code->cfg.block_rows, w16.fixed_code->cfg.block_cols),
                rc(14, 512));
    }
    EXPECT_FALSE(plan_on_two(make_problem(data_type::f32, nhwc, 0b1000, ss, ds)).fixed_code);
    // From half the L3 on the tiles alone (they prefetch): 128 MiB.
    const dims_t big {4096, 512, 14, 14};
    dims_t big_ds = permuted({4096, 512, 14, 1}, {0, 2, 3, 1});
    big_ds[3] = 0;
    const int64_t l3 = planned_l3_bytes();
    const bool below_half = int64_t(4096) * 512 * 14 * 14 * 2 < l3 / 2;
    EXPECT_EQ(bool(plan_on_two(make_problem(data_type::f16, big, 0b1000,
                                       permuted(big, {0, 2, 3, 1}), big_ds))
                              .fixed_code),
            z && below_half);
    EXPECT_FALSE(plan_on_two(make_problem(data_type::bf16, {64, 17, 512}, 0b010)).fixed_code);
}

} // namespace
} // namespace crest::impl::jit::test
