// AVX-512's 16-bit fixed blocks that read dense slices as a stream,
// called directly. The runs (gen_vertical_fixed_runs.cpp): rows under 8
// bytes, fresh calls of 1-3 batch indices take whole periods (32 /
// gcd(R*J, 32) slices) while a period and a vector's bytes are left. The
// keyed copies (gen_vertical_fixed_keyed.cpp): rows of 8-12 bytes (f32:
// 12-20), fresh calls of 2-3 batch indices take whole groups (a line's
// lanes / gcd(J, lanes) slices) while more than a group is left. The slices after them, and every
// other call, go one at a time; a negative NaN (f32: any NaN) sends the
// whole call to those. Each call is checked against the values, whatever path took it.
#include "backend/jit/kernel_cache.hpp"
#include "backend/jit/plan.hpp"
#include "jit_direct_util.hpp"

namespace crest::impl::jit::test {
namespace {

struct runs_case {
    int rows, cols;
    int64_t n_outer;
    int64_t batch;     // vert_call::batch (0: one)
    int dst_offset;    // bytes past a line
    int dst_pad;       // elements between slices' dst beyond their columns
    bool stream;       // kernel_config::stream_dst (non-temporal on a line)
    bool negative;     // every value's sign set
    int64_t nan_at;    // element of src counted index-major (-1: none)
    bool nan_negative;
};

class FixedDense : public ::testing::TestWithParam<data_type> {
protected:
    data_type dt() const { return GetParam(); }

