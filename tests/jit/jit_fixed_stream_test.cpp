// The fixed blocks (NCHW reducing H of small maps) called directly with
// a staged dst: with kernel_config::stream_dst, fresh calls whose dst is
// dense and on a line go a stage of slices at a time through the stack
// to non-temporal stores; f32 accumulating calls with such a dst, stream
// or not, stage their slices fresh and max the stage's lines into dst's
// (gen_vertical_fixed_slices.cpp, fixed_staged). The other calls, and
// the slices past the last whole stage, go as before. Plans stream only
// from half the L3's size; they accumulate under an extra reduced dim.
#include <algorithm>
#include <numeric>
#include <utility>

#include "backend/jit/generators.hpp"
#include "backend/jit/kernel_cache.hpp"
#include "backend/jit/plan.hpp"
#include "jit_direct_util.hpp"

namespace crest::impl::jit::test {
namespace {

struct stage_case {
    int rows, cols;
    int64_t n_outer;
    int dst_offset = 0;       // bytes past a line
    int dst_pad = 0;          // elements between a slice's outputs and the next's
    int64_t nan_slice = -1;   // that slice's last element a NaN (f32 positive, 16-bit negative)
    bool accumulate = false;  // dst holds random values to join
    int64_t nan_in_dst = -1;  // accumulating: that output of dst a negative NaN
    bool stream = true;       // kernel_config::stream_dst
};

class JitFixedStream : public isa_dt_test {
protected:
    // c.n_outer dense slices by the kernel a plan makes for them on this
    // ISA (two slices a ymm where rows are 8-16 bytes).
    void run(const stage_case &c, uint32_t seed) {
        SCOPED_TRACE("rows=" + std::to_string(c.rows) + " cols=" + std::to_string(c.cols)
                + " n_outer=" + std::to_string(c.n_outer)
                + " dst_offset=" + std::to_string(c.dst_offset)
                + " dst_pad=" + std::to_string(c.dst_pad)
                + " nan_slice=" + std::to_string(c.nan_slice)
                + " accumulate=" + std::to_string(c.accumulate)
                + " nan_in_dst=" + std::to_string(c.nan_in_dst)
                + " stream=" + std::to_string(c.stream));
        const size_t es = esize(dt());
        const int rows = c.rows, cols = c.cols;
        const int64_t n_outer = c.n_outer, slice = int64_t(rows) * cols;
        const int64_t dst_stride = cols + c.dst_pad;
        plan P;
        const dims_t dims {std::max<int64_t>(n_outer, 2), rows, cols};
        ASSERT_TRUE(make_plan(make_problem(dt(), dims, 0b010), isa(), 2, &P, nullptr));
        ASSERT_TRUE(P.code);
        kernel_config cfg = P.code->cfg;
        ASSERT_EQ(cfg.block_rows, rows);  // the fixed blocks
        cfg.stream_dst = c.stream;
        const auto code = get_code(cfg);
        guarded src(size_t(n_outer * slice) * es), dst_buf(size_t(n_outer * dst_stride) * es + 128);
        uint8_t *const dst = past_line(dst_buf.data(), c.dst_offset);
        std::mt19937 rng(seed);
        for (int64_t i = 0; i < n_outer * slice; ++i)
            put(src.data(), i, dt(), random_bits(dt(), rng, false));
        if (c.nan_slice >= 0)
            put(src.data(), c.nan_slice * slice + slice - 1, dt(),
                    dt() == data_type::f32 ? qnan_bits(dt()) : negative_nan(dt()));
        for (int64_t i = 0; i < n_outer * dst_stride; ++i)
            put(dst, i, dt(), random_bits(dt(), rng, true));
        if (c.nan_in_dst >= 0)
            put(dst, c.nan_in_dst / cols * dst_stride + c.nan_in_dst % cols, dt(),
                    negative_nan(dt()));
        std::vector<uint32_t> want(size_t(n_outer * cols));
        for (int64_t o = 0; o < n_outer; ++o)
            for (int64_t j = 0; j < cols; ++j) {
                uint8_t *const d = dst + (o * dst_stride + j) * int64_t(es);
                want[size_t(o * cols + j)] = expected(src.data() + (o * slice + j) * es, rows,
                        cols, c.accumulate ? d : nullptr, c.accumulate, dt());
            }
        // The pads between slices' outputs stay as they were.
        std::vector<uint8_t> before(dst, dst + n_outer * dst_stride * int64_t(es));
        const vert_call a {src.data(), dst, cols, rows, int64_t(cols * es), c.accumulate, n_outer,
                int64_t(slice * es), int64_t(dst_stride * es), nullptr, nullptr, 1, 0};
        code->fn(&a);
        for (int64_t o = 0; o < n_outer; ++o) {
            for (int64_t j = 0; j < cols; ++j)
                expect_same(get(dst, o * dst_stride + j, dt()), want[size_t(o * cols + j)], dt(),
                        o * cols + j);
            for (int64_t j = cols; j < dst_stride; ++j)
                ASSERT_EQ(get(dst, o * dst_stride + j, dt()),
                        get(before.data(), o * dst_stride + j, dt()))
                        << "pad " << j << " of slice " << o;
        }
        EXPECT_TRUE(src.guards_ok());
        EXPECT_TRUE(dst_buf.guards_ok());
    }

