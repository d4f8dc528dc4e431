// Google Benchmark of the JIT ReduceMax kernels. bytes_per_second counts the
// src bytes read; compare it with the roofline_* cases, a plain AVX-512 max
// over a contiguous buffer on the same threads (no NaN rule: the ceiling).
// Buffers are first-touched before timing (a fresh page costs ~10 us here)
// and big ones ask for huge pages.
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <immintrin.h>

#include "backend/jit/jit_backend.hpp"
#include "backend/kernel.hpp"
#include "src/threading.hpp"

using namespace crest::impl;

namespace {

// CREST_BENCH_THREADS overrides the default of 2 threads.
const thread_pool &pool() {
    static thread_pool p([] {
        const char *e = std::getenv("CREST_BENCH_THREADS");
        return e ? std::atoi(e) : 2;
    }());
    return p;
}

// The machine is shared: report the best of several repetitions (the
// `max` row's bytes_per_second), the run least disturbed by other work.
double best(const std::vector<double> &v) {
    double m = v.empty() ? 0 : v[0];
    for (double x : v) m = x > m ? x : m;
    return m;
}

struct buffer {
    void *p = nullptr;
    size_t n = 0;
    explicit buffer(size_t bytes) : n(bytes) {
        const size_t align = 2u << 20;
        const size_t sz = (bytes + align - 1) / align * align;
        p = std::aligned_alloc(align, sz ? sz : align);
        if (sz >= align) madvise(p, sz, MADV_HUGEPAGE);
        // First touch outside timing; small integers are valid in every dtype.
        auto *h = static_cast<uint16_t *>(p);
        for (size_t i = 0; i < sz / 2; ++i)
            h[i] = static_cast<uint16_t>(0x3c00 + (i * 7919) % 1000);
    }
    ~buffer() { std::free(p); }
};

size_t esize(data_type dt) { return dt == data_type::f32 ? 4 : 2; }

dims_t dense(const dims_t &d) {
    dims_t s(d.size());
    int64_t acc = 1;
    for (int i = (int)d.size() - 1; i >= 0; --i) { s[i] = acc; acc *= d[i]; }
    return s;
}

dims_t in_order(const dims_t &d, const std::vector<int> &order) {
    dims_t s(d.size());
    int64_t acc = 1;
    for (int i = (int)order.size() - 1; i >= 0; --i) { s[order[i]] = acc; acc *= d[order[i]]; }
    return s;
}

__attribute__((target("avx512f"))) float plain_max(const float *p, size_t n) {
    __m512 a0 = _mm512_set1_ps(-1e30f), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i + 64 <= n; i += 64) {
        a0 = _mm512_max_ps(a0, _mm512_loadu_ps(p + i));
        a1 = _mm512_max_ps(a1, _mm512_loadu_ps(p + i + 16));
        a2 = _mm512_max_ps(a2, _mm512_loadu_ps(p + i + 32));
        a3 = _mm512_max_ps(a3, _mm512_loadu_ps(p + i + 48));
    }
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, _mm512_max_ps(_mm512_max_ps(a0, a1), _mm512_max_ps(a2, a3)));
    float m = lanes[0];
    for (float v : lanes) m = v > m ? v : m;
    return m;
}