    void run(const runs_case &c, uint32_t seed) {
        SCOPED_TRACE(std::to_string(c.rows) + "x" + std::to_string(c.cols) + " n_outer="
                + std::to_string(c.n_outer) + " batch=" + std::to_string(c.batch)
                + " dst_offset=" + std::to_string(c.dst_offset) + " dst_pad="
                + std::to_string(c.dst_pad) + " stream=" + std::to_string(c.stream)
                + " negative=" + std::to_string(c.negative) + " nan_at="
                + std::to_string(c.nan_at) + " nan_negative=" + std::to_string(c.nan_negative));
        kernel_config cfg;
        cfg.isa = isa_t::avx512_core;
        cfg.family = family_t::vert_reg;
        cfg.src_dt = cfg.dst_dt = dt();
        cfg.unroll = 1;
        cfg.block_rows = c.rows;
        cfg.block_cols = c.cols;
        cfg.block_batch = true;
        cfg.stream_dst = c.stream;
        const auto code = get_code(cfg);
        const size_t es = esize(dt());
        const int64_t slice = int64_t(c.rows) * c.cols, dst_stride = c.cols + c.dst_pad;
        const int64_t indices = std::max<int64_t>(c.batch, 1), per_index = c.n_outer * slice;
        guarded src(size_t(indices * per_index) * es),
                dst_buf(size_t(c.n_outer * dst_stride) * es + 128);
        uint8_t *const dst = past_line(dst_buf.data(), c.dst_offset);
        std::mt19937 rng(seed);
        const uint32_t sign = !c.negative ? 0 : dt() == data_type::f32 ? 0x80000000u : 0x8000u;
        for (int64_t i = 0; i < indices * per_index; ++i)
            put(src.data(), i, dt(), random_bits(dt(), rng, rng() % 4 == 0) | sign);
        if (c.nan_at >= 0)
            put(src.data(), c.nan_at, dt(),
                    c.nan_negative ? negative_nan(dt()) : qnan_bits(dt()));
        std::vector<uint8_t> want(size_t(c.n_outer * c.cols) * es);
        for (int64_t o = 0; o < c.n_outer; ++o)
            for (int64_t j = 0; j < c.cols; ++j) {
                uint8_t *w = want.data() + (o * c.cols + j) * es;
                for (int64_t b = 0; b < indices; ++b) {
                    const uint32_t v = expected(src.data() + (b * per_index + o * slice + j) * es,
                            c.rows, c.cols, w, b > 0, dt());
                    put(w, 0, dt(), v);
                }
            }
        const vert_call a {src.data(), dst, c.cols, c.rows, int64_t(c.cols * es), 0, c.n_outer,
                int64_t(slice * es), int64_t(dst_stride * es), nullptr, nullptr, c.batch,
                int64_t(per_index * es)};
        ASSERT_TRUE(code->status_fn);
        if (code->status_fn(&a) != 0) {  // as run_range: a call an index
            vert_call one = a;
            one.batch = 1;
            for (int64_t b = 0; b < indices; ++b) {
                one.src = src.data() + b * per_index * int64_t(es);
                one.accumulate = b > 0;
                code->fn(&one);
            }
        }
        for (int64_t o = 0; o < c.n_outer; ++o)
            for (int64_t j = 0; j < c.cols; ++j)
                expect_same(get(dst, o * dst_stride + j, dt()),
                        get(want.data(), o * c.cols + j, dt()), dt(), o * c.cols + j);
        EXPECT_TRUE(src.guards_ok());
        EXPECT_TRUE(dst_buf.guards_ok());
    }
};

class JitFixedRuns : public FixedDense {};
class JitFixedKeyed : public FixedDense {};

// Blocks of 3x3, 5x3, 3x2 and 5x2 (periods of 32, 32, 16 and 16
// slices); slice counts short of a period and its spare, exactly at it,
// a few periods and some; 1-3 batch indices; dst on a line (streamed or
// not), off one, padded (one at a time); negative data.
TEST_P(JitFixedRuns, PeriodsAndTheRest) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 5100;
    for (auto [rows, cols] : std::vector<std::pair<int, int>> {{3, 3}, {5, 3}, {3, 2}, {5, 2}}) {
        const int64_t period = 32 / std::gcd(rows * cols, 32);
        for (int64_t n : {period + 2, period + 4, 2 * period + 4, 7 * period + 11})
            for (int64_t batch : {0, 2, 3})
                for (bool stream : {false, true}) {
                    run({rows, cols, n, batch, 0, 0, stream, false, -1, false}, seed++);
                    run({rows, cols, n, batch, 6, 0, stream, false, -1, false}, seed++);
                }
        const int64_t n = 5 * period + 9;
        run({rows, cols, n, 0, 0, 2, true, false, -1, false}, seed++);
        run({rows, cols, n, 2, 0, 0, true, true, -1, false}, seed++);
        run({rows, cols, n, 0, 0, 0, false, true, -1, false}, seed++);
    }
}

// A NaN of either sign in a period's first, a middle and its last
// slice, in the slices after the periods, and in a later batch index:
// positive ones stay the largest keys, negative ones send the call to
// the one-slice blocks.
TEST_P(JitFixedRuns, NaNAnywhere) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 5200;
    for (auto [rows, cols] : std::vector<std::pair<int, int>> {{3, 3}, {5, 2}}) {
        const int64_t slice = rows * cols, period = 32 / std::gcd(int(slice), 32);
        const int64_t n = 3 * period + 7;
        for (int64_t at : {int64_t(0), slice * period / 2 + 1, slice * period - 1,
                     slice * (2 * period) + cols, slice * n - 1})
            for (bool neg : {false, true})
                for (int64_t batch : {0, 3}) {
                    const int64_t shift = batch ? 2 * n * slice : 0;  // the last index
                    run({rows, cols, n, batch, 0, 0, true, false, at + shift, neg}, seed++);
                    run({rows, cols, n, batch, 0, 0, false, true, at, neg}, seed++);
                }
    }
}

// Through the plans, src ending where a page nothing follows begins: a
// period's last vectors read ahead of it, up to a vector past it, never
// past src (NCHW 3x3 maps reducing H, with N or not).
TEST_P(JitFixedRuns, SrcEndsAtAPage) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 5300;
    for (int64_t c : {35, 36, 37, 68, 69, 100}) {
        check_at_page_end(make_problem(dt(), {c, 3, 3}, 0b010), seed++);
        check_at_page_end(make_problem(dt(), {2, c, 3, 3}, 0b0101), seed++);
    }
}

