#include "tools/benchgraph/perf.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "backend/dnnl/dnnl_backend.hpp"
#include "src/threading.hpp"
#include "tools/benchgraph/data.hpp"

// oneDNN here is built with OpenMP: its team size follows omp_set_num_threads,
// not crest's arena. Weak, so that a TBB-built oneDNN links too.
extern "C" void omp_set_num_threads(int) __attribute__((weak));

namespace benchgraph {

float max_f32_avx512(const float *p, size_t n);
float max_f32_avx2(const float *p, size_t n);

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

float max_scalar(const float *p, size_t n) {
    float r = -__builtin_inff();
    for (size_t i = 0; i < n; ++i) r = p[i] > r ? p[i] : r;
    return r;
}

} // namespace

double time_median_ms(const std::function<void()> &f) {
    // Warm-up: caches, TLBs, lazily built kernels.
    auto w0 = clock_type::now();
    for (int i = 0; i < 3 || (i < 1000 && ms_since(w0) < 50.0); ++i) f();

    std::vector<double> times;
    auto t0 = clock_type::now();
    while (times.size() < 20 || (ms_since(t0) < 300.0 && times.size() < 1000000)) {
        auto s = clock_type::now();
        f();
        times.push_back(ms_since(s));
    }
    auto mid = times.begin() + times.size() / 2;
    std::nth_element(times.begin(), mid, times.end());
    return *mid;
}

roofline_result measure_roofline(size_t bytes, int threads) {
    roofline_result r;
    using fn_t = float (*)(const float *, size_t);
    fn_t fn = max_scalar;
    r.isa = "scalar";
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        fn = max_f32_avx512;
        r.isa = "avx512f";
    } else if (__builtin_cpu_supports("avx2")) {
        fn = max_f32_avx2;
        r.isa = "avx2";
    }
    const size_t n = std::max<size_t>(bytes / sizeof(float), 16);
    buffer buf(n * sizeof(float));
    auto *p = static_cast<float *>(buf.data());
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(i % 1000);

    crest::impl::thread_pool pool(threads);
    const int64_t nt = pool.size();
    // One result per cache line so that threads do not share lines.
    std::vector<float> results(static_cast<size_t>(nt) * 16);
    const size_t chunk = (n / nt + 15) / 16 * 16;
    r.ms = time_median_ms([&] {
        pool.parallel_for(nt, [&](int64_t t) {
            size_t b = std::min(n, static_cast<size_t>(t) * chunk);
            size_t e = std::min(n, b + chunk);
            if (t == nt - 1) e = n;
            results[static_cast<size_t>(t) * 16] = fn(p + b, e - b);
        });
    });
    r.gbps = r.ms > 0 ? static_cast<double>(n * sizeof(float)) / (r.ms * 1e6) : 0;
    return r;
}

onednn_result time_onednn_reduce(const crest::impl::reduce_problem &p,
        const void *src, void *dst, int threads) {
    onednn_result r;
    crest::impl::thread_pool pool(threads);
    // Same thread count as the crest engine, for a fair comparison.
    if (omp_set_num_threads) omp_set_num_threads(pool.size());
    auto k = crest::impl::dnnl_backend::make_reduce_max(p, pool, false, &r.why);
    if (!k) return r;
    r.impl = k->name();
    const void *in[] = {src};
    void *out[] = {dst};
    r.ms = time_median_ms([&] { k->execute(in, out); });
    r.ok = true;
    return r;
}

} // namespace benchgraph
