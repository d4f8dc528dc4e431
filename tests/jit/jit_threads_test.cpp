// Concurrency of the JIT backend (these also run under ThreadSanitizer, so
// they stay short): one kernel executed from several threads at once, and
// many makes racing on the kernel cache.
#include <thread>

#include "backend/jit/kernel_cache.hpp"
#include "tests/jit/jit_test_util.hpp"

namespace crest::impl::jit::test {
namespace {

TEST(JitThreads, OneKernelFourCallers) {
    set_max_isa_for_testing(nullptr);
    const split_above_64k split;  // each call also runs on the pool
    const dims_t shapes[] = {{64, 3000}, {3000, 64}, {1 << 18}, {30, 40, 50}};
    const uint32_t masks[] = {2, 1, 1, 5};
    for (int s = 0; s < 4; ++s) {
        for (data_type dt : {data_type::f32, data_type::bf16}) {
            const reduce_problem p = make_problem(dt, shapes[s], masks[s]);
            std::string why;
            kernel_ptr k = make_reduce_max(p, pool2(), &why);
            ASSERT_TRUE(k) << why;
            const size_t ns = span(p.dims, p.src_strides), nd = span(p.dims, p.dst_strides);
            const size_t es = esize(dt);
            std::vector<guarded> src, dst;
            std::vector<std::vector<uint8_t>> serial(4);
            for (int t = 0; t < 4; ++t) {
                src.emplace_back(ns * es);
                dst.emplace_back(nd * es, dst_fill);
                std::mt19937 rng(100 + t);
                for (size_t i = 0; i < ns; ++i)
                    put(src[t].data(), i, dt, random_bits(dt, rng, false));
                if (t == 2) put(src[t].data(), ns / 2, dt, qnan_bits(dt));
                serial[t].assign(nd * es, 0);
                const void *in[] = {src[t].data()};
                void *out[] = {serial[t].data()};
                k->execute(in, out);
            }
            std::vector<std::thread> th;
            for (int t = 0; t < 4; ++t)
                th.emplace_back([&, t] {
                    const void *in[] = {src[t].data()};
                    void *out[] = {dst[t].data()};
                    for (int rep = 0; rep < 3; ++rep) k->execute(in, out);
                });
            for (auto &x : th) x.join();
            for (int t = 0; t < 4; ++t) {
                EXPECT_EQ(0, std::memcmp(dst[t].data(), serial[t].data(), nd * es)) << k->name();
                EXPECT_TRUE(dst[t].guards_ok());
            }
        }
    }
}

TEST(JitThreads, ConcurrentMakesShareTheCache) {
    set_max_isa_for_testing(nullptr);
    std::vector<reduce_problem> probs;
    for (data_type dt : {data_type::f32, data_type::bf16, data_type::f16})
        for (uint32_t mask = 1; mask < 8; ++mask)
            probs.push_back(make_problem(dt, {6, 70, 33}, mask));
    std::vector<std::vector<kernel_ptr>> made(4);
    std::vector<std::thread> th;
    for (int t = 0; t < 4; ++t)
        th.emplace_back([&, t] {
            for (int rep = 0; rep < 3; ++rep)
                for (size_t i = 0; i < probs.size(); ++i) {
                    std::string why;
                    made[t].push_back(
                            make_reduce_max(probs[(i + t * 5) % probs.size()], pool2(), &why));
                }
        });
    for (auto &x : th) x.join();
    for (auto &v : made)
        for (auto &k : v) EXPECT_TRUE(k);
    const size_t cached = code_cache_size();
    for (const auto &p : probs) check(p);
    EXPECT_EQ(cached, code_cache_size());  // every config already generated
}

// The make of a config already generated reuses its code. How long such a
// make takes is measured by bench/bench_partition_api (cache-hit compile),
// not asserted here: a wall time is no test on a shared machine, nor under
// a sanitizer.
TEST(JitThreads, SecondMakeIsACacheHit) {
    set_max_isa_for_testing(nullptr);
    const reduce_problem p = make_problem(data_type::bf16, {64, 256, 56, 56}, 1);
    std::string why;
    kernel_ptr first = make_reduce_max(p, pool2(), &why);
    ASSERT_TRUE(first) << why;
    const size_t cached = code_cache_size();
    for (int i = 0; i < 50; ++i) {
        kernel_ptr k = make_reduce_max(p, pool2(), &why);
        ASSERT_TRUE(k) << why;
        EXPECT_EQ(first->name(), k->name());
    }
    EXPECT_EQ(cached, code_cache_size());
}

} // namespace
} // namespace crest::impl::jit::test
