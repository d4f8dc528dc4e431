// The f32 fixed blocks of 9-15 columns on AVX-512 called directly
// (gen_vertical_fixed_lines.cpp): calls with dense rows and slices from a
// src that reaches a line take groups of slices as aligned lines folded
// into one period; the slices before the first line, after the last
// group, and every slice of the other calls go one at a time. Each call
// here is checked against the values, whatever path took it.
#include <numeric>
#include <utility>

#include "backend/jit/kernel_cache.hpp"
#include "backend/jit/plan.hpp"
#include "jit_direct_util.hpp"

namespace crest::impl::jit::test {
namespace {

struct lines_case {
    int rows, cols;
    int src_offset;   // bytes past a line
    int64_t n_outer;
    int row_pad;      // elements between rows beyond the columns
    int slice_pad;    // elements between slices beyond the rows
    bool accumulate;
    int64_t nan_slice;  // -1: none
    int nan_at;         // element of that slice
};

std::string describe(const lines_case &c) {
    return std::to_string(c.rows) + "x" + std::to_string(c.cols) + " src_offset="
            + std::to_string(c.src_offset) + " n_outer=" + std::to_string(c.n_outer)
            + " row_pad=" + std::to_string(c.row_pad) + " slice_pad="
            + std::to_string(c.slice_pad) + " accumulate=" + std::to_string(c.accumulate)
            + " nan_slice=" + std::to_string(c.nan_slice) + " nan_at=" + std::to_string(c.nan_at);
}

// The kernel of the fixed block rows x cols: the config a plan makes for
// NCHW 14x14 maps reducing H, with the block changed.
std::shared_ptr<const generated_code> block_code(int rows, int cols) {
    plan P;
    EXPECT_TRUE(make_plan(make_problem(data_type::f32, {2, 64, 14, 14}, 0b0100),
            isa_t::avx512_core, 2, &P, nullptr));
    EXPECT_TRUE(P.code);
    if (!P.code) return nullptr;
    kernel_config cfg = P.code->cfg;
    EXPECT_EQ(std::make_pair(cfg.block_rows, cfg.block_cols), std::make_pair(14, 14));
    cfg.block_rows = rows;
    cfg.block_cols = cols;
    return get_code(cfg);
}

void run(const lines_case &c, uint32_t seed) {
    SCOPED_TRACE(describe(c));
    const auto code = block_code(c.rows, c.cols);
    ASSERT_TRUE(code);
    const int64_t rs = c.cols + c.row_pad, slice = c.rows * rs + c.slice_pad;
    const int64_t n_src = c.n_outer * slice;
    guarded src_buf(size_t(n_src) * 4 + 64 + c.src_offset), dst(size_t(c.n_outer * c.cols) * 4);
    uint8_t *const src = past_line(src_buf.data(), c.src_offset);
    std::mt19937 rng(seed);
    // The whole buffer random, so that the lines read around the slices
    // hold values larger than theirs (never to be taken); ties and zeros
    // of both signs among them.
    for (size_t i = 0; i + 4 <= src_buf.size(); i += 4)
        put(src_buf.data() + i, 0, data_type::f32,
                random_bits(data_type::f32, rng, rng() % 2 == 0));
    for (int64_t i = 0; i < n_src; i += rs)  // padding between rows: huge
        for (int64_t p = c.cols; p < rs; ++p) put(src, i + p, data_type::f32, 0x7f000000u);
    if (c.nan_slice >= 0)
        put(src, c.nan_slice * slice + c.nan_at, data_type::f32, qnan_bits(data_type::f32));
    for (int64_t i = 0; i < c.n_outer * c.cols; ++i)
        put(dst.data(), i, data_type::f32, random_bits(data_type::f32, rng, true));
    std::vector<uint32_t> want(size_t(c.n_outer * c.cols));
    for (int64_t o = 0; o < c.n_outer; ++o)
        for (int64_t j = 0; j < c.cols; ++j)
            want[size_t(o * c.cols + j)] = expected(src + (o * slice + j) * 4, c.rows, rs,
                    dst.data() + (o * c.cols + j) * 4, c.accumulate, data_type::f32);
    const vert_call a {src, dst.data(), c.cols, c.rows, rs * 4, c.accumulate, c.n_outer,
            slice * 4, int64_t(c.cols) * 4, nullptr, nullptr, 1, 0};
    code->fn(&a);
    for (int64_t i = 0; i < c.n_outer * c.cols; ++i)
        expect_same(get(dst.data(), i, data_type::f32), want[size_t(i)], data_type::f32, i);
    EXPECT_TRUE(src_buf.guards_ok());
    EXPECT_TRUE(dst.guards_ok());
}

// Blocks of 10, 12 and 14 columns with rows enough for a period and two
// lines (fixed blocks have at most 16 rows), and of 9, 11, 13 and 15
// columns, which have too few (every slice one at a time);
// a src on a line and 1-3 slices before one (4-byte steps of 16), and
// off the lines the slices reach (no groups); calls of fewer slices than
// two groups, two groups and the slices around them; fresh and
// accumulating.
TEST(JitFixedLines, EveryPhaseAndTheSlicesAround) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    const std::vector<std::pair<int, int>> blocks {
            {14, 14}, {11, 14}, {16, 14}, {12, 10}, {16, 10}, {7, 12}, {16, 12},
            {16, 9}, {16, 11}, {16, 13}, {16, 15}};
    uint32_t seed = 4100;
    for (auto [rows, cols] : blocks) {
        const int g = 16 / std::gcd(rows * cols, 16);
        for (int offset : {0, 4, 8, 16, 32, 48, 60})
            for (int64_t n : {int64_t(1), int64_t(2 * g - 1), int64_t(2 * g), int64_t(2 * g + 1),
                         int64_t(5 * g + 3)})
                for (bool acc : {false, true})
                    run({rows, cols, offset, n, 0, 0, acc, -1, 0}, ++seed);
    }
}

// Rows or slices apart by more than their elements: one slice at a time.
TEST(JitFixedLines, PaddedRowsOrSlices) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 4200;
    for (auto [row_pad, slice_pad] : {std::make_pair(1, 0), std::make_pair(0, 4),
                 std::make_pair(0, 16), std::make_pair(2, 3)})
        for (bool acc : {false, true})
            run({14, 14, 0, 37, row_pad, slice_pad, acc, -1, 0}, ++seed);
}

// A NaN anywhere in a grouped slice, or in one before or after the
// groups, sends the call to the general loop: the NaN's column gets it,
// the others their max, accumulating or not.
TEST(JitFixedLines, NaNInAnySlice) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 4300;
    const int rows = 14, cols = 14;
    for (int offset : {0, 16})
        for (int64_t nan_slice : {0, 1, 5, 9, 12})
            for (int at : {0, 13, 14, 100, rows * cols - 1})
                for (bool acc : {false, true})
                    run({rows, cols, offset, 13, 0, 0, acc, nan_slice, at}, ++seed);
}

} // namespace
} // namespace crest::impl::jit::test
