// The fixed blocks that take an extra reduced dim's indices in one call
// (kernel_config::block_batch, gen_vertical_fixed.cpp), called directly:
// each slice maxed over vert_call::batch indices batch_stride apart, then
// stored once. The kernel returns 1 for a batched call it did not finish
// (a block it was not made for; f32 that met a NaN), and the caller
// then makes one call an index, as run_range.cpp does; the tests do the same and check the
// values, whatever path took the call.
#include "backend/jit/generators.hpp"
#include "backend/jit/kernel_cache.hpp"
#include "backend/jit/outer_first.hpp"
#include "backend/jit/plan.hpp"
#include "jit_direct_util.hpp"
#include "tests/jit/jit_reduce_fixture.hpp"

namespace crest::impl::jit::test {
namespace {

struct batch_case {
    int rows, cols;
    int64_t batch;      // vert_call::batch (0: one)
    int64_t n_outer;
    int src_offset;     // bytes past a line
    int64_t batch_pad;  // elements between one index's slices and the next's
                        // (-1: as many as put the indices whole lines apart)
    bool accumulate;
    bool stream;        // kernel_config::stream_dst (a staged dst)
    bool negative;      // every value's sign set (16-bit: the three statistics)
    int64_t nan_at;     // element of src (-1: none), index-major
    bool nan_in_dst;    // accumulating: dst's first output a NaN
};

std::string describe(const batch_case &c) {
    return std::to_string(c.rows) + "x" + std::to_string(c.cols) + " batch="
            + std::to_string(c.batch) + " n_outer=" + std::to_string(c.n_outer)
            + " src_offset=" + std::to_string(c.src_offset) + " batch_pad="
            + std::to_string(c.batch_pad) + " accumulate=" + std::to_string(c.accumulate)
            + " stream=" + std::to_string(c.stream) + " negative=" + std::to_string(c.negative)
            + " nan_at=" + std::to_string(c.nan_at) + " nan_in_dst=" + std::to_string(c.nan_in_dst);
}

class JitFixedBatch : public isa_dt_test {
protected:
    // The kernel a plan makes for NCHW 2 x 64 x rows x cols reducing N
    // and H; null where the plan has no batches (AVX2's 16-bit blocks do
    // not accumulate, rows of 8-16 bytes pack two slices a ymm).
    std::shared_ptr<const generated_code> code(int rows, int cols, bool stream) {
        plan P;
        EXPECT_TRUE(make_plan(make_problem(dt(), {2, 64, rows, cols}, 0b0101), isa(), 2, &P,
                nullptr));
        if (!P.code || !P.code->cfg.block_batch) return nullptr;
        EXPECT_EQ(P.code->cfg.block_rows, rows);
        EXPECT_TRUE(P.code->status_fn);
        kernel_config cfg = P.code->cfg;
        cfg.stream_dst = stream;
        return get_code(cfg);
    }

    // Whether the plans batch blocks of cols columns here: every one on
    // AVX-512; on AVX2 the f32 ones its register columns take, not
    // packed (8-16 bytes).
    bool batches(int cols) const {
        const int64_t bytes = int64_t(cols) * int64_t(esize(dt()));
        if (isa() == isa_t::avx512_core) return true;
        if (bytes >= 8 && bytes <= 16) return false;
        return dt() == data_type::f32 && (cols % 8 == 0 ? cols <= 64 : cols < 56);
    }

    bool no_batches() const { return isa() == isa_t::avx2 && dt() != data_type::f32; }

