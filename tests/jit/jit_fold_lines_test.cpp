// The register columns with kernel_config::fold_cols called directly
// (gen_vertical_lines.cpp): slices of dense rows that split lines, whole
// lines from a line, read as lines folded into one period. Calls it does
// not take (src off a line, padded rows or slices, too few rows) go
// through the general loop. Each call is checked against the values,
// whatever path took it; the plans that set fold_cols are checked too.
#include <utility>

#include "backend/jit/kernel_cache.hpp"
#include "backend/jit/plan.hpp"
#include "jit_direct_util.hpp"

namespace crest::impl::jit::test {
namespace {

struct fold_case {
    int rows, cols;
    int64_t n_outer;
    int src_offset;  // bytes past a line
    int row_pad;     // elements between rows beyond the columns
    bool accumulate;
    int64_t nan_slice;  // -1: none
    int nan_at;         // element of that slice
    bool negative;      // every value negative (16-bit: the unsigned min)
};

std::string describe(const fold_case &c) {
    return std::to_string(c.rows) + "x" + std::to_string(c.cols) + " n_outer="
            + std::to_string(c.n_outer) + " src_offset=" + std::to_string(c.src_offset)
            + " row_pad=" + std::to_string(c.row_pad) + " accumulate="
            + std::to_string(c.accumulate) + " nan_slice=" + std::to_string(c.nan_slice)
            + " nan_at=" + std::to_string(c.nan_at) + " negative=" + std::to_string(c.negative);
}

class JitFoldLines : public ::testing::TestWithParam<data_type> {
protected:
    data_type dt() const { return GetParam(); }

    // The kernel the plan of n dense slices rows x cols (reducing the
    // rows) makes on AVX-512, with fold_cols as the plan set it.
    std::shared_ptr<const generated_code> code_for(int rows, int cols) {
        plan P;
        EXPECT_TRUE(make_plan(make_problem(dt(), {4, rows, cols}, 0b010), isa_t::avx512_core, 2,
                &P, nullptr));
        return P.code;
    }

    void run(const fold_case &c, uint32_t seed) {
        SCOPED_TRACE(describe(c));
        const auto code = code_for(c.rows, c.cols);
        ASSERT_TRUE(code);
        ASSERT_EQ(code->cfg.fold_cols, c.cols);
        const size_t es = esize(dt());
        const int64_t rs = c.cols + c.row_pad, slice = c.rows * rs, n_src = c.n_outer * slice;
        guarded src_buf(size_t(n_src) * es + 64 + c.src_offset);
        guarded dst(size_t(c.n_outer * c.cols) * es);
        uint8_t *const src = past_line(src_buf.data(), c.src_offset);
        std::mt19937 rng(seed);
        const uint32_t sign = c.negative ? (dt() == data_type::f32 ? 0x80000000u : 0x8000u) : 0;
        for (int64_t i = 0; i < n_src; ++i)
            put(src, i, dt(), random_bits(dt(), rng, rng() % 4 == 0) | sign);
        for (int64_t i = 0; i < n_src; i += rs)  // padding between rows: huge
            for (int64_t p = c.cols; p < rs; ++p)
                put(src, i + p, dt(), dt() == data_type::f32 ? 0x7f000000u : 0x7f00u);
        if (c.nan_slice >= 0)
            put(src, c.nan_slice * slice + c.nan_at, dt(),
                    c.nan_at % 2 ? negative_nan(dt()) : qnan_bits(dt()));
        for (int64_t i = 0; i < c.n_outer * c.cols; ++i)
            put(dst.data(), i, dt(), random_bits(dt(), rng, false) | sign);
        std::vector<uint32_t> want(size_t(c.n_outer * c.cols));
        for (int64_t o = 0; o < c.n_outer; ++o)
            for (int64_t j = 0; j < c.cols; ++j)
                want[size_t(o * c.cols + j)] = expected(src + (o * slice + j) * es, c.rows, rs,
                        dst.data() + (o * c.cols + j) * es, c.accumulate, dt());
        const vert_call a {src, dst.data(), c.cols, c.rows, int64_t(rs * es), c.accumulate,
                c.n_outer, int64_t(slice * es), int64_t(c.cols * es), nullptr, nullptr, 1, 0};
        code->fn(&a);
        for (int64_t i = 0; i < c.n_outer * c.cols; ++i)
            expect_same(get(dst.data(), i, dt()), want[size_t(i)], dt(), i);
        EXPECT_TRUE(src_buf.guards_ok());
        EXPECT_TRUE(dst.guards_ok());
    }

