// Under fpmath any, where oneDNN's primitives run: a caller that unmasked
// FE_INVALID (feenableexcept) gets no SIGFPE from NaN inputs and no flag
// raised, and a caller with every exception masked keeps its own flags.
// oneDNN's maxes raise the invalid flag on NaN as crest's do.
#include <cstring>

#include "tests/api/api_test_util.hpp"

namespace crest::api_test {
namespace {

struct dnnl_shape {
    dt t;
    dims d;
    std::vector<int64_t> axes;
};

// Reductions over the innermost dims, which oneDNN runs with its JIT.
const dnnl_shape dnnl_shapes[] = {
    {dt::f32, {64, 4096}, {1}},
    {dt::f32, {16, 32, 256}, {1, 2}},
    {dt::bf16, {64, 4096}, {1}},
};

// "" (the fastest backend that fits) or "dnnl" (oneDNN only).
class ReduceMaxFpmathAny : public ::testing::TestWithParam<std::string> {
protected:
    engine eng {engine::kind::cpu, 0, engine_options {0, GetParam()}};

    // The compiled partition, or nothing where oneDNN does not run the
    // shape on this machine (bf16 without AVX-512).
    std::optional<compiled_partition> compile(const dnnl_shape &s) {
        const reduce_graph rg = attr_graph(s.t, s.d, s.axes, false);
        try {
            compiled_partition cp = rg.compile(eng, fpmath_mode::any);
            if (cp.get_kernel_name().rfind("dnnl:", 0) == 0) return cp;
        } catch (const crest::error &) {
        }
        return std::nullopt;
    }

    static std::vector<uint8_t> src_of(const dnnl_shape &s, uint64_t seed) {
        return random_bits(s.t, span(s.d, dense_strides(s.d)), seed, true);
    }
};

// The fastest backend runs crest's exact kernel where the caller traps on
// an exception: its NaNs come out (oneDNN would lose most of them). With
// oneDNN forced, the calling thread runs it masked and gets its
// environment back; the result is the masked run's.
TEST_P(ReduceMaxFpmathAny, NaNInputsWithTheInvalidExceptionUnmasked) {
    uint64_t seed = 70;
    int ran = 0;
    for (const dnnl_shape &s : dnnl_shapes) {
        SCOPED_TRACE(std::string(dt_name(s.t)) + " axes " + std::to_string(s.axes.size()));
        const auto cp = compile(s);
        if (!cp) continue;
        ++ran;
        const auto src = src_of(s, seed++);
        if (GetParam().empty()) {
            run_and_check(*cp, eng, src, s.axes, false, nullptr, /*trap_invalid=*/true);
            std::string trapping_name;
            leaves_invalid_flag_when_trapping([&] { trapping_name = cp->get_kernel_name(); });
            EXPECT_NE(trapping_name.rfind("dnnl:", 0), 0u)
                    << "the name of what runs while the caller traps: " << trapping_name;
            continue;
        }
        const lt dst = cp->query_logical_tensor(dst_id);
        const int64_t n = span(dst.get_dims(), dst.get_strides());
        guarded masked(s.t, n), trapping(s.t, n);
        stream strm(eng);
        const tensor in(cp->query_logical_tensor(src_id), eng, const_cast<uint8_t *>(src.data()));
        cp->execute(strm, {in}, {tensor(dst, eng, masked.data())});
        EXPECT_FALSE(leaves_invalid_flag_when_trapping(
                [&] { cp->execute(strm, {in}, {tensor(dst, eng, trapping.data())}); }));
        for (int64_t i = 0; i < n; ++i) EXPECT_EQ(trapping.at(i), masked.at(i)) << "dst " << i;
    }
    EXPECT_GT(ran, 0) << "oneDNN ran none of the shapes";
}

// Every exception masked: the flags the caller had stay, and the NaNs'
// invalid flag is not added to them.
TEST_P(ReduceMaxFpmathAny, CallersFlagsKept) {
    uint64_t seed = 80;
    for (const dnnl_shape &s : dnnl_shapes) {
        SCOPED_TRACE(std::string(dt_name(s.t)) + " axes " + std::to_string(s.axes.size()));
        const auto cp = compile(s);
        if (!cp) continue;
        const auto src = src_of(s, seed++);
        const lt dst = cp->query_logical_tensor(dst_id);
        guarded out(s.t, span(dst.get_dims(), dst.get_strides()));
        stream strm(eng);
        feclearexcept(FE_ALL_EXCEPT);
        feraiseexcept(FE_DIVBYZERO);
        cp->execute(strm, {tensor(cp->query_logical_tensor(src_id), eng,
                                  const_cast<uint8_t *>(src.data()))},
                {tensor(dst, eng, out.data())});
        EXPECT_NE(fetestexcept(FE_DIVBYZERO), 0) << "the caller's flag was cleared";
        EXPECT_EQ(fetestexcept(FE_INVALID), 0) << "the NaNs' flag was left raised";
        feclearexcept(FE_ALL_EXCEPT);
    }
}

// The engine's own choice under fpmath any gives oneDNN only outputs of
// at least 2048 elements (src/exec/dispatch.cpp): rows of 4 and 1024 go to
// crest's kernels wherever they run, rows of 4096 to oneDNN where it has
// a JIT kernel for them; with oneDNN forced, short rows go to oneDNN too.
TEST(ReduceMaxFpmathAnyChoice, OneDnnTakesLongRowsOnly) {
    auto name = [](const std::string &backend, const dims &d) {
        const engine eng(engine::kind::cpu, 0, engine_options {0, backend});
        return attr_graph(dt::f32, d, {1}, false).compile(eng, fpmath_mode::any).get_kernel_name();
    };
    EXPECT_NE(name("", {4096, 4}).rfind("dnnl:", 0), 0u);
    EXPECT_NE(name("", {64, 1024}).rfind("dnnl:", 0), 0u);
    EXPECT_EQ(name("dnnl", {4096, 4}).rfind("dnnl:", 0), 0u);
    const std::string forced = name("dnnl", {64, 4096}), best = name("", {64, 4096});
    if (forced.rfind("dnnl:jit", 0) == 0) EXPECT_EQ(best, forced);
    else EXPECT_NE(best.rfind("dnnl:", 0), 0u) << best;
}

INSTANTIATE_TEST_SUITE_P(Backends, ReduceMaxFpmathAny,
        ::testing::Values(std::string(), std::string("dnnl")),
        [](const auto &info) { return info.param.empty() ? std::string("best") : info.param; });

} // namespace
} // namespace crest::api_test