// Blocks of 4x4, 5x5, 6x6, 3x4, 2x6, 7x5, 3x3, 2x2 and 5x3 (16-bit
// groups of 8, 32, 16, 8, 16, 32, 32, 16 and 32 slices; f32 takes those
// of 3-5 columns, in groups of 16, 4 or 16); slice counts a slice past a group, two past, a few
// groups and some, whole groups (the last one's slices go one at a
// time); one index (not taken) and 2-3; dst on a line (streamed or
// not), off one, padded (one at a time); negative data.
TEST_P(JitFixedKeyed, GroupsAndTheRest) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 5400;
    const int lanes = 64 / int(esize(dt()));
    for (auto [rows, cols] : std::vector<std::pair<int, int>> {
                 {4, 4}, {5, 5}, {6, 6}, {3, 4}, {2, 6}, {7, 5}, {3, 3}, {2, 2}, {5, 3}}) {
        const int64_t group = lanes / std::gcd(cols, lanes);
        for (int64_t n : {group + 1, group + 2, 3 * group + 5, 4 * group})
            for (int64_t batch : {0, 2, 3})
                for (bool stream : {false, true}) {
                    run({rows, cols, n, batch, 0, 0, stream, false, -1, false}, seed++);
                    run({rows, cols, n, batch, 6, 0, stream, false, -1, false}, seed++);
                }
        const int64_t n = 5 * group + 3;
        run({rows, cols, n, 2, 0, 2, true, false, -1, false}, seed++);
        run({rows, cols, n, 3, 0, 0, true, true, -1, false}, seed++);
        run({rows, cols, n, 2, 0, 0, false, true, -1, false}, seed++);
    }
}

// A NaN of either sign in the first group's first slice, a middle
// group, the last group taken, the slices after the groups, and each
// later batch index: positive ones stay the largest keys, negative ones
// send the call to the one-slice blocks (f32: any NaN, to the general
// loop).
TEST_P(JitFixedKeyed, NaNAnywhere) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 5500;
    const int lanes = 64 / int(esize(dt()));
    for (auto [rows, cols] : std::vector<std::pair<int, int>> {{5, 5}, {4, 4}, {3, 3}}) {
        const int64_t slice = rows * cols, group = lanes / std::gcd(cols, lanes);
        const int64_t n = 4 * group + 3;
        for (int64_t at : {int64_t(0), slice * group * 2 + slice / 2, slice * group * 4 - 1,
                     slice * n - 1})
            for (bool neg : {false, true})
                for (int64_t batch : {2, 3})
                    for (int64_t index = 0; index < batch; ++index) {
                        const int64_t shift = index * n * slice;
                        run({rows, cols, n, batch, 0, 0, index == 1, index == 2, at + shift, neg},
                                seed++);
                    }
    }
}

// Through the plans, src ending where a page nothing follows begins:
// the keys read whole vectors of whole groups, never past src (NCHW 3x3,
// 4x4 and 5x5 maps reducing N and H).
TEST_P(JitFixedKeyed, SrcEndsAtAPage) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 5600;
    for (int64_t c : {9, 17, 33, 40, 65, 100}) {
        check_at_page_end(make_problem(dt(), {2, c, 5, 5}, 0b0101), seed++);
        check_at_page_end(make_problem(dt(), {3, c, 4, 4}, 0b0101), seed++);
        check_at_page_end(make_problem(dt(), {2, c, 3, 3}, 0b0101), seed++);
    }
}

INSTANTIATE_TEST_SUITE_P(All, JitFixedRuns,
        ::testing::Values(data_type::bf16, data_type::f16), dt_name);
INSTANTIATE_TEST_SUITE_P(All, JitFixedKeyed,
        ::testing::Values(data_type::bf16, data_type::f16, data_type::f32), dt_name);

} // namespace
} // namespace crest::impl::jit::test
