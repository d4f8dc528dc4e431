// Compiled with -mavx2 (only this file): the roofline's read loop on
// machines without AVX-512.
#include "tools/benchgraph/roofline_loops.hpp"

#include <immintrin.h>

namespace benchgraph {

float max_f32_avx2(const float *p, size_t n) {
    __m256 acc[8];
    for (auto &a : acc) a = _mm256_set1_ps(-__builtin_inff());
    size_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int k = 0; k < 8; ++k)
            acc[k] = _mm256_max_ps(acc[k], _mm256_loadu_ps(p + i + 8 * k));
    for (; i + 8 <= n; i += 8)
        acc[0] = _mm256_max_ps(acc[0], _mm256_loadu_ps(p + i));
    for (int k = 1; k < 8; ++k) acc[0] = _mm256_max_ps(acc[0], acc[k]);
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, acc[0]);
    float r = lanes[0];
    for (int k = 1; k < 8; ++k) r = lanes[k] > r ? lanes[k] : r;
    for (; i < n; ++i) r = p[i] > r ? p[i] : r;
    return r;
}

} // namespace benchgraph
