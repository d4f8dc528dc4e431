// Compiled with -mavx512f (only this file): the roofline's read loop.
#include "tools/benchgraph/roofline_loops.hpp"

#include <immintrin.h>

namespace benchgraph {

// Max over n floats; 8 independent accumulators keep enough loads in flight
// to saturate the memory system.
float max_f32_avx512(const float *p, size_t n) {
    __m512 acc[8];
    for (auto &a : acc) a = _mm512_set1_ps(-__builtin_inff());
    size_t i = 0;
    for (; i + 128 <= n; i += 128)
        for (int k = 0; k < 8; ++k)
            acc[k] = _mm512_max_ps(acc[k], _mm512_loadu_ps(p + i + 16 * k));
    for (; i + 16 <= n; i += 16)
        acc[0] = _mm512_max_ps(acc[0], _mm512_loadu_ps(p + i));
    for (int k = 1; k < 8; ++k) acc[0] = _mm512_max_ps(acc[0], acc[k]);
    // Horizontal max by hand: GCC 12's _mm512_reduce_max_ps trips
    // -Wuninitialized inside its own header.
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, acc[0]);
    float r = lanes[0];
    for (int k = 1; k < 16; ++k) r = lanes[k] > r ? lanes[k] : r;
    for (; i < n; ++i) r = p[i] > r ? p[i] : r;
    return r;
}

} // namespace benchgraph
