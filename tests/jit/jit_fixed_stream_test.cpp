// The fixed blocks (NCHW reducing H of small maps) called directly with
// kernel_config::stream_dst: calls whose dst is dense and on a line go a
// stage of slices at a time through the stack to non-temporal stores
// (gen_vertical_fixed_slices.cpp, fixed_staged); the others, and the
// slices past the last whole stage, as before. Plans reach it only from half the L3's
// size.
#include <algorithm>
#include <numeric>
#include <utility>

#include "backend/jit/generators.hpp"
#include "backend/jit/kernel_cache.hpp"
#include "backend/jit/plan.hpp"
#include "jit_direct_util.hpp"

namespace crest::impl::jit::test {
namespace {

class JitFixedStream : public isa_dt_test {
protected:
    // n_outer dense slices of rows x cols, by the kernel a plan makes for
    // them on this ISA (two slices a ymm where rows are 8-16 bytes), with
    // stream_dst; dst at dst_offset bytes past a line, slices dst_pad
    // elements apart beyond their columns. nan_slice >= 0: that slice's
    // last element gets a NaN (f32 positive, 16-bit negative).
    void run(int rows, int cols, int64_t n_outer, int dst_offset, int dst_pad,
            int64_t nan_slice, uint32_t seed) {
        SCOPED_TRACE("rows=" + std::to_string(rows) + " cols=" + std::to_string(cols)
                + " n_outer=" + std::to_string(n_outer)
                + " dst_offset=" + std::to_string(dst_offset)
                + " dst_pad=" + std::to_string(dst_pad)
                + " nan_slice=" + std::to_string(nan_slice));
        const size_t es = esize(dt());
        const int64_t slice = int64_t(rows) * cols, dst_stride = cols + dst_pad;
        plan P;
        const dims_t dims {std::max<int64_t>(n_outer, 2), rows, cols};
        ASSERT_TRUE(make_plan(make_problem(dt(), dims, 0b010), isa(), 2, &P, nullptr));
        ASSERT_TRUE(P.code);
        kernel_config cfg = P.code->cfg;
        ASSERT_EQ(cfg.block_rows, rows);  // the fixed blocks
        cfg.stream_dst = true;
        const auto code = get_code(cfg);
        guarded src(size_t(n_outer * slice) * es), dst_buf(size_t(n_outer * dst_stride) * es + 128);
        uint8_t *const dst = past_line(dst_buf.data(), dst_offset);
        std::mt19937 rng(seed);
        for (int64_t i = 0; i < n_outer * slice; ++i)
            put(src.data(), i, dt(), random_bits(dt(), rng, false));
        if (nan_slice >= 0)
            put(src.data(), nan_slice * slice + slice - 1, dt(),
                    dt() == data_type::f32 ? qnan_bits(dt()) : negative_nan(dt()));
        std::vector<uint32_t> want(size_t(n_outer * cols));
        for (int64_t o = 0; o < n_outer; ++o)
            for (int64_t c = 0; c < cols; ++c)
                want[size_t(o * cols + c)] = expected(
                        src.data() + (o * slice + c) * es, rows, cols, nullptr, false, dt());
        const vert_call a {src.data(), dst, cols, rows, int64_t(cols * es), false, n_outer,
                int64_t(slice * es), int64_t(dst_stride * es), nullptr, nullptr, 1, 0};
        code->fn(&a);
        for (int64_t o = 0; o < n_outer; ++o)
            for (int64_t c = 0; c < cols; ++c)
                expect_same(get(dst, o * dst_stride + c, dt()), want[size_t(o * cols + c)], dt(),
                        o * cols + c);
        EXPECT_TRUE(src.guards_ok());
        EXPECT_TRUE(dst_buf.guards_ok());
    }
};

// Every ISA. Slices of 7x7, 14x14 and 3x3 (stages of 4-32 slices), 5
// rows of 13 (832-byte stages) and 9 of 17 columns (no stage: 1088
// bytes); one slice short of a stage, a stage, a stage and one, three
// and a few; dst off a line or padded (no stage); a NaN in a staged
// slice (f32: the call redone by the general loop over what it
// streamed) and in the slices after the stages. Blocks the ISA's plans
// take no fixed blocks for (AVX2's 16-bit rows of under 4 columns) are
// left out.
TEST_P(JitFixedStream, StagesAndTheRest) {
    const std::vector<std::pair<int, int>> blocks {
            {7, 7}, {14, 14}, {3, 3}, {5, 13}, {9, 17}, {2, 5}};
    uint32_t seed = 900;
    for (auto [rows, cols] : blocks) {
        if (isa() == isa_t::avx2 && dt() != data_type::f32 && cols < 4) continue;
        const int64_t b_bytes = cols * int64_t(esize(dt()));
        const int64_t stage = b_bytes / std::gcd<int64_t>(b_bytes, 64) * 64 / b_bytes;
        for (int64_t n : {stage - 1, stage, stage + 1, 3 * stage + 5}) {
            if (n < 1) continue;
            run(rows, cols, n, 0, 0, -1, seed++);
            run(rows, cols, n, 4, 0, -1, seed++);
            run(rows, cols, n, 0, 3, -1, seed++);
            run(rows, cols, n, 0, 0, n / 2, seed++);
            run(rows, cols, n, 0, 0, n - 1, seed++);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(All, JitFixedStream, every_isa_and_dtype(), isa_dt_name);

} // namespace
} // namespace crest::impl::jit::test
