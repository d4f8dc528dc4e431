// Every row of the ReduceMax table of ops.md, through the public API:
// graph -> finalize -> partition -> compile -> execute, against the naive
// loop. Each test runs with the default backend choice and with "ref".
#include <pthread.h>

#include <cstring>
#include <random>

#include "tests/api/api_test_util.hpp"

namespace crest::api_test {
namespace {

class ReduceMaxApi : public ::testing::TestWithParam<std::string> {
protected:
    engine eng {engine::kind::cpu, 0, engine_options {0, GetParam()}};

    // Builds, compiles and runs src_dims reduced over axes in dtype t.
    void check(dt t, const dims &src_dims, const std::vector<int64_t> &axes,
            std::optional<bool> keep, const dims &want_dst, uint64_t seed = 1,
            bool with_nan = true) {
        SCOPED_TRACE(std::string(dt_name(t)) + " seed " + std::to_string(seed));
        const reduce_graph rg = attr_graph(t, src_dims, axes, keep);
        compiled_partition cp = rg.compile(eng);
        const lt dst = cp.query_logical_tensor(dst_id);
        EXPECT_EQ(dst.get_dims(), want_dst);
        EXPECT_EQ(dst.get_strides(), dense_strides(want_dst));
        const int64_t n = span(src_dims, rg.src.get_strides());
        std::vector<int64_t> norm;
        for (auto a : axes) norm.push_back(a < 0 ? a + int64_t(src_dims.size()) : a);
        run_and_check(cp, eng, random_bits(t, n, seed, with_nan), norm,
                keep.value_or(false));
    }
};

TEST_P(ReduceMaxApi, KeepDimsShapesAndDefault) {
    for (dt t : all_dts) {
        check(t, {2, 3, 4}, {1}, true, {2, 1, 4});
        check(t, {2, 3, 4}, {1}, false, {2, 4});
        check(t, {2, 3, 4}, {1}, std::nullopt, {2, 4}); // default is false
        check(t, {2, 3, 4}, {0, 2}, true, {1, 3, 1});
        check(t, {2, 3, 4}, {0, 1, 2}, false, {});
    }
}

TEST_P(ReduceMaxApi, FinalizeInfersTheOutputShape) {
    graph g(engine::kind::cpu);
    attr_graph(dt::f32, {2, 3, 4}, {-2}, true).build(g);
    const auto ops = g.get_ops();
    ASSERT_EQ(ops.size(), 1u);
    EXPECT_EQ(ops[0].get_outputs().at(0).get_dims(), (dims {2, 1, 4}));
}

TEST_P(ReduceMaxApi, NegativeAxesCountFromTheEnd) {
    for (dt t : all_dts) {
        check(t, {2, 3, 4}, {-1}, false, {2, 3});
        check(t, {2, 3, 4}, {-3, -1}, false, {3});
        check(t, {2, 3, 4}, {-3, 2}, true, {1, 3, 1});
    }
}

TEST_P(ReduceMaxApi, EmptyAxesIsIdentityWhateverKeepDims) {
    for (dt t : all_dts)
        for (bool keep : {false, true}) {
            SCOPED_TRACE(keep);
            check(t, {2, 3, 4}, {}, keep, {2, 3, 4});
            check(t, {5}, {}, keep, {5});
        }
}

TEST_P(ReduceMaxApi, EmptyReductionGivesNegInf) {
    for (dt t : all_dts) {
        check(t, {3, 0}, {1}, false, {3});
        check(t, {3, 0}, {-1}, true, {3, 1});
        check(t, {0}, {0}, false, {});
        check(t, {2, 0, 2}, {0, 1}, false, {2});
    }
    // The bit patterns themselves, not only "what the naive loop says".
    const uint32_t want[] = {0xFF800000u, 0xFF80u, 0xFC00u};
    for (int k = 0; k < 3; ++k) {
        const dt t = all_dts[k];
        compiled_partition cp = attr_graph(t, {2, 0}, {1}, false).compile(eng);
        guarded out(t, 2);
        stream s(eng);
        uint8_t dummy[4] = {};
        cp.execute(s, {tensor(cp.query_logical_tensor(src_id), eng, dummy)},
                {tensor(cp.query_logical_tensor(dst_id), eng, out.data())});
        EXPECT_EQ(out.at(0), want[k]) << dt_name(t);
        EXPECT_EQ(out.at(1), want[k]) << dt_name(t);
        EXPECT_TRUE(out.untouched(-1) && out.untouched(2));
    }
}

TEST_P(ReduceMaxApi, ZeroSizeKeptDimsWriteNothing) {
    for (dt t : all_dts) {
        check(t, {0, 3}, {1}, false, {0});
        check(t, {0, 3}, {1}, true, {0, 1});
        check(t, {4, 0}, {0}, false, {0});
        check(t, {0, 0}, {}, false, {0, 0});
    }
}

TEST_P(ReduceMaxApi, NaNAnywhereInTheRowPropagates) {
    const uint32_t nan_of[] = {0x7FC00000u, 0x7FC0u, 0x7E00u};
    const uint32_t one_of[] = {0x3F800000u, 0x3F80u, 0x3C00u};
    const uint32_t two_of[] = {0x40000000u, 0x4000u, 0x4000u};
    for (int k = 0; k < 3; ++k) {
        const dt t = all_dts[k];
        for (int pos : {0, 3, 6}) {
            SCOPED_TRACE(std::string(dt_name(t)) + " NaN at " + std::to_string(pos));
            compiled_partition cp = attr_graph(t, {2, 7}, {1}, false).compile(eng);
            std::vector<uint8_t> src(14 * elem_size(t));
            for (int i = 0; i < 14; ++i)
                write_bits(t, src, i, i == 10 ? two_of[k] : one_of[k]);
            write_bits(t, src, pos, nan_of[k]);
            guarded out(t, 2);
            stream s(eng);
            cp.execute(s, {tensor(cp.query_logical_tensor(src_id), eng, src.data())},
                    {tensor(cp.query_logical_tensor(dst_id), eng, out.data())});
            EXPECT_TRUE(std::isnan(decode(t, out.at(0)))) << std::hex << out.at(0);
            EXPECT_EQ(out.at(1), two_of[k]);
            EXPECT_TRUE(out.untouched(-1) && out.untouched(2));
        }
    }
}

TEST_P(ReduceMaxApi, RanksZeroToTwelve) {
    for (dt t : all_dts) {
        check(t, {}, {}, false, {});
        check(t, {}, {}, true, {});
        const dims d12 = {2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 3};
        check(t, d12, {0, 5, 11, -2}, false, {1, 2, 1, 2, 2, 1, 2, 1});
        check(t, d12, {0, 5, 11, -2}, true,
                {1, 1, 2, 1, 2, 1, 2, 1, 2, 1, 1, 1});
        check(t, d12, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, false, {});
        check(t, d12, {}, false, d12);
    }
}

TEST_P(ReduceMaxApi, SizeOneDims) {
    for (dt t : all_dts) {
        check(t, {1, 5, 1}, {0, 2}, false, {5});
        check(t, {1, 5, 1}, {1}, true, {1, 1, 1});
        check(t, {1, 1}, {0, 1}, false, {});
    }
}

TEST_P(ReduceMaxApi, LayoutAnyResolvesToDenseRowMajor) {
    compiled_partition cp
            = attr_graph(dt::f32, {2, 3, 4, 5}, {1, 3}, true).compile(eng);
    const lt d = cp.query_logical_tensor(dst_id);
    EXPECT_EQ(d.get_layout_type(), ltype::strided);
    EXPECT_EQ(d.get_dims(), (dims {2, 1, 4, 1}));
    EXPECT_EQ(d.get_strides(), (dims {4, 4, 1, 1}));
    cp = attr_graph(dt::f32, {2, 3, 4, 5}, {1, 3}, false).compile(eng);
    EXPECT_EQ(cp.query_logical_tensor(dst_id).get_strides(), (dims {4, 1}));
}

// Layout any follows src's dim order (decisions.md): channels-last in,
// channels-last out; row-major where the axes arrive at execution and
// keep_dims drops dims.
TEST_P(ReduceMaxApi, LayoutAnyNestsDimsLikeSrc) {
    const dims cl {60, 1, 15, 3};  // 2x3x4x5, dim 1 innermost
    reduce_graph rg = attr_graph(dt::f32, {2, 3, 4, 5}, {0}, true);
    rg.src = lt(src_id, dt::f32, {2, 3, 4, 5}, cl);
    compiled_partition cp = rg.compile(eng);
    EXPECT_EQ(cp.query_logical_tensor(dst_id).get_dims(), (dims {1, 3, 4, 5}));
    EXPECT_EQ(cp.query_logical_tensor(dst_id).get_strides(), (dims {60, 1, 15, 3}));
    run_and_check(cp, eng, random_bits(dt::f32, span({2, 3, 4, 5}, cl), 3, true), {0}, true);

    rg = attr_graph(dt::f32, {2, 3, 4, 5}, {1}, false);
    rg.src = lt(src_id, dt::f32, {2, 3, 4, 5}, cl);
    EXPECT_EQ(rg.compile(eng).query_logical_tensor(dst_id).get_strides(), (dims {20, 5, 1}));

    rg = attr_graph(dt::f32, {2, 3, 4}, {1}, false);
    rg.src = lt(src_id, dt::f32, {2, 3, 4}, {1, 8, 2});  // dim 0 innermost
    cp = rg.compile(eng);
    EXPECT_EQ(cp.query_logical_tensor(dst_id).get_strides(), (dims {1, 2}));
    run_and_check(cp, eng, random_bits(dt::f32, span({2, 3, 4}, {1, 8, 2}), 5, true), {1}, false);

    rg = reduce_graph {};
    rg.src = lt(src_id, dt::f32, {2, 3, 4, 5}, cl);
    rg.axes_in = lt(axes_id, dt::s32, dims {1}, ltype::strided);
    rg.dst = lt(dst_id, dt::f32, dims {2, 4, 5}, ltype::any);
    rg.keep_dims = false;
    EXPECT_EQ(rg.compile(eng).query_logical_tensor(dst_id).get_strides(), (dims {20, 5, 1}));
    rg.dst = lt(dst_id, dt::f32, dims {2, 1, 4, 5}, ltype::any);
    rg.keep_dims = true;
    EXPECT_EQ(rg.compile(eng).query_logical_tensor(dst_id).get_strides(), (dims {20, 1, 5, 1}));
}

TEST_P(ReduceMaxApi, PermutedSrcAndPaddedDstStrides) {
    for (dt t : all_dts) {
        reduce_graph rg = attr_graph(t, {2, 3, 4}, {1}, false);
        rg.src = lt(src_id, t, {2, 3, 4}, {1, 8, 2}); // dim 0 innermost
        rg.dst = lt(dst_id, t, {2, 4}, {1, 3});        // column-major, padded
        compiled_partition cp = rg.compile(eng);
        EXPECT_EQ(cp.query_logical_tensor(dst_id).get_strides(), (dims {1, 3}));
        const auto src = random_bits(t, span({2, 3, 4}, {1, 8, 2}), 7, true);
        run_and_check(cp, eng, src, {1}, false);
    }
}

TEST_P(ReduceMaxApi, AxesFromAnInputTensor) {
    for (dt t : all_dts) {
        reduce_graph rg;
        rg.src = lt(src_id, t, {2, 3, 4}, ltype::strided);
        rg.axes_in = lt(axes_id, dt::s32, dims {2}, ltype::strided);
        rg.dst = lt(dst_id, t, dims {3}, ltype::strided); // known at compile
        compiled_partition cp = rg.compile(eng);
        const auto src = random_bits(t, 24, 11, true);
        // Same set of axes in any order and sign; reused kernels stay right.
        const std::vector<std::vector<int32_t>> orders
                = {{0, 2}, {2, 0}, {-1, -3}, {0, 2}};
        for (const auto &v : orders) {
            SCOPED_TRACE(std::to_string(v[0]) + "," + std::to_string(v[1]));
            run_and_check(cp, eng, src, {0, 2}, false, v.data());
        }
        // Empty axes tensor: identity, dst keeps src's shape.
        rg.axes_in = lt(axes_id, dt::s32, dims {0}, ltype::strided);
        rg.dst = lt(dst_id, t, {2, 3, 4}, ltype::strided);
        cp = rg.compile(eng);
        const int32_t none[1] = {0};
        run_and_check(cp, eng, src, {}, false, none);
    }
}

// Random shapes, axes (either sign), keep_dims and dtypes; seeded.
TEST_P(ReduceMaxApi, RandomSweepMatchesNaive) {
    std::mt19937_64 rng(0xA9150000u);
    for (int c = 0; c < 200; ++c) {
        const uint64_t seed = rng();
        std::mt19937_64 r(seed);
        const dt t = all_dts[r() % 3];
        const int nd = int(r() % 6);
        dims d;
        for (int i = 0; i < nd; ++i) d.push_back(r() % 12 == 0 ? 0 : 1 + r() % 4);
        std::vector<int64_t> axes;
        dims want;
        const bool keep = r() % 2;
        for (int i = 0; i < nd; ++i) {
            if (r() % 2) {
                axes.push_back(r() % 2 ? i : i - nd);
                if (keep) want.push_back(1);
            } else {
                want.push_back(d[i]);
            }
        }
        std::shuffle(axes.begin(), axes.end(), r);
        if (axes.empty()) want = d;
        check(t, d, axes, keep, want, seed, r() % 2);
        if (HasFailure()) break;
    }
}

// A caller that unmasked the invalid exception (feenableexcept) gets no
// SIGFPE from NaN inputs, and finds no flag raised: one problem per
// kernel family (inner rows, blocks of one and of several rows, vertical
// tiles, register columns, strided src, bf16/f16), each small enough to
// run on the calling thread, whose floating-point environment it is.
TEST_P(ReduceMaxApi, NaNInputsWithTheInvalidExceptionUnmasked) {
    struct shape {
        dt t;
        dims d, strides;
        std::vector<int64_t> axes;
    };
    const shape shapes[] = {
        {dt::f32, {2, 5000}, {}, {1}},
        {dt::f32, {512, 64}, {}, {1}},
        {dt::f32, {64, 8, 64}, {}, {0, 2}},
        {dt::f32, {64, 4096}, {}, {0}},
        {dt::f32, {512, 64}, {}, {0}},
        {dt::f32, {64, 100}, {200, 2}, {1}},
        {dt::f32, {64, 100}, {200, 2}, {0}},
        {dt::bf16, {512, 64}, {}, {1}},
        {dt::f16, {64, 4096}, {}, {0}},
        {dt::f16, {2, 5000}, {}, {1}},
    };
    uint64_t seed = 40;
    for (const shape &s : shapes) {
        SCOPED_TRACE(std::string(dt_name(s.t)) + " shape " + std::to_string(s.d[0]) + "x"
                + std::to_string(s.d[1]) + " axis " + std::to_string(s.axes[0]));
        reduce_graph rg = attr_graph(s.t, s.d, s.axes, false);
        if (!s.strides.empty()) rg.src = lt(src_id, s.t, s.d, s.strides);
        const compiled_partition cp = rg.compile(eng);
        const auto src = random_bits(s.t, span(s.d, rg.src.get_strides()), seed++, true);
        run_and_check(cp, eng, src, s.axes, false, nullptr, /*trap_invalid=*/true);
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, ReduceMaxApi,
        ::testing::Values(std::string(), std::string("ref")),
        [](const auto &info) {
            return info.param.empty() ? std::string("best") : info.param;
        });

// decisions.md: the thread that calls execute needs 256 KiB of stack. The
// deepest JIT plans there, on 2 threads: two-level (partials on the
// caller's stack) with tiles and their scratch, and 64K-column tiles with
// the widest scratch writing an NCHW dst from channels-last src through a
// transpose buffer; outer-first plans (a 64 KiB buffer between the
// stages): whole, its first stage two-level, and in pieces, both stages
// with tiles, the second writing NCHW through the transpose buffer; a
// two-stage plan's wide slabs.
TEST(ReduceMaxStack, ExecutesOnA256KiBThreadStack) {
    const engine eng2(engine::kind::cpu, 0, engine_options {2, "jit"});
    struct job {
        compiled_partition cp;
        std::vector<uint8_t> src;
        std::vector<int64_t> axes;
        bool keep;
    };
    std::vector<job> jobs;
    jobs.push_back({attr_graph(dt::f32, {256, 4096}, {0}, false).compile(eng2),
            random_bits(dt::f32, 256 * 4096, 17, true), {0}, false});
    reduce_graph cl = attr_graph(dt::f32, {16, 64, 32, 32}, {0}, true);
    const dims cl_strides {65536, 1, 2048, 64};
    cl.src = lt(src_id, dt::f32, {16, 64, 32, 32}, cl_strides);
    cl.dst = lt(dst_id, dt::f32, {1, 64, 32, 32}, ltype::strided);  // NCHW
    jobs.push_back({cl.compile(eng2),
            random_bits(dt::f32, span({16, 64, 32, 32}, cl_strides), 19, true), {0}, true});
    jobs.push_back({attr_graph(dt::f32, {64, 64, 7, 7}, {0, 1, 3}, true).compile(eng2),
            random_bits(dt::f32, 64 * 64 * 49, 23, true), {0, 1, 3}, true});
    reduce_graph pieces = attr_graph(dt::f32, {16, 512, 14, 14}, {0, 3}, true);
    const dims pieces_strides {100352, 1, 7168, 512};
    pieces.src = lt(src_id, dt::f32, {16, 512, 14, 14}, pieces_strides);
    pieces.dst = lt(dst_id, dt::f32, {1, 512, 14, 1}, ltype::strided);  // NCHW
    jobs.push_back({pieces.compile(eng2),
            random_bits(dt::f32, span({16, 512, 14, 14}, pieces_strides), 29, true), {0, 3},
            true});
    // bf16 channels-last reducing N and C, 25.7 MB: wide slabs from two
    // thirds of a 32 MiB L3 on (a 68 KiB slab room, a 68 KiB tile scratch).
    reduce_graph wide = attr_graph(dt::bf16, {64, 64, 56, 56}, {0, 1}, true);
    const dims wide_strides {200704, 1, 3584, 64};
    wide.src = lt(src_id, dt::bf16, {64, 64, 56, 56}, wide_strides);
    jobs.push_back({wide.compile(eng2),
            random_bits(dt::bf16, span({64, 64, 56, 56}, wide_strides), 31, true), {0, 1},
            true});
    // f32 channels-last reducing N and W of 5x5 maps: outer-first, its
    // first stage two-level (64 KiB of partials) over rows of 9000 bytes
    // taken 8 a period (a 76 KiB buffer, a 13 KiB tile scratch).
    reduce_graph lines = attr_graph(dt::f32, {512, 90, 5, 5}, {0, 3}, true);
    const dims lines_strides {2250, 1, 450, 90};
    lines.src = lt(src_id, dt::f32, {512, 90, 5, 5}, lines_strides);
    jobs.push_back({lines.compile(eng2),
            random_bits(dt::f32, span({512, 90, 5, 5}, lines_strides), 37, true), {0, 3}, true});
    // f32 NCHW reducing C and W of 33x33 maps: the two stages, the slab
    // over periods of 8 rows of 4356 bytes (a 20 KiB slab room, a 20 KiB
    // tile scratch, run_periodic's 76 KiB).
    jobs.push_back({attr_graph(dt::f32, {4, 64, 33, 33}, {1, 3}, true).compile(eng2),
            random_bits(dt::f32, 4 * 64 * 33 * 33, 41, true), {1, 3}, true});
    if (jobs[0].cp.get_kernel_name().rfind("jit:avx512", 0) == 0) {
        for (size_t i : {size_t(2), size_t(3), size_t(5)})
            EXPECT_NE(jobs[i].cp.get_kernel_name().find("outer_first"), std::string::npos)
                    << jobs[i].cp.get_kernel_name();
    }
    struct ctx {
        const std::vector<job> *jobs;
        const engine *eng;
    } c {&jobs, &eng2};
    pthread_attr_t attr;
    ASSERT_EQ(pthread_attr_init(&attr), 0);
    ASSERT_EQ(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, &attr, [](void *arg) -> void * {
        const ctx &cx = *static_cast<ctx *>(arg);
        for (const job &j : *cx.jobs) run_and_check(j.cp, *cx.eng, j.src, j.axes, j.keep);
        return nullptr;
    }, &c), 0);
    pthread_join(th, nullptr);
    pthread_attr_destroy(&attr);
}

} // namespace
} // namespace crest::api_test
