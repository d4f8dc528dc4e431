#include "backend/jit/transpose.hpp"

// GCC 12 flags its own AVX-512 shuffle intrinsics (they start from
// _mm512_undefined_ps) as -Wuninitialized; the values are all defined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace crest::impl::jit {

namespace {

template <typename T>
void scalar_block(const T *buf, int64_t cn, int64_t p0, int64_t p1, int64_t c0, int64_t c1,
        char *dst, int64_t c_stride) {
    for (int64_t c = c0; c < c1; ++c)
        for (int64_t p = p0; p < p1; ++p)
            std::memcpy(dst + p * sizeof(T) + c * c_stride, buf + p * cn + c, sizeof(T));
}

// 16 rows of 16 floats (row r at in + r * ld) to 16 columns: out row i
// (at out + i * c_stride) holds element i of every input row. stream: by
// non-temporal stores where out and c_stride are aligned to them; ahead,
// if not null, where they are not: the lines at ahead + i * c_stride are
// prefetched for writing.
__attribute__((target("avx512f,prfchw"))) void transpose16(const float *in,
        int64_t ld, char *out, int64_t c_stride, const char *ahead, bool stream) {
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
    if (stream && (reinterpret_cast<uintptr_t>(out) | uintptr_t(c_stride)) % 64 == 0) {
        for (int i = 0; i < 16; ++i)
            _mm512_stream_ps(reinterpret_cast<float *>(out + i * c_stride), t[i]);
        return;
    }
    for (int i = 0; i < 16; ++i)
        _mm512_storeu_ps(reinterpret_cast<float *>(out + i * c_stride), t[i]);
    if (ahead)
        for (int i = 0; i < 16; ++i) __builtin_prefetch(ahead + i * c_stride, 1, 3);
}

// 8 rows of 8 floats to 8 columns, as transpose16 with 256-bit vectors.
// Never streams: its stores are half lines, which non-temporal stores
// write out half at a time (f32 capped to AVX2 on Zen 4: 63% -> 44%).
__attribute__((target("avx2,prfchw"))) void transpose8(const float *in, int64_t ld,
        char *out, int64_t c_stride, const char *ahead, bool /*stream*/) {
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

// 16-bit values: 2 * lanes positions of lanes channels. Words of
// positions 2k and 2k + 1 pair up into dword k of each channel (so a
// dword row is a channel's two positions), then the f32 transpose moves
// the dwords: out row c holds positions 0 .. 2 * lanes - 1 in order, one
// whole 64-byte (AVX-512) or 32-byte (AVX2) store. AVX-512: a row of 16
// channels is a ymm, whose 128-bit lanes the unpacks keep apart; its
// quarters go in the order 0, 2, 1, 3 first, so that the low unpacks take
// channels 0-7 and the high ones 8-15.
__attribute__((target("avx512f,avx512bw,prfchw"))) void transpose32x16_w(
        const uint16_t *in, int64_t ld, char *out, int64_t c_stride, const char *ahead,
        bool stream) {
    alignas(64) float pairs[16 * 16];
    for (int k = 0; k < 16; ++k) {
        const __m256i a = _mm256_permute4x64_epi64(
                _mm256_loadu_si256(reinterpret_cast<const __m256i *>(in + 2 * k * ld)), 0xd8);
        const __m256i b = _mm256_permute4x64_epi64(
                _mm256_loadu_si256(reinterpret_cast<const __m256i *>(in + (2 * k + 1) * ld)), 0xd8);
        const __m512i d = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_unpacklo_epi16(a, b)),
                _mm256_unpackhi_epi16(a, b), 1);
        _mm512_store_si512(pairs + 16 * k, d);
    }
    transpose16(pairs, 16, out, c_stride, ahead, stream);
}

// AVX2: 16 positions of 8 channels (a row is an xmm; channels stay in order).
__attribute__((target("avx2,prfchw"))) void transpose16x8_w(
        const uint16_t *in, int64_t ld, char *out, int64_t c_stride, const char *ahead,
        bool stream) {
    alignas(32) float pairs[8 * 8];
    for (int k = 0; k < 8; ++k) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + 2 * k * ld));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + (2 * k + 1) * ld));
        _mm_store_si128(reinterpret_cast<__m128i *>(pairs + 8 * k), _mm_unpacklo_epi16(a, b));
        _mm_store_si128(reinterpret_cast<__m128i *>(pairs + 8 * k + 4), _mm_unpackhi_epi16(a, b));
    }
    transpose8(pairs, 8, out, c_stride, ahead, stream);
}

// Blocks of pw positions by cw channels through block(in, ld, out,
// c_stride, ahead, stream); the positions and channels past whole blocks
// one value at a time.
template <typename T, typename Block>
void store_blocks(const T *buf, int64_t m, int64_t cn, char *dst, int64_t c_stride,
        int64_t pw, int64_t cw, int64_t next_m, bool stream, Block block) {
    const int64_t mw = m / pw * pw, cn_w = cn / cw * cw;
    for (int64_t p = 0; p < mw; p += pw)
        for (int64_t c = 0; c < cn_w; c += cw) {
            char *out = dst + p * int64_t(sizeof(T)) + c * c_stride;
            const char *ahead = p < next_m ? out + m * int64_t(sizeof(T)) : nullptr;
            block(buf + p * cn + c, cn, out, c_stride, ahead, stream);
        }
    scalar_block(buf, cn, 0, mw, cn_w, cn, dst, c_stride);
    scalar_block(buf, cn, mw, m, 0, cn, dst, c_stride);
}

} // namespace

void transpose_store_16(const uint16_t *buf, int64_t m, int64_t cn, char *dst,
        int64_t c_stride, int lanes, int64_t next_m, bool stream) {
    if (lanes == 16)
        store_blocks(buf, m, cn, dst, c_stride, 32, 16, next_m, stream, transpose32x16_w);
    else store_blocks(buf, m, cn, dst, c_stride, 16, 8, next_m, stream, transpose16x8_w);
}

void transpose_store_f32(const float *buf, int64_t m, int64_t cn, char *dst,
        int64_t c_stride, int lanes, int64_t next_m, bool stream) {
    if (lanes == 16) store_blocks(buf, m, cn, dst, c_stride, 16, 16, next_m, stream, transpose16);
    else store_blocks(buf, m, cn, dst, c_stride, 8, 8, next_m, stream, transpose8);
}

} // namespace crest::impl::jit

#pragma GCC diagnostic pop
