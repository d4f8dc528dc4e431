// The outer-first plans (outer_first.hpp) against the ref oracle: the
// outer dims reduced first into a block buffer, then the block's own
// reduction; blocks that fit the buffer whole and blocks taken in pieces
// of their outermost dim, NCHW and channels-last, odd sizes, NaN of
// either sign, negative data, one and two threads; kept dims outside the
// reduced ones (NCHW reducing C and W), whole and in pieces. Problems
// whose one stage reads as well keep it (outer_first_preferred).
#include "tests/jit/jit_reduce_fixture.hpp"

#include "backend/jit/outer_first.hpp"

#include <algorithm>
#include <random>

namespace crest::impl::jit::test {
namespace {

bool outer_first(const std::string &name) {
    return name.find("reduce_outer_first") != std::string::npos;
}

TEST_P(JitReduce, OuterDimsFirst) {
    const std::vector<int> nhwc {0, 2, 3, 1};
    const thread_pool one(1);
    struct shape_case {
        dims_t dims;
        uint32_t mask;
        bool channels_last;
    };
    const shape_case cases[] = {
            {{64, 64, 7, 7}, 0b1011, false},    // keep H: a block of 49, whole
            {{8, 256, 14, 14}, 0b1010, false},  // keep N, H: 8 blocks of 196, whole
            {{3, 4001, 5, 5}, 0b1010, false},   // keep N, H: 3 blocks of 25, whole
            {{3, 70, 56, 56}, 0b1010, false},   // keep N, H: blocks of 3136 (one stage: slabs)
            {{6, 256, 20, 20}, 0b1010, false},  // keep N, H: blocks of 400 (AVX-512: registers)
            {{4, 192, 14, 14}, 0b0110, true},   // channels-last, keep N, W: pieces of W
            {{8, 256, 14, 14}, 0b1001, false},  // keep C, H: 50176, in pieces
            {{8, 256, 14, 14}, 0b0101, false},  // keep C, W: one stage, a batch a call
            {{8, 256, 20, 14}, 0b0101, false},  // keep C, W, 20 rows: pieces
            {{8, 256, 14, 14}, 0b0011, true},   // channels-last, keep H, W: pieces of rows
            {{8, 256, 14, 14}, 0b1001, true},   // channels-last, keep C, H
            {{10, 70, 17, 29}, 0b1001, false},  // odd: 34510 elements (one stage: slabs)
            {{10, 150, 17, 13}, 0b0101, false}, // odd, keep C, W: pieces of 221
            {{80, 33, 5, 17}, 0b1011, false},   // odd, keep H: 85, whole
    };
    int taken = 0;
    for (const shape_case &c : cases) {
        const reduce_problem p = make_problem(dt(), c.dims, c.mask,
                c.channels_last ? permuted(c.dims, nhwc) : dims_t {});
        outer_first_split s;
        const bool eligible = split_outer_first(p, &s);
        EXPECT_TRUE(eligible) << describe(p);
        const bool two_stages = eligible && outer_first_preferred(plan_on_two(p), s);
        const std::string name = run(p);
        EXPECT_EQ(outer_first(name), two_stages) << name;
        taken += two_stages;
        check(p, {}, one, seed_++);
        planting neg;
        neg.negative = true;
        run(p, neg);
        // A NaN in the first and in the last element of the outer dims'
        // first and last rows, of either sign.
        const size_t n = span(p.dims, p.src_strides);
        for (size_t at : {size_t(0), n / 2 + 3, n - 1}) {
            for (bool negative_nan : {false, true}) {
                planting pl;
                pl.nan_at = {at};
                pl.nan_bits = qnan_bits(dt()) | (negative_nan ? inf_bits(dt(), true) : 0);
                run(p, pl);
            }
        }
    }
    // Whole (7x7 and 5x17 keep H, 5x5 keep N and H) and in pieces (20x14
    // and 17x13 keep C, W, channels-last keep N and W) at least.
    EXPECT_GE(taken, 6);
}

// Random 4-D and 5-D problems of 256 KiB to 1 MiB whose outermost dim
// in memory is reduced, or kept (a third of them: kept dims outside):
// random sizes, masks and dim orders, dense or with a padded outer
// stride; whichever plan they take, the ref's results.
TEST_P(JitReduce, OuterDimsFirstRandomShapes) {
    std::mt19937 rng(1234);
    int taken = 0;
    for (int t = 0; t < 24; ++t) {
        const int nd = 4 + int(rng() % 2);
        dims_t d(static_cast<size_t>(nd));
        int64_t elems = 1;
        for (int i = 1; i < nd; ++i) {
            d[size_t(i)] = 1 + int64_t(rng() % 23);
            elems *= d[size_t(i)];
        }
        const int64_t want = int64_t(256 * 1024 + rng() % (768 * 1024)) / int64_t(esize(dt()));
        d[0] = std::max<int64_t>(8, want / elems);
        std::vector<int> order(static_cast<size_t>(nd));
        for (int i = 0; i < nd; ++i) order[size_t(i)] = i;
        std::shuffle(order.begin() + 1, order.end(), rng);  // dim 0 outermost
        uint32_t mask = rng() % 3 == 0 ? 0 : 1;
        for (int i = 1; i < nd; ++i) mask |= uint32_t(rng() % 2) << i;
        if ((mask >> 1) == 0) mask |= 2;
        const bool padded = rng() % 4 == 0;
        dims_t pad(static_cast<size_t>(nd), 0);
        if (padded) pad[size_t(order[1])] = 1;
        const reduce_problem p = make_problem(dt(), d, mask, permuted(d, order, pad));
        taken += outer_first(run(p));
        planting pl;
        pl.nan_at.push_back(size_t(rng() % span(p.dims, p.src_strides)));
        pl.nan_bits = qnan_bits(dt()) | inf_bits(dt(), true);
        run(p, pl);
    }
    EXPECT_GT(taken, 0);
}

// Eligibility: reduced outer dims (kept ones outside them, if any), at
// least 8 rows of them and 256 KiB of src, a dense block with a reduced
// dim of its own and at most a buffer's worth under one index of its
// outermost dim.
TEST(JitOuterFirst, Eligibility) {
    outer_first_split s;
    auto split = [&](const dims_t &d, uint32_t mask, const dims_t &ss = {}) {
        return split_outer_first(make_problem(data_type::f32, d, mask, ss), &s);
    };
    ASSERT_TRUE(split({64, 2048, 7, 7}, 0b1011));
    EXPECT_EQ(s.block_elems, 49);
    EXPECT_EQ(s.idx_n, 7);
    EXPECT_EQ(s.idx_elems, 7);
    EXPECT_EQ(s.idx_outputs, 1);
    EXPECT_EQ(s.outer.dims, (dims_t {131072, 49}));
    ASSERT_TRUE(split({64, 512, 14, 14}, 0b1001));
    EXPECT_EQ(s.block_elems, 512 * 196);
    // C and H, both kept, merge: indices of 14 elements, one output each.
    EXPECT_EQ(s.idx_n, 512 * 14);
    EXPECT_EQ(s.idx_elems, 14);
    EXPECT_EQ(s.idx_outputs, 1);
    ASSERT_TRUE(split({64, 512, 14, 14}, 0b0101));  // keep C, W
    EXPECT_EQ(s.idx_n, 512);
    EXPECT_EQ(s.idx_elems, 196);
    EXPECT_EQ(s.idx_outputs, 14);
    // N kept outside: 3 blocks of [5 x 5] after the 4001 rows of C.
    ASSERT_TRUE(split({3, 4001, 5, 5}, 0b1010));
    EXPECT_EQ(s.lead_n, 3);
    EXPECT_EQ(s.block_elems, 25);
    EXPECT_EQ(s.idx_n, 5);
    EXPECT_EQ(s.idx_elems, 5);
    EXPECT_EQ(s.idx_outputs, 1);
    EXPECT_EQ(s.outer.dims, (dims_t {3, 4001, 25}));
    EXPECT_EQ(s.outer.dst_strides, (dims_t {25, 0, 1}));
    EXPECT_EQ(s.block.dims, (dims_t {3, 5, 5}));
    EXPECT_EQ(s.block.src_strides, (dims_t {25, 5, 1}));
    EXPECT_EQ(s.block.reduce_mask, 0b100u);
    EXPECT_TRUE(outer_first_whole(s));
    ASSERT_TRUE(split({3, 70, 56, 56}, 0b1010));  // 3 x 3136 f32: 37 KiB, in pieces
    EXPECT_EQ(s.lead_n, 3);
    EXPECT_FALSE(outer_first_whole(s));
    EXPECT_FALSE(split({64, 512, 14, 14}, 0b0001));   // the block has no reduced dim
    EXPECT_FALSE(split({64, 512, 14, 14}, 0b0110));   // N kept, the block (W) has none
    EXPECT_FALSE(split({4, 512, 14, 14}, 0b1001));    // 4 outer rows
    EXPECT_FALSE(split({16, 16, 14, 14}, 0b1001));    // 200 KiB
    EXPECT_FALSE(split({64, 8, 2, 20000}, 0b1001));   // 20000 elements an index
    // A block with padding between its rows: not dense.
    EXPECT_FALSE(split({64, 512, 14, 14}, 0b1001, {512 * 14 * 16, 14 * 16, 16, 1}));
}

// A one-stage vertical plan whose extra reduced dims leave under 64 KiB
// of src an index (a call, or 2-3 for the batched fixed blocks, each
// joining dst) reads worse than the two stages: channels-last reducing N
// and W with a large batch, NCHW reducing N and H of 7x7 maps. 100 KiB
// an index keeps the one stage where it read well (AVX-512).
TEST(JitPlan, OuterFirstOverManySmallCalls) {
    if (max_isa() == isa_t::none) GTEST_SKIP() << "no JIT ISA";
    outer_first_split s;
    // [N, H, W, C] in memory order, reducing N and W.
    for (data_type dt : {data_type::bf16, data_type::f32}) {
        const reduce_problem cl = make_problem(dt, {10485, 5, 5, 50}, 0b0101);
        ASSERT_TRUE(split_outer_first(cl, &s));
        const plan P = plan_on_two(cl);
        ASSERT_EQ(P.kind, plan_kind::vertical);
        EXPECT_GT(P.nextra, 0);
        EXPECT_FALSE(one_stage_reads_well(P));
        EXPECT_TRUE(outer_first_preferred(P, s));
    }
    const reduce_problem nchw = make_problem(data_type::f32, {2000, 64, 7, 7}, 0b0101);
    ASSERT_TRUE(split_outer_first(nchw, &s));
    EXPECT_TRUE(outer_first_preferred(plan_on_two(nchw), s));
    const reduce_problem wide = make_problem(data_type::f32, {261, 28, 28, 32}, 0b0101);
    ASSERT_TRUE(split_outer_first(wide, &s));
    if (max_isa() == isa_t::avx512_core) {
        EXPECT_TRUE(one_stage_reads_well(plan_on_two(wide)));
    }
}

// 16-bit NCHW reducing C and W of maps whose blocks pass 2 KiB off the
// lines' grid and take no period (33x33): the outer-first plan. With a
// slab period of whole lines (38x38), on the grid (32x32), or f32
// (33x33, half-line periods): one stage (AVX-512; the slabs' periods are
// AVX-512 only).
TEST(JitPlan, OuterFirstForWideBlocksWithoutPeriods) {
    if (max_isa() != isa_t::avx512_core) GTEST_SKIP() << "AVX-512 periods";
    struct block_case {
        data_type dt;
        int64_t hw;
        bool reads_well;
    };
    for (const block_case &c : std::vector<block_case> {{data_type::bf16, 33, false},
                 {data_type::f16, 45, false}, {data_type::bf16, 38, true},
                 {data_type::bf16, 32, true}, {data_type::f32, 33, true}}) {
        const plan P = plan_on_two(make_problem(c.dt, {4, 256, c.hw, c.hw}, 0b1010));
        ASSERT_EQ(P.kind, plan_kind::inner) << c.hw;
        ASSERT_TRUE(P.slab_code) << c.hw;
        EXPECT_EQ(one_stage_reads_well(P), c.reads_well) << int(c.dt) << " " << c.hw;
    }
}

// keep_dst_cached, which the pieces' outer plan goes through (its stack
// buffer is read by the block's stage at once): an 8-row plan past half
// the L3 streams dst (a tile of under 16 rows); after it no kernel of
// the plan does.
TEST(JitOuterFirst, PiecesKeepTheBufferCached) {
    if (max_isa() == isa_t::none) GTEST_SKIP() << "no JIT ISA";
    const int64_t cols = planned_l3_bytes() / 8 / 4 + 4096;  // 8 rows past half the L3
    plan P;
    ASSERT_TRUE(make_plan(make_problem(data_type::f32, {8, cols}, 0b01), max_isa(), 1, &P, nullptr));
    ASSERT_EQ(P.kind, plan_kind::vertical);
    auto streams = [](const plan &Q) {
        for (const auto *code : {&Q.code, &Q.slab_code, &Q.combine_code, &Q.period_code,
                     &Q.chunk_code, &Q.fixed_code})
            if (*code && (*code)->cfg.stream_dst) return true;
        return Q.stream_transposed;
    };
    ASSERT_TRUE(streams(P));
    keep_dst_cached(P);
    EXPECT_FALSE(streams(P));
    ASSERT_NE(P.code, nullptr);
    EXPECT_EQ(P.code->cfg.family, family_t::vert_tile);
}

} // namespace
} // namespace crest::impl::jit::test
