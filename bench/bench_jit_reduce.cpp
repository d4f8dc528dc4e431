// Google Benchmark of the JIT ReduceMax kernels. bytes_per_second counts the
// src bytes read; compare it with the roofline_* cases, a plain AVX-512 max
// over a contiguous buffer on the same threads (no NaN rule: the ceiling).
// Buffers are first-touched before timing (a fresh page costs ~10 us here)
// and big ones ask for huge pages.
#include <sys/mman.h>

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

const thread_pool &pool() {
    static thread_pool p(2);
    return p;
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
        for (size_t i = 0; i < sz / 2; ++i) h[i] = static_cast<uint16_t>(0x3c00 + (i * 7919) % 1000);
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

void run_case(benchmark::State &st, data_type dt, dims_t d, uint32_t mask,
        std::vector<int> order) {
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
    const void *in[] = {src.p};
    void *out[] = {dst.p};
    k->execute(in, out);
    for (auto _ : st) {
        k->execute(in, out);
        benchmark::ClobberMemory();
    }
    st.SetBytesProcessed(int64_t(st.iterations()) * int64_t(n_in * esize(dt)));
    st.SetLabel(k->name());
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

void roofline(benchmark::State &st, size_t bytes) {
    buffer src(bytes);
    const size_t n = bytes / 4;
    float res[2 * 16];
    for (auto _ : st) {
        pool().parallel_for(2, [&](int64_t t) {
            res[t * 16] = plain_max(static_cast<const float *>(src.p) + t * n / 2, n / 2);
        });
        benchmark::DoNotOptimize(res);
    }
    st.SetBytesProcessed(int64_t(st.iterations()) * int64_t(bytes));
}

const data_type f32 = data_type::f32, bf16 = data_type::bf16, f16 = data_type::f16;

#define CASE(name, ...) BENCHMARK_CAPTURE(run_case, name, __VA_ARGS__)->UseRealTime()->MinTime(0.3)

BENCHMARK_CAPTURE(roofline, 256MiB, size_t(256) << 20)->UseRealTime()->MinTime(0.5);
BENCHMARK_CAPTURE(roofline, 8MiB, size_t(8) << 20)->UseRealTime()->MinTime(0.3);

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
CASE(f32_nhwc_64x256x56x56_a23, f32, {64, 256, 56, 56}, 0b1100, {0, 2, 3, 1});
CASE(f32_nhwc_64x256x56x56_a0, f32, {64, 256, 56, 56}, 0b0001, {0, 2, 3, 1});
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
CASE(f16_1x1x4096x4096_a3, f16, {1, 1, 4096, 4096}, 0b1000, {});
CASE(f16_all_64MiB, f16, {32 << 20}, 1, {});
CASE(f16_nhwc_64x256x56x56_a1, f16, {64, 256, 56, 56}, 0b0010, {0, 2, 3, 1});

} // namespace

BENCHMARK_MAIN();