    // Column counts whose rows split lines (more than 16 rows: fewer take
    // the fixed blocks). Odd counts shift rows by odd numbers of elements
    // (16-bit: not whole dwords). The last ones' slices are no whole
    // number of lines: each slice ends in a part vector, and the slices
    // after the first start off a line.
    std::vector<std::pair<int, int>> blocks() const {
        if (dt() == data_type::f32)
            return {{56, 56}, {20, 28}, {32, 28}, {24, 40}, {32, 20}, {20, 60}, {32, 44},
                    {32, 3}, {48, 7}, {32, 13}, {100, 3}, {17, 7}, {33, 13}, {21, 28}};
        return {{56, 56}, {32, 28}, {32, 40}, {32, 24}, {32, 20}, {32, 48}, {20, 80},
                {64, 3}, {32, 5}, {96, 7}, {64, 9}, {100, 3}, {33, 5}, {45, 7}, {40, 9},
                {33, 28}};
    }
};

// Every block the plans fold, from a line, one slice to several, fresh
// and accumulating, values of both signs and all negative.
TEST_P(JitFoldLines, SlicesFromALine) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 5100;
    for (auto [rows, cols] : blocks())
        for (int64_t n : {1, 2, 5})
            for (bool acc : {false, true})
                for (bool neg : {false, true})
                    run({rows, cols, n, 0, 0, acc, -1, 0, neg}, ++seed);
}

// Calls off a line (the fold's split loads), and rows padded (the general
// loop).
TEST_P(JitFoldLines, CallsOffALineAndPaddedRows) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 5200;
    for (auto [rows, cols] : blocks()) {
        for (int offset : {4, 32})
            for (bool acc : {false, true})
                run({rows, cols, 3, offset, 0, acc, -1, 0, false}, ++seed);
        run({rows, cols, 3, 0, 1, false, -1, 0, false}, ++seed);
    }
}

// A NaN (either sign) at the first, a middle or the last element of a
// slice: its column gets it.
TEST_P(JitFoldLines, NaNAnywhere) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 5300;
    for (auto [rows, cols] : blocks())
        for (int64_t nan_slice : {0, 2})
            for (int at : {0, cols + 3, rows * cols / 2 + 1, rows * cols - 1})
                for (bool acc : {false, true})
                    run({rows, cols, 3, 0, 0, acc, nan_slice, at, false}, ++seed);
}

// The last slice's part vector against a page nothing follows: its lanes
// past src are neither read nor faulted on (the plan's kernel, whole).
TEST_P(JitFoldLines, PartVectorAtPageEnd) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 5400;
    for (auto [rows, cols] : blocks()) {
        ASSERT_EQ(code_for(rows, cols)->cfg.fold_cols, cols);
        check_at_page_end(make_problem(dt(), {7, rows, cols}, 0b010), ++seed);
    }
}

// Rows that never split a line, or whose period needs more registers
// than there are, keep the general loop.
TEST_P(JitFoldLines, PlansFoldOnlyRowsThatSplitLines) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    for (int cols : {16, 32, 64, 128}) EXPECT_EQ(code_for(32, cols)->cfg.fold_cols, 0) << cols;
    if (dt() == data_type::f32) EXPECT_EQ(code_for(32, 116)->cfg.fold_cols, 0);  // 29 lines
    else EXPECT_EQ(code_for(32, 120)->cfg.fold_cols, 0);  // 15 lines a period, 3 statistics
}

INSTANTIATE_TEST_SUITE_P(All, JitFoldLines,
        ::testing::Values(data_type::f32, data_type::bf16, data_type::f16),
        dt_name);

} // namespace
} // namespace crest::impl::jit::test