    // f(rows, cols, n) over slices of 7x7, 14x14 and 3x3 (stages of 4-32
    // slices), 5 rows of 13 (832-byte stages), 9 of 17 columns (no
    // stage: 1088 bytes) and 2 of 5, each n one slice short of a stage,
    // a stage, a stage and one, three and a few (a stage: lcm(a slice's
    // dst bytes, 64) bytes). Blocks the ISA's plans take no fixed blocks
    // for (AVX2's 16-bit rows of under 4 columns) are left out.
    template <class F>
    void each_block_and_count(const F &f) {
        const std::vector<std::pair<int, int>> blocks {
                {7, 7}, {14, 14}, {3, 3}, {5, 13}, {9, 17}, {2, 5}};
        for (auto [rows, cols] : blocks) {
            if (isa() == isa_t::avx2 && dt() != data_type::f32 && cols < 4) continue;
            const int64_t b_bytes = cols * int64_t(esize(dt()));
            const int64_t stage = b_bytes / std::gcd<int64_t>(b_bytes, 64) * 64 / b_bytes;
            for (int64_t n : {stage - 1, stage, stage + 1, 3 * stage + 5})
                if (n >= 1) f(rows, cols, n);
        }
    }
};

// Every ISA, each block and count: dst off a line or padded (no stage);
// a NaN in a staged slice (f32: the call redone by the general loop
// over what it streamed) and in the slices after the stages.
TEST_P(JitFixedStream, StagesAndTheRest) {
    uint32_t seed = 900;
    each_block_and_count([&](int rows, int cols, int64_t n) {
        run({rows, cols, n}, seed++);
        run({rows, cols, n, 4}, seed++);
        run({rows, cols, n, 0, 3}, seed++);
        run({rows, cols, n, 0, 0, n / 2}, seed++);
        run({rows, cols, n, 0, 0, n - 1}, seed++);
    });
}

// Accumulating calls of the same blocks, streamed or not: the f32 stages
// maxed into dst's lines (dst off a line or padded: as before). A NaN in
// a staged slice (f32: the call redone by the general loop over the
// joined stages), in dst at a stage's first or last output or after the
// stages: kept.
TEST_P(JitFixedStream, StagesJoinDst) {
    uint32_t seed = 1900;
    each_block_and_count([&](int rows, int cols, int64_t n) {
        const bool stream = seed % 2 == 0;
        auto acc = [&](int offset, int pad, int64_t nan_slice, int64_t nan_in_dst) {
            run({rows, cols, n, offset, pad, nan_slice, true, nan_in_dst, stream}, seed++);
        };
        acc(0, 0, -1, -1);
        acc(4, 0, -1, -1);
        acc(0, 3, -1, -1);
        acc(0, 0, n / 2, -1);
        acc(0, 0, -1, 0);
        acc(0, 0, -1, n * cols - 1);
        acc(0, 0, -1, (n / 2) * cols + cols / 2);
    });
}

INSTANTIATE_TEST_SUITE_P(All, JitFixedStream, every_isa_and_dtype(), isa_dt_name);

} // namespace
} // namespace crest::impl::jit::test
