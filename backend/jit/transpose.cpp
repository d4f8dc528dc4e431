#include "backend/jit/transpose.hpp"

// GCC 12 flags its own AVX-512 shuffle intrinsics (they start from
// _mm512_undefined_ps) as -Wuninitialized; the values are all defined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstring>

namespace crest::impl::jit {

namespace {

void scalar_block(const float *buf, int64_t cn, int64_t p0, int64_t p1,
        int64_t c0, int64_t c1, char *dst, int64_t c_stride) {
    for (int64_t c = c0; c < c1; ++c)
        for (int64_t p = p0; p < p1; ++p)
            std::memcpy(dst + p * 4 + c * c_stride, buf + p * cn + c, 4);
}

// 16 rows of 16 floats (row r at in + r * ld) to 16 columns: out row i
// (at out + i * c_stride) holds element i of every input row. ahead, if
// not null: the lines at ahead + i * c_stride are prefetched for writing.
__attribute__((target("avx512f,prfchw"))) void transpose16(const float *in,
        int64_t ld, char *out, int64_t c_stride, const char *ahead) {
    __m512 r[16], t[16];
    for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(in + i * ld);
    // Interleave pairs of rows, then pairs of pairs (within 128-bit lanes).
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xee);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xee);
    }
    // Now r[4q + k] lane group g holds rows 4q..4q+3 of column 4g + k.
    // Gather the four row quads of each column group across 128-bit lanes.
    for (int k = 0; k < 4; ++k) {
        const __m512 a = _mm512_shuffle_f32x4(r[k], r[4 + k], 0x88);
        const __m512 b = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0x88);
        const __m512 c = _mm512_shuffle_f32x4(r[k], r[4 + k], 0xdd);
        const __m512 d = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0xdd);
        t[k] = _mm512_shuffle_f32x4(a, b, 0x88);       // column k
        t[8 + k] = _mm512_shuffle_f32x4(a, b, 0xdd);   // column 8 + k
        t[4 + k] = _mm512_shuffle_f32x4(c, d, 0x88);   // column 4 + k
        t[12 + k] = _mm512_shuffle_f32x4(c, d, 0xdd);  // column 12 + k
    }
    for (int i = 0; i < 16; ++i)
        _mm512_storeu_ps(reinterpret_cast<float *>(out + i * c_stride), t[i]);
    if (ahead)
        for (int i = 0; i < 16; ++i) __builtin_prefetch(ahead + i * c_stride, 1, 3);
}

// 8 rows of 8 floats to 8 columns, as transpose16 with 256-bit vectors.
__attribute__((target("avx2,prfchw"))) void transpose8(const float *in, int64_t ld,
        char *out, int64_t c_stride, const char *ahead) {
    __m256 r[8], t[8];
    for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(in + i * ld);
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
        r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
    }
    // r[k] (k < 4) holds rows 0-3 of columns k and 4 + k in its 128-bit
    // halves, r[4 + k] rows 4-7 of the same columns.
    for (int k = 0; k < 4; ++k) {
        t[k] = _mm256_permute2f128_ps(r[k], r[4 + k], 0x20);      // column k
        t[4 + k] = _mm256_permute2f128_ps(r[k], r[4 + k], 0x31);  // column 4 + k
    }
    for (int i = 0; i < 8; ++i)
        _mm256_storeu_ps(reinterpret_cast<float *>(out + i * c_stride), t[i]);
    if (ahead)
        for (int i = 0; i < 8; ++i) __builtin_prefetch(ahead + i * c_stride, 1, 3);
}

} // namespace

void transpose_store_f32(const float *buf, int64_t m, int64_t cn, char *dst,
        int64_t c_stride, int lanes, int64_t next_m) {
    const int64_t w = lanes, mw = m / w * w, cw = cn / w * w;
    for (int64_t p = 0; p < mw; p += w)
        for (int64_t c = 0; c < cw; c += w) {
            const float *in = buf + p * cn + c;
            char *out = dst + p * 4 + c * c_stride;
            const char *ahead = p < next_m ? out + m * 4 : nullptr;
            if (w == 16) transpose16(in, cn, out, c_stride, ahead);
            else transpose8(in, cn, out, c_stride, ahead);
        }
    scalar_block(buf, cn, 0, mw, cw, cn, dst, c_stride);
    scalar_block(buf, cn, mw, m, 0, cn, dst, c_stride);
}

} // namespace crest::impl::jit

#pragma GCC diagnostic pop