// The same bytes read by the plain max, on the same threads, from a buffer
// of its own (same cache level as the case when both are the same size).
double roofline_seconds(size_t bytes) {
    static buffer roof(size_t(256) << 20);
    bytes = std::min(bytes, roof.n);
    const size_t n = bytes / 4;
    const int nt = pool().size() < 2 ? pool().size() : 2;
    float res[2 * 16];
    const auto t0 = std::chrono::steady_clock::now();
    pool().parallel_for(nt, [&](int64_t t) {
        res[t * 16] = plain_max(static_cast<const float *>(roof.p) + t * n / nt, n / nt);
    });
    benchmark::DoNotOptimize(res);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// negative: every element's sign bit set (log-probabilities: the 16-bit
// tiles then keep the unsigned min per column, design.md).
void run_case_signed(benchmark::State &st, data_type dt, dims_t d, uint32_t mask,
        std::vector<int> order, bool negative) {
    reduce_problem p;
    p.dt = dt;
    p.dims = d;
    p.reduce_mask = mask;
    p.src_strides = order.empty() ? dense(d) : in_order(d, order);
    dims_t kd = d;
    for (size_t i = 0; i < d.size(); ++i)
        if ((mask >> i) & 1u) kd[i] = 1;
    p.dst_strides = dense(kd);
    for (size_t i = 0; i < d.size(); ++i)
        if ((mask >> i) & 1u) p.dst_strides[i] = 0;
    size_t n_in = 1, n_out = 1;
    for (size_t i = 0; i < d.size(); ++i) { n_in *= d[i]; n_out *= kd[i]; }
    std::string why;
    kernel_ptr k = jit::make_reduce_max(p, pool(), &why);
    if (!k) { st.SkipWithError(why.c_str()); return; }
    buffer src(n_in * esize(dt)), dst(n_out * esize(dt));
    if (negative)
        for (size_t i = 0; i < n_in * esize(dt) / 2; ++i)
            static_cast<uint16_t *>(src.p)[i] |= 0x8000;
    const void *in[] = {src.p};
    void *out[] = {dst.p};
    k->execute(in, out);
    // Interleaved with the kernel, the roofline sees the same load from the
    // other tenants of this machine: pct_roofline is the fair ratio.
    const size_t bytes = n_in * esize(dt);
    const bool with_roof = bytes >= (size_t(1) << 20);
    double t_roof = 0, t_kernel = 0;
    for (auto _ : st) {
        const auto t0 = std::chrono::steady_clock::now();
        k->execute(in, out);
        benchmark::ClobberMemory();
        t_kernel += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (with_roof) {
            st.PauseTiming();
            t_roof += roofline_seconds(bytes) * double(bytes)
                      / double(std::min(bytes, size_t(256) << 20));
            st.ResumeTiming();
        }
    }
    st.SetBytesProcessed(int64_t(st.iterations()) * int64_t(bytes));
    if (with_roof) st.counters["pct_roofline"] = 100.0 * t_roof / t_kernel;
    st.SetLabel(k->name());
}

void run_case(benchmark::State &st, data_type dt, dims_t d, uint32_t mask,
        std::vector<int> order) {
    run_case_signed(st, dt, d, mask, order, false);
}

void run_case_negative(benchmark::State &st, data_type dt, dims_t d, uint32_t mask,
        std::vector<int> order) {
    run_case_signed(st, dt, d, mask, order, true);
}

void roofline(benchmark::State &st, size_t bytes) {
    buffer src(bytes);
    const size_t n = bytes / 4;
    float res[2 * 16];
    for (auto _ : st) {
        const int nt = pool().size() < 2 ? pool().size() : 2;
        pool().parallel_for(nt, [&](int64_t t) {
            res[t * 16] = plain_max(static_cast<const float *>(src.p) + t * n / nt, n / nt);
        });
        benchmark::DoNotOptimize(res);
    }
    st.SetBytesProcessed(int64_t(st.iterations()) * int64_t(bytes));
}

const data_type f32 = data_type::f32, bf16 = data_type::bf16, f16 = data_type::f16;

#define SETTINGS UseRealTime()->MinTime(0.1)->Repetitions(5) \
        ->ComputeStatistics("max", best)->ReportAggregatesOnly(true)
#define CASE(name, ...) BENCHMARK_CAPTURE(run_case, name, __VA_ARGS__)->SETTINGS
#define NEG_CASE(name, ...) BENCHMARK_CAPTURE(run_case_negative, name, __VA_ARGS__)->SETTINGS

BENCHMARK_CAPTURE(roofline, 256MiB, size_t(256) << 20)->SETTINGS;
BENCHMARK_CAPTURE(roofline, 8MiB, size_t(8) << 20)->SETTINGS;

CASE(f32_1x128x150x150_a1, f32, {1, 128, 150, 150}, 0b0010, {});
CASE(f32_64x256x56x56_a0, f32, {64, 256, 56, 56}, 0b0001, {});
CASE(f32_64x256x56x56_a23, f32, {64, 256, 56, 56}, 0b1100, {});
CASE(f32_64x256x56x56_a3, f32, {64, 256, 56, 56}, 0b1000, {});
CASE(f32_1x1x4096x4096_a2, f32, {1, 1, 4096, 4096}, 0b0100, {});
CASE(f32_1x1x4096x4096_a3, f32, {1, 1, 4096, 4096}, 0b1000, {});
CASE(f32_all_64MiB, f32, {16 << 20}, 1, {});
CASE(f32_tiny_1x1000_a1, f32, {1, 1000}, 0b10, {});
CASE(f32_tiny_32x128_a1, f32, {32, 128}, 0b10, {});
// Channels-last (NHWC in memory) and transposed layouts.
CASE(f32_nhwc_64x256x56x56_a1, f32, {64, 256, 56, 56}, 0b0010, {0, 2, 3, 1});
CASE(f32_nhwc_32x64x56x56_a1, f32, {32, 64, 56, 56}, 0b0010, {0, 2, 3, 1});
CASE(f32_nhwc_32x64x56x56_a0, f32, {32, 64, 56, 56}, 0b0001, {0, 2, 3, 1});
CASE(f32_nhwc_64x256x56x56_a23, f32, {64, 256, 56, 56}, 0b1100, {0, 2, 3, 1});
CASE(f32_nhwc_64x256x56x56_a0, f32, {64, 256, 56, 56}, 0b0001, {0, 2, 3, 1});
// Middle axes, 64 MiB.
CASE(f32_64x64x64x64_a1, f32, {64, 64, 64, 64}, 0b0010, {});
CASE(f32_64x64x64x64_a02, f32, {64, 64, 64, 64}, 0b0101, {});
CASE(f32_64x64x64x64_a03, f32, {64, 64, 64, 64}, 0b1001, {});
CASE(f32_64x64x64x64_a13, f32, {64, 64, 64, 64}, 0b1010, {});
CASE(f32_T_4096x4096_a0, f32, {4096, 4096}, 0b01, {1, 0});
CASE(f32_T_4096x4096_a1, f32, {4096, 4096}, 0b10, {1, 0});

CASE(bf16_1x128x150x150_a1, bf16, {1, 128, 150, 150}, 0b0010, {});
CASE(bf16_64x256x56x56_a0, bf16, {64, 256, 56, 56}, 0b0001, {});
CASE(bf16_64x256x56x56_a23, bf16, {64, 256, 56, 56}, 0b1100, {});
CASE(bf16_1x1x4096x4096_a2, bf16, {1, 1, 4096, 4096}, 0b0100, {});
CASE(bf16_1x1x4096x4096_a3, bf16, {1, 1, 4096, 4096}, 0b1000, {});
CASE(bf16_all_64MiB, bf16, {32 << 20}, 1, {});
CASE(bf16_nhwc_64x256x56x56_a23, bf16, {64, 256, 56, 56}, 0b1100, {0, 2, 3, 1});

CASE(f16_1x128x150x150_a1, f16, {1, 128, 150, 150}, 0b0010, {});
CASE(f16_64x256x56x56_a0, f16, {64, 256, 56, 56}, 0b0001, {});
CASE(f16_64x256x56x56_a23, f16, {64, 256, 56, 56}, 0b1100, {});
CASE(f16_1x1x4096x4096_a2, f16, {1, 1, 4096, 4096}, 0b0100, {});
NEG_CASE(f16_neg_1x1x4096x4096_a2, f16, {1, 1, 4096, 4096}, 0b0100, {});
CASE(f16_1x1x4096x4096_a3, f16, {1, 1, 4096, 4096}, 0b1000, {});
CASE(f16_all_64MiB, f16, {32 << 20}, 1, {});
CASE(f16_nhwc_64x256x56x56_a1, f16, {64, 256, 56, 56}, 0b0010, {0, 2, 3, 1});

// Cache-sized (1 to 4 MiB, in L3): what the kernels do when memory is not
// the limit. With CREST_BENCH_THREADS=1 these show each kernel's compute ceiling.
CASE(l3_f32_4x64x56x56_a3, f32, {4, 64, 56, 56}, 0b1000, {});
CASE(l3_f32_4x64x56x56_a23, f32, {4, 64, 56, 56}, 0b1100, {});
CASE(l3_f32_8x32x64x64_a0, f32, {8, 32, 64, 64}, 0b0001, {});
CASE(l3_f32_1x1x1024x1024_a2, f32, {1, 1, 1024, 1024}, 0b0100, {});
CASE(l3_f32_4x64x64x64_a1, f32, {4, 64, 64, 64}, 0b0010, {});
CASE(l3_f32_4x64x64x64_a02, f32, {4, 64, 64, 64}, 0b0101, {});
CASE(l3_f32_4x64x64x64_a03, f32, {4, 64, 64, 64}, 0b1001, {});
CASE(l3_f32_4x64x64x64_a13, f32, {4, 64, 64, 64}, 0b1010, {});
CASE(l3_f32_nhwc_4x64x56x56_a0, f32, {4, 64, 56, 56}, 0b0001, {0, 2, 3, 1});
CASE(l3_bf16_4x64x56x56_a23, bf16, {4, 64, 56, 56}, 0b1100, {});
CASE(l3_bf16_8x32x64x64_a0, bf16, {8, 32, 64, 64}, 0b0001, {});
CASE(l3_bf16_1x1x1024x1024_a2, bf16, {1, 1, 1024, 1024}, 0b0100, {});
CASE(l3_bf16_1x1x1024x1024_a3, bf16, {1, 1, 1024, 1024}, 0b1000, {});
CASE(l3_f16_4x64x56x56_a23, f16, {4, 64, 56, 56}, 0b1100, {});
CASE(l3_f16_8x32x64x64_a0, f16, {8, 32, 64, 64}, 0b0001, {});
CASE(l3_f16_4x64x64x64_a02, f16, {4, 64, 64, 64}, 0b0101, {});
CASE(l3_bf16_4x64x64x64_a02, bf16, {4, 64, 64, 64}, 0b0101, {});
CASE(l3_f16_1x1x1024x1024_a2, f16, {1, 1, 1024, 1024}, 0b0100, {});
NEG_CASE(l3_f16_neg_1x1x1024x1024_a2, f16, {1, 1, 1024, 1024}, 0b0100, {});
// Tiny inner rows (gen_inner_tiny.cpp): rows of 7 and 14 bytes-alike.
CASE(l3_bf16_8x64x56x56_a3, bf16, {8, 64, 56, 56}, 0b1000, {});
CASE(l3_bf16_8x64x56x56_a1, bf16, {8, 64, 56, 56}, 0b0010, {});
CASE(l3_f32_4x2048x7x7_a3, f32, {4, 2048, 7, 7}, 0b1000, {});
CASE(l3_f32_4x512x14x14_a3, f32, {4, 512, 14, 14}, 0b1000, {});
CASE(l3_bf16_8x512x14x14_a3, bf16, {8, 512, 14, 14}, 0b1000, {});
CASE(l3_bf16_8x2048x7x7_a3, bf16, {8, 2048, 7, 7}, 0b1000, {});
// Channel maxes of small maps (16-bit: tiles over periods of rows).
CASE(l3_f32_4x128x28x28_a1, f32, {4, 128, 28, 28}, 0b0010, {});
CASE(l3_bf16_8x128x28x28_a1, bf16, {8, 128, 28, 28}, 0b0010, {});
// Channels-last src, batch reduced, dense NCHW dst: the 16-bit transposed
// output (transpose.cpp).
CASE(l3_bf16_nhwc_4x64x56x56_a0, bf16, {4, 64, 56, 56}, 0b0001, {0, 2, 3, 1});
NEG_CASE(l3_bf16_neg_8x32x64x64_a0, bf16, {8, 32, 64, 64}, 0b0001, {});

// 256 MiB (200 MiB for channels-last): past what the L3 can serve, so the
// interleaved roofline reads memory in every hour, unlike the 16-64 MiB
// cases whose roofline this VM partly serves from cache (performance.md).
CASE(mem_f32_16384x4096_a0, f32, {16384, 4096}, 0b01, {});
CASE(mem_f32_256x64x64x64_a1, f32, {256, 64, 64, 64}, 0b0010, {});
CASE(mem_f32_256x64x64x64_a02, f32, {256, 64, 64, 64}, 0b0101, {});
CASE(mem_f32_256x64x64x64_a03, f32, {256, 64, 64, 64}, 0b1001, {});
CASE(mem_f32_256x64x64x64_a13, f32, {256, 64, 64, 64}, 0b1010, {});
CASE(mem_f32_nhwc_256x64x56x56_a1, f32, {256, 64, 56, 56}, 0b0010, {0, 2, 3, 1});
CASE(mem_f16_32768x4096_a0, f16, {32768, 4096}, 0b01, {});
CASE(mem_bf16_256x128x64x64_a0, bf16, {256, 128, 64, 64}, 0b0001, {});

} // namespace

BENCHMARK_MAIN();
