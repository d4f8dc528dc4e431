// Writing a transposed output: a vertical kernel leaves columns in src
// order ([positions][channels], e.g. NHWC), dst wants them channel-major
// (NCHW), f32 or 16-bit. Scalar stores to 16 different lines per position are what made
// such reductions slow; 16x16 (AVX-512) or 8x8 (AVX2) register transposes
// store whole vectors.
//
// Each chunk's stores go to cn short runs of dst lines, too many streams
// for the hardware prefetcher: where the lines were not in the caches the
// transposes took 4x as long as writing the same bytes in order (f32
// 64x3136 positions, one thread, on Zen 4). So each transpose prefetches
// for writing the lines the next chunk's transpose at the same place will
// store to; they arrive while the kernel reads that chunk's src. Only
// from half the L3's size (plan::stream_transposed): below it the lines
// are in the caches and the prefetches cost 1-5 points. There, since
// session 22, AVX-512's blocks, whose stores are whole lines, write them
// non-temporally instead where aligned (no read for ownership; the caller
// fences; AVX2's half-line stores lost 19 points so):
// f32 channels-last 32x64x56x56 axis 0 into NCHW 79-84% -> 80-85%,
// 24x64x56x56 71-75% -> 74-79%, 64x64x56x56 (51 MB) tied; bf16
// 64x64x56x56 82-85% -> 83-90%.
//
// What the transposes cost at 25.7 MB (session 20, doc/performance.md):
// writing dst, not the shuffles. Transposes into a buffer that stays in
// the L1 or L2 read 80-89% of the roofline where writing dst reads
// 75-82%; 128-bit-lane loads that halve the shuffles (2.2x faster
// alone) gained nothing there and lost 8 points for bf16.
#pragma once

#include <cstdint>

namespace crest::impl::jit {

// buf holds m x cn f32 values, row p = position p. Writes value (p, c) to
// dst + p * 4 + c * c_stride (bytes): positions contiguous in dst.
// lanes: 16 (AVX-512) or 8 (AVX2), the side of the square blocks
// transposed in registers (the rest goes one value at a time); the caller
// checked the CPU. next_m: positions of the next chunk, which the caller
// writes right after these m (dst + m * 4 on); 0 if none. stream: blocks
// aligned to the vector store non-temporally (the caller fences before
// dst is read elsewhere; AVX-512 only), the others prefetch for next_m.
void transpose_store_f32(const float *buf, int64_t m, int64_t cn, char *dst,
        int64_t c_stride, int lanes, int64_t next_m, bool stream);

// The same for 16-bit values (bf16, f16): blocks of 2 * lanes positions
// by lanes channels, so that each store is a whole 64-byte (AVX-512) or
// 32-byte (AVX2) run of a channel's positions.
void transpose_store_16(const uint16_t *buf, int64_t m, int64_t cn, char *dst,
        int64_t c_stride, int lanes, int64_t next_m, bool stream);

} // namespace crest::impl::jit
