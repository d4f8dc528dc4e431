// oneDNN's OpenMP workers keep the floating-point environment of the thread
// that created them. Here that thread had FE_INVALID unmasked when the
// workers were made, so a oneDNN max meeting a NaN on a worker would kill
// the process with SIGFPE whatever the calling thread masks. The fastest
// backend under fpmath any must not call oneDNN then (src/exec/dispatch.cpp).
// An executable of its own: its OpenMP team outlives the test.
#include <omp.h>

#include "tests/api/api_test_util.hpp"

namespace crest::api_test {
namespace {

TEST(ReduceMaxFpmathAnyOpenMP, WorkersMadeWithTheInvalidExceptionUnmasked) {
    const engine eng(engine::kind::cpu, 0, engine_options {});
    const dims d {64, 4096};
    const reduce_graph rg = attr_graph(dt::f32, d, {1}, false);
    const compiled_partition cp = rg.compile(eng, fpmath_mode::any);
    if (cp.get_kernel_name().rfind("dnnl:", 0) != 0)
        GTEST_SKIP() << "oneDNN does not run the shape here: " << cp.get_kernel_name();
    feclearexcept(FE_ALL_EXCEPT);
    feenableexcept(FE_INVALID);
    int team = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp single
        team = omp_get_num_threads();
    }
    fedisableexcept(FE_INVALID);
    ASSERT_EQ(team, 2) << "no second OpenMP thread";
    const auto src = random_bits(dt::f32, d[0] * d[1], 90, true);
    run_and_check(cp, eng, src, {1}, false, nullptr, /*trap_invalid=*/true);
}

} // namespace
} // namespace crest::api_test
