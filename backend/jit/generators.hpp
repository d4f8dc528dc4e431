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

inline int vertical_tile_cols(const kernel_config &cfg) {
    const size_t w = std::max(dt_size(cfg.src_dt), dt_size(cfg.dst_dt));
    return static_cast<int>(vertical_tile_bytes / w);
}

} // namespace crest::impl::jit
