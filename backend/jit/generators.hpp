// Entry points of the generator families (one .cpp each).
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "backend/jit/code_buffer.hpp"
#include "backend/jit/jit_config.hpp"

namespace crest::impl::jit {

// Generate the code for cfg into buf.
jit_fn generate_inner(const kernel_config &cfg, code_buffer &buf);
jit_fn generate_vertical(const kernel_config &cfg, code_buffer &buf);
jit_fn generate_vertical_reg(const kernel_config &cfg, code_buffer &buf);

// The fixed blocks' dst stage (kernel_config::stream_dst): whole slices'
// outputs in whole lines, lcm(a slice's dst bytes, 64). The plans start
// each thread's outputs on such a stage (plan_kernels.cpp).
inline int64_t staged_dst_bytes(int64_t slice_dst_bytes) {
    return std::lcm(slice_dst_bytes, int64_t(64));
}

// Inner reductions with rows up to this long fold a vector of outputs at
// once: there the lane folding per output costs as much as its row.
constexpr int64_t inner_block_max_n = 256;
// The word blocks' longest rows (16-bit), where inner_blocks_take's
// long_words lets them past inner_block_max_n.
constexpr int64_t inner_word_block_max_n = 512;
// Whether rows of n elements go by the blocks (up to inner_block_max_n).
// 16-bit rows of 256 do not: on Zen 5 (session 32) they read better at
// 25 MiB in one state, alike in the other, and worse at 98 MiB (the main
// batch's bf16 channels-last axis 1: lower in 5 of 7 rounds, 58-84
// against 63-96). Until session 38 16-bit rows of 65-255 did so only as
// 96 or 128; the per-output loop read the others at 38-74% of the
// roofline at 25 MiB. Zen 4, batch_ab.sh, 3 rounds, % of the roofline,
// loop -> blocks, one row an output: bf16/f16 rows of 65-100 38-53 ->
// 74-97, of 121-225 63-74 -> 77-85 (NCHW 9x9 maps reducing H and W 55-56
// -> 75-77); two rows an output (NCHW reducing N, H and W) 46-80 ->
// 62-108; three 62-78 -> 74-116 but for rows of 65-82, which moved either
// way (81: 62-68 -> 55-60 in one set, alike in another); capped to AVX2
// 43-92 -> 77-106, 81 with three rows 63 -> 94-98. At 100 MiB rows of
// 81-196 read 97-115% either way.
//
// long_words (AVX-512 on Intel CPUs, intel_cpu()): 16-bit rows of
// 256 to inner_word_block_max_n as well. On the Intel Xeon VM of session
// 45 (AVX-512 FP16, 2 vCPUs, 58 GB/s from its L3) the per-output loop
// read them 10-15 points below the word blocks whenever the machine was
// in its slower state, and alike in the other; ab_builds, 8-10 rounds,
// channels-last reducing C, % of the roofline, loop -> blocks: rows of
// 256 at 98 MiB bf16 66-75 -> 84, f16 68-72 -> 84-86 (75 -> 84 and 90 ->
// 95 in two more runs); rows of 300 (25 MiB) 67 -> 84, 512 71 -> 84 and
// at 400 MiB 76 -> 84; 1024 only 75 -> 78 (not taken: 32 loads a row
// unrolled 16 times). AMD keeps the loop (Zen 5 above).
inline bool inner_blocks_take(data_type dt, int64_t n, bool long_words) {
    if (dt == data_type::f32) return n <= inner_block_max_n;
    return n < inner_block_max_n || (long_words && n <= inner_word_block_max_n);
}

// Rows of n elements the inner kernels take as tiny rows, a vector of
// outputs at a time in memory order (gen_inner_tiny.cpp): AVX-512 rows of
// up to a vector (16-bit: 31 words), AVX2 rows of 2-7 (16-bit: 2-16).
inline bool inner_tiny_rows(isa_t isa, data_type dt, int64_t n) {
    if (isa != isa_t::avx512_core) return n >= 2 && (n < 8 || (n <= 16 && dt != data_type::f32));
    return n >= 2 && n <= (dt == data_type::f32 ? 16 : 31);
}

// The permute trees of the tiny rows also take outputs of up to this
// many rows (row_stride apart: NCHW reducing N and W), each window's rows
// maxed lane by lane before the tree, where such calls went to the
// blocks. Zen 4, benchgraph, % of the roofline, blocks -> trees: bf16
// 2x1024x14x14 reducing N and W (0.8 MB) 25-27 -> 72-87, f16 3x256x28x28
// 52-55 -> 75-85, f32 4x2048x28x14 (12.8 MB) 77-80 -> 88-95, bf16
// 4x16384x14x14 (25.7 MB) 35 -> 80; against the two stages the plans take
// from 8 rows (plan_kernels.cpp), f32 6x2731x14x14 (12.8 MB) 70 -> 90-96,
// 7x1024x14x14 68-70 -> 80-87; with 8 or 12 rows both read 63-75% (as
// many streams a thread as rows).
constexpr int tiny_tree_max_rows = 7;

inline int vertical_tile_cols(const kernel_config &cfg) {
    const size_t w = std::max(dt_size(cfg.src_dt), dt_size(cfg.dst_dt));
    return static_cast<int>(vertical_tile_bytes / w);
}

// Whether kernel_config::fold_cols can be `cols` for dt: rows that split
// lines, and the registers the fold needs (gen_vertical_lines.cpp).
bool fold_fits(int cols, data_type dt);

// Whether the vert_reg fixed blocks of cfg take accumulating calls (an
// extra reduced dim's later indices: NCHW reducing N and H) themselves,
// and so batches (kernel_config::block_batch): AVX-512, two slices a ymm
// too; AVX2's f32 one slice a vector. Else such calls go to the general
// loop (gen_vertical_fixed.cpp).
bool fixed_blocks_accumulate(const kernel_config &cfg);

// Batched calls of the fixed blocks: the keyed copy
// (gen_vertical_fixed_keyed.cpp) and the runs (gen_vertical_fixed_runs.cpp)
// take fresh calls of up to fixed_copy_max_batch indices, where they fit
// cfg; the other forms any count.
constexpr int fixed_copy_max_batch = 3;
bool fixed_keyed_fits(const kernel_config &cfg);
bool fixed_runs_fits(const kernel_config &cfg);
// The most indices a batched call of cfg's code takes (plan.hpp,
// batch_take): fixed_copy_max_batch where the keyed copy or the runs
// fit, else 4. A call joins dst once for all its indices and reads as
// many streams at once: Zen 4, ab_builds, % of the roofline, f32 NCHW
// reducing N and H (one stage), 2-3 a call -> 4 -> 8 -> 16: 64x2048x7x7
// 73 -> 83-95 -> 83-91 -> 50, 32x1024x14x14 75-83 -> 96-98 -> 99-110
// -> 84, 8x8192x12x12 75 -> 96 -> 95; bf16 64x1024x14x14 75 -> 82-88
// -> 85-100 -> 58.
int64_t fixed_batch_most(const kernel_config &cfg);

// AVX-512 register columns past 16 vectors (kernel_config::unroll counts
// f32 vectors: up to 50, 800 columns, past 32 of them in spill slots;
// 16-bit up to 16 vectors of two statistics each), a slice's whole rows
// in registers (gen_vertical_reg_wide.cpp). The code returns the slices
// it left to the caller (jit_status_fn): 0 when it took every one.
inline int64_t wide_max_cols(data_type dt) {
    return dt == data_type::f32 ? 800 : 512;
}
inline bool wide_columns(const kernel_config &cfg) {
    return cfg.family == family_t::vert_reg && cfg.isa == isa_t::avx512_core && cfg.unroll > 16;
}

} // namespace crest::impl::jit
