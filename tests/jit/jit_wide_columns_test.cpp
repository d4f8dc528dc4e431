// Vertical rows of 257-512 columns (f32 800) one after another (AVX-512): register columns a whole row wide (plan::wide_code,
// gen_vertical_reg_wide.cpp), which hand the slices from a NaN (f32) or
// a lane of negatives only (16-bit) on to the chunks, against the ref
// oracle.
#include "tests/jit/jit_reduce_fixture.hpp"

#include "backend/jit/outer_first.hpp"

namespace crest::impl::jit::test {
namespace {

// Column counts around each vector count's ends (f32: 17-32 vectors of
// 16, then spilling up to 50; 16-bit: 9-16 of 32, at 16 both
// statistics from memory) and past them; one row, few, many; NaN of
// either sign in a later slice (the slices before it stay the kernel's), in the last
// column (the masked vector) and in the first row; negative data (with
// an extra reduced dim, and with a NaN of either sign later on: 16-bit's
// signed max and unsigned min), and one column of negatives only; an extra reduced dim (accumulating calls)
// with a NaN in its second index; two threads' chunks across a slice,
// and across the rows of one slice; src ending at a page's end.
TEST_P(JitReduce, WideColumns) {
    const std::vector<uint32_t> nans = dt() == data_type::f32
            ? std::vector<uint32_t> {0x7fc00000u, 0xffc00000u}
            : dt() == data_type::bf16 ? std::vector<uint32_t> {0x7fc0u, 0xffc0u}
                                      : std::vector<uint32_t> {0x7e00u, 0xfe00u};
    const thread_pool one(1);
    std::vector<int64_t> cols {257, 287, 288, 289, 300, 320, 352, 400, 416, 447, 448, 449, 497,
            511, 512, 513};
    if (dt() == data_type::f32)
        for (int64_t c : {529, 600, 784, 799, 800, 801}) cols.push_back(c);
    for (int64_t c : cols) {
        for (int64_t r : {1, 2, 7, 300}) run(make_problem(dt(), {6, r, c}, 2));
        check(make_problem(dt(), {5, 300, c}, 2), {}, one, seed_++);
        const size_t slice = size_t(40 * c);
        for (uint32_t bits : nans) {
            planting pl;
            pl.nan_bits = bits;
            pl.nan_at = {3 * slice + 17 * size_t(c) + 5};
            run(make_problem(dt(), {6, 40, c}, 2), pl);
            pl.nan_at = {5 * slice + size_t(c) - 1};
            run(make_problem(dt(), {6, 40, c}, 2), pl);
            pl.nan_at = {2 * slice + size_t(c) / 2};
            run(make_problem(dt(), {6, 40, c}, 2), pl);
        }
        planting neg;
        neg.negative = true;
        run(make_problem(dt(), {6, 40, c}, 2), neg);
        run(make_problem(dt(), {3, 3, 40, c}, 0b0101), neg);
        // 16-bit: after negatives only, a NaN of either sign in a later
        // slice.
        for (uint32_t bits : nans) {
            neg.nan_bits = bits;
            neg.nan_at = {4 * slice + 9 * size_t(c) + 1};
            run(make_problem(dt(), {6, 40, c}, 2), neg);
        }
        planting col;
        const uint32_t minus_one = dt() == data_type::f32 ? 0xbf800000u
                : dt() == data_type::bf16                 ? 0xbf80u
                                                          : 0xbc00u;
        for (size_t row = 0; row < 40; ++row)
            col.bits_at.push_back({4 * slice + row * size_t(c) + size_t(c) - 2, minus_one});
        run(make_problem(dt(), {6, 40, c}, 2), col);
        planting acc;
        acc.nan_at = {size_t(3 * 40 * c) + 3 * size_t(c) + 7};
        run(make_problem(dt(), {3, 3, 40, c}, 0b0101));
        run(make_problem(dt(), {3, 3, 40, c}, 0b0101), acc);
        run(make_problem(dt(), {3, 40, c}, 2));  // 3 slices on 2 threads
        // One slice of many rows: two threads' row ranges (two-level).
        run(make_problem(dt(), {3000, c}, 1));
        run(make_problem(dt(), {3000, c}, 1), {{size_t(2500 * c + 3)}, false});
        check_at_page_end(make_problem(dt(), {4, 40, c}, 2), seed_++);
    }
}

// Which plans take them: AVX-512, rows of 257-512 columns (f32 800) one
// after another; not rows padded.
TEST(JitPlan, WideColumns) {
    const bool z = max_isa() == isa_t::avx512_core;
    for (data_type dt : {data_type::f32, data_type::bf16}) {
        const plan P = plan_on_two(make_problem(dt, {64, 512, 400}, 2));
        EXPECT_EQ(bool(P.wide_code), z);
        if (z) {
            EXPECT_EQ(P.wide_code->cfg.unroll, 25);
        }
        EXPECT_EQ(bool(plan_on_two(make_problem(dt, {64, 512, 257}, 2)).wide_code), z);
        EXPECT_EQ(bool(plan_on_two(make_problem(dt, {64, 512, 449}, 2)).wide_code), z);
        EXPECT_EQ(bool(plan_on_two(make_problem(dt, {64, 512, 512}, 2)).wide_code), z);
        // f32 up to 800 (spilling past 512), 16-bit up to 512.
        const bool f32 = dt == data_type::f32;
        EXPECT_EQ(bool(plan_on_two(make_problem(dt, {64, 512, 513}, 2)).wide_code), z && f32);
        EXPECT_EQ(bool(plan_on_two(make_problem(dt, {8, 512, 800}, 2)).wide_code), z && f32);
        EXPECT_FALSE(plan_on_two(make_problem(dt, {8, 512, 801}, 2)).wide_code);
        EXPECT_FALSE(plan_on_two(make_problem(dt, {64, 512, 256}, 2)).wide_code);
        EXPECT_FALSE(
                plan_on_two(make_problem(dt, {512, 400}, 1, {401, 1}, {})).wide_code);
    }
    EXPECT_FALSE(plan_on_two(make_problem(data_type::f32, {64, 512, 400}, 2), isa_t::avx2)
                         .wide_code);
}

// NCHW reducing C and W: the two stages where the outer one keeps a
// block's row of 256-448 elements (f32 576) in registers (AVX-512), the
// one stage's slabs at 14x14 and 28x28 maps.
TEST(JitPlan, OuterFirstOverRowsInRegisters) {
    const bool z = max_isa() == isa_t::avx512_core;
    for (int64_t hw : {14, 16, 20, 21, 22, 24, 28}) {
        for (data_type dt : {data_type::bf16, data_type::f32}) {
            const reduce_problem p = make_problem(dt, {64, 512, hw, hw}, 0b1010);
            outer_first_split s;
            ASSERT_TRUE(split_outer_first(p, &s));
            const int64_t widest = dt == data_type::f32 ? 24 : 21;
            EXPECT_EQ(outer_first_preferred(plan_on_two(p), s), z && hw >= 16 && hw <= widest)
                    << hw;
        }
    }
}

} // namespace
} // namespace crest::impl::jit::test
