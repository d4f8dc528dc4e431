// Writing a transposed output: a vertical kernel leaves columns in src
// order ([positions][channels], e.g. NHWC), dst wants them channel-major
// (NCHW). Scalar stores to 16 different lines per position are what made
// such reductions slow; 16x16 (AVX-512) or 8x8 (AVX2) register transposes
// store whole vectors.
#pragma once

#include <cstdint>

namespace crest::impl::jit {

// buf holds m x cn f32 values, row p = position p. Writes value (p, c) to
// dst + p * 4 + c * c_stride (bytes): positions contiguous in dst.
// lanes: 16 (AVX-512) or 8 (AVX2), the side of the square blocks
// transposed in registers (the rest goes one value at a time); the caller
// checked the CPU.
void transpose_store_f32(const float *buf, int64_t m, int64_t cn, char *dst,
        int64_t c_stride, int lanes);

} // namespace crest::impl::jit