    void run(const batch_case &c, uint32_t seed) {
        SCOPED_TRACE(describe(c));
        const auto k = code(c.rows, c.cols, c.stream);
        ASSERT_EQ(bool(k), batches(c.cols));
        if (!k) return;
        const size_t es = esize(dt());
        const int64_t nb = std::max<int64_t>(c.batch, 1), slice = int64_t(c.rows) * c.cols;
        const int64_t lines_pad = (64 - c.n_outer * slice * int64_t(es) % 64) % 64 / int64_t(es);
        const int64_t stride = c.n_outer * slice + (c.batch_pad < 0 ? lines_pad : c.batch_pad);
        const int64_t n_src = (nb - 1) * stride + c.n_outer * slice;
        guarded src_buf(size_t(n_src) * es + 64 + size_t(c.src_offset)),
                dst(size_t(c.n_outer * c.cols) * es);
        uint8_t *const src = past_line(src_buf.data(), c.src_offset);
        std::mt19937 rng(seed);
        const uint32_t sign = c.negative ? (dt() == data_type::f32 ? 0x80000000u : 0x8000u) : 0;
        // Between the indices: values larger than theirs, never taken.
        const uint32_t huge = dt() == data_type::f32 ? 0x7f000000u : 0x7f00u;
        for (int64_t i = 0; i < n_src; ++i) put(src, i, dt(), huge);
        auto at = [&](int64_t b, int64_t e) { return b * stride + e; };
        for (int64_t b = 0; b < nb; ++b)
            for (int64_t e = 0; e < c.n_outer * slice; ++e)
                put(src, at(b, e), dt(), random_bits(dt(), rng, rng() % 4 == 0) | sign);
        if (c.nan_at >= 0) {
            const int64_t b = c.nan_at / (c.n_outer * slice), e = c.nan_at % (c.n_outer * slice);
            put(src, at(b, e), dt(), (seed % 2 ? negative_nan(dt()) : qnan_bits(dt())));
        }
        for (int64_t i = 0; i < c.n_outer * c.cols; ++i)
            put(dst.data(), i, dt(), random_bits(dt(), rng, true) | sign);
        if (c.nan_in_dst) put(dst.data(), 0, dt(), negative_nan(dt()));
        std::vector<uint32_t> want(size_t(c.n_outer * c.cols));
        for (int64_t o = 0; o < c.n_outer; ++o)
            for (int64_t j = 0; j < c.cols; ++j) {
                uint8_t *d = dst.data() + (o * c.cols + j) * int64_t(es);
                uint32_t w = c.accumulate ? get(d, 0, dt()) : inf_bits(dt(), true);
                for (int64_t b = 0; b < nb; ++b) {
                    uint8_t tmp[4];
                    put(tmp, 0, dt(), w);
                    w = expected(src + at(b, o * slice + j) * int64_t(es), c.rows, c.cols, tmp,
                            true, dt());
                }
                want[size_t(o * c.cols + j)] = w;
            }
        vert_call a {src, dst.data(), c.cols, c.rows, int64_t(c.cols * es), c.accumulate,
                c.n_outer, int64_t(slice * es), int64_t(c.cols * es), nullptr, nullptr, c.batch,
                int64_t(stride * es)};
        const int64_t status = k->status_fn(&a);
        // f32 refuses a batch that met a NaN; the rest finish, the f32
        // lines' indices off the lines' grid too (the slices one at a
        // time); 16-bit takes every batch of its block.
        const bool nan = c.nan_at >= 0 || (c.accumulate && c.nan_in_dst);
        EXPECT_EQ(status, nb > 1 && dt() == data_type::f32 && nan ? 1 : 0);
        if (status != 0) {
            a.batch = 1;
            for (int64_t b = 0; b < nb; ++b) {
                a.src = src + b * stride * int64_t(es);
                a.accumulate = c.accumulate || b > 0;
                k->fn(&a);
            }
        }
        for (int64_t i = 0; i < c.n_outer * c.cols; ++i)
            expect_same(get(dst.data(), i, dt()), want[size_t(i)], dt(), i);
        EXPECT_TRUE(src_buf.guards_ok());
        EXPECT_TRUE(dst.guards_ok());
    }
};

// Blocks of one vector or several (xmm, ymm, zmm, a masked last one or
// none; f32 14 columns the lines on AVX-512), 1-5 indices (the plans
// pass 2-4, batch_take; the code takes any count), fresh and
// accumulating, a staged dst or not, indices on the lines' grid or off
// it, src on a line or not, negative values.
TEST_P(JitFixedBatch, EveryBlockAndCount) {
    if (no_batches()) GTEST_SKIP() << "AVX2's 16-bit blocks take no batches";
    const std::vector<std::pair<int, int>> blocks {
            {14, 14}, {7, 7}, {2, 3}, {3, 4}, {16, 9}, {5, 16}, {3, 20}, {4, 33}, {9, 64},
            {2, 100}};
    uint32_t seed = 5100;
    for (auto [rows, cols] : blocks)
        for (int64_t batch : {0, 1, 2, 3, 5})
            for (bool acc : {false, true}) {
                const bool stream = seed % 3 == 0, negative = seed % 5 == 0;
                for (int64_t pad : {int64_t(0), int64_t(3), int64_t(-1)})
                    run({rows, cols, batch, 37, pad == 3 ? 4 : 0, pad, acc, stream, negative,
                                -1, false},
                            ++seed);
            }
}

// A NaN of either sign in the first, a middle or the last index, in a
// slice's first or last element; in dst when accumulating. f32 refuses
// the batch and is redone an index a call; 16-bit keeps it in its
// statistics.
TEST_P(JitFixedBatch, NaNInAnyIndex) {
    if (no_batches()) GTEST_SKIP() << "AVX2's 16-bit blocks take no batches";
    uint32_t seed = 5200;
    for (auto [rows, cols] : {std::make_pair(14, 14), std::make_pair(7, 7),
                 std::make_pair(3, 20)}) {
        const int64_t n_outer = 21, per = n_outer * rows * cols;
        for (int64_t batch : {2, 3, 4})
            for (int64_t nan_at : {int64_t(0), per - 1, per + 5 * rows * cols + cols - 1,
                         (batch - 1) * per + 17})
                for (bool acc : {false, true})
                    run({rows, cols, batch, n_outer, 0, 0, acc, false, seed % 4 == 0, nan_at,
                                false},
                            ++seed);
        run({rows, cols, 2, n_outer, 0, 0, true, false, false, -1, true}, ++seed);
    }
}

// A batched call of another block shape: refused (status 1) before
// anything is written; with one index the general loop takes it.
TEST_P(JitFixedBatch, OtherBlocksRefused) {
    if (no_batches()) GTEST_SKIP() << "AVX2's 16-bit blocks take no batches";
    const auto k = code(7, 9, false);
    ASSERT_TRUE(k);
    const size_t es = esize(dt());
    const int64_t rows = 8, cols = 9, n_outer = 3, slice = rows * cols;
    std::vector<uint8_t> src(size_t(2 * n_outer * slice) * es);
    std::mt19937 rng(77);
    for (size_t i = 0; i < src.size() / es; ++i)
        put(src.data(), int64_t(i), dt(), random_bits(dt(), rng, false));
    guarded dst(size_t(n_outer * cols) * es, 0x5a);
    for (int64_t batch : {2, 1}) {
        vert_call a {src.data(), dst.data(), cols, rows, int64_t(cols * es), 0, n_outer,
                int64_t(slice * es), int64_t(cols * es), nullptr, nullptr, batch,
                int64_t(n_outer * slice * es)};
        EXPECT_EQ(k->status_fn(&a), batch > 1 ? 1 : 0);
        if (batch > 1) {
            for (size_t i = 0; i < dst.size(); ++i) ASSERT_EQ(dst.data()[i], 0x5a) << i;
            continue;
        }
        for (int64_t o = 0; o < n_outer; ++o)
            for (int64_t j = 0; j < cols; ++j)
                expect_same(get(dst.data(), o * cols + j, dt()),
                        expected(src.data() + (o * slice + j) * int64_t(es), rows, cols,
                                nullptr, false, dt()),
                        dt(), o * cols + j);
    }
    EXPECT_TRUE(dst.guards_ok());
}

// The plans batch the fixed blocks under an extra reduced dim (NCHW
// reducing N and H) where the blocks accumulate: f32, and 16-bit on
// AVX-512 (two slices a ymm too); on AVX-512 such plans of rows of 17-32
// bytes, and f32 ones of rows past 16 bytes, keep to one stage.
TEST(JitPlan, FixedBlocksTakeTheBatch) {
    if (max_isa() == isa_t::none) GTEST_SKIP() << "no JIT ISA";
    const bool z = max_isa() == isa_t::avx512_core;
    auto batched = [](const reduce_problem &p) {
        const plan P = plan_on_two(p);
        return P.code && P.code->cfg.block_batch && P.code->status_fn;
    };
    EXPECT_TRUE(batched(make_problem(data_type::f32, {2, 64, 14, 14}, 0b0101)));
    EXPECT_TRUE(batched(make_problem(data_type::f32, {6, 64, 7, 7}, 0b0101)));
    EXPECT_EQ(batched(make_problem(data_type::bf16, {2, 64, 14, 14}, 0b0101)), z);
    // Two slices a ymm: AVX-512 only.
    EXPECT_EQ(batched(make_problem(data_type::bf16, {2, 64, 7, 7}, 0b0101)), z);
    EXPECT_EQ(batched(make_problem(data_type::f32, {2, 64, 3, 3}, 0b0101)), z);
    EXPECT_FALSE(batched(make_problem(data_type::f32, {64, 14, 14}, 0b010)));  // no batch
    EXPECT_FALSE(batched(make_problem(data_type::f32, {2, 64, 17, 14}, 0b0101)));  // 17 rows
    const reduce_problem eight = make_problem(data_type::f32, {8, 4096, 14, 14}, 0b0101);
    outer_first_split s;
    EXPECT_TRUE(split_outer_first(eight, &s));
    EXPECT_EQ(one_stage_reads_well(plan_on_two(eight)), z);
    // f32 rows of 40 bytes (no lines): one stage too.
    const reduce_problem tens = make_problem(data_type::f32, {8, 8192, 10, 10}, 0b0101);
    EXPECT_TRUE(batched(tens));
    EXPECT_EQ(one_stage_reads_well(plan_on_two(tens)), z);
    // Two slices a ymm: the two stages.
    const reduce_problem packed = make_problem(data_type::bf16, {16, 16384, 7, 7}, 0b0101);
    EXPECT_EQ(batched(packed), z);
    EXPECT_FALSE(one_stage_reads_well(plan_on_two(packed)));
}

// Calls take up to `most` indices, as few calls as that allows, and no
// call of a lone index that accumulates (but a batch of 1).
TEST(JitPlan, BatchCallsTakeUpToTheMostNoneAlone) {
    for (int64_t most : {3, 4}) {
        for (int64_t batch = 1; batch <= 13; ++batch) {
            std::vector<int64_t> calls;
            for (int64_t left = batch; left > 0;) {
                calls.push_back(batch_take(left, most));
                ASSERT_GE(calls.back(), 1);
                left -= calls.back();
            }
            SCOPED_TRACE("most " + std::to_string(most) + " batch " + std::to_string(batch));
            EXPECT_EQ(int64_t(calls.size()), (batch + most - 1) / most);
            for (int64_t took : calls) {
                EXPECT_LE(took, most);
                if (batch > 1) {
                    EXPECT_GE(took, 2);
                }
            }
        }
    }
    EXPECT_EQ(batch_take(4, 3), 2);
    EXPECT_EQ(batch_take(5, 4), 3);
    EXPECT_EQ(batch_take(64, 4), 4);
}

// The keyed copy and the runs take up to fixed_copy_max_batch indices
// a call; the other forms 4 (generators.hpp, fixed_batch_most).
TEST(JitPlan, BatchMostByForm) {
    if (max_isa() == isa_t::none) GTEST_SKIP() << "no JIT ISA";
    auto most = [](const reduce_problem &p) {
        const plan P = plan_on_two(p);
        return P.code && P.code->cfg.block_batch ? P.code->batch_most : int64_t(0);
    };
    EXPECT_EQ(most(make_problem(data_type::f32, {6, 64, 7, 7}, 0b0101)), 4);
    EXPECT_EQ(most(make_problem(data_type::f32, {6, 64, 14, 14}, 0b0101)), 4);
    if (max_isa() != isa_t::avx512_core) return;
    EXPECT_EQ(most(make_problem(data_type::bf16, {6, 64, 14, 14}, 0b0101)), 4);
    // f32 rows of 20 bytes: the keyed copy; bf16 rows of 6: the runs.
    EXPECT_EQ(most(make_problem(data_type::f32, {6, 64, 5, 5}, 0b0101)), fixed_copy_max_batch);
    EXPECT_EQ(most(make_problem(data_type::bf16, {6, 64, 3, 3}, 0b0101)), fixed_copy_max_batch);
}

INSTANTIATE_TEST_SUITE_P(All, JitFixedBatch, every_isa_and_dtype(), isa_dt_name);

} // namespace
} // namespace crest::impl::jit::test
