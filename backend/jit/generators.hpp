// Entry points of the generator families (one .cpp each).
#pragma once

#include <algorithm>

#include "backend/jit/code_buffer.hpp"
#include "backend/jit/jit_config.hpp"

namespace crest::impl::jit {

// Generate the code for cfg into buf.
jit_fn generate_inner(const kernel_config &cfg, code_buffer &buf);
jit_fn generate_vertical(const kernel_config &cfg, code_buffer &buf);
jit_fn generate_vertical_reg(const kernel_config &cfg, code_buffer &buf);

// Inner reductions with rows up to this long fold 16 outputs at once
// (AVX-512): there the lane folding per output costs as much as its row.
// 16-bit types stop earlier: their per-output loop is cheaper per element.
inline int64_t inner_block_max_n(data_type dt) {
    return dt == data_type::f32 ? 256 : 64;
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

} // namespace crest::impl::jit
