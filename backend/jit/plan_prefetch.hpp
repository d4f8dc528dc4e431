// The plan's rules for reading src against the caches (plan_prefetch.cpp),
// used by choose_kernels (plan_kernels.cpp).
#pragma once

#include <cstdint>

#include "backend/jit/jit_config.hpp"
#include "backend/jit/plan.hpp"

namespace crest::impl::jit {

// How a plan's kernels read src: one stream a thread (long inner rows) or
// many (vertical tiles, one per row of a pass); for the last, AVX-512's
// 16-bit tiles whose passes take 16 rows, each at least a tile's width
// from the next, and the 16-bit slab tiles of two-stage inner plans over
// rows far apart (wide_slabs).
enum class streams { one, many, many_16bit_far, slabs_16bit_far };

// Whether the kernels should prefetch src, as when it streams from memory.
bool prefetch_src(int64_t src_bytes, streams kind);

// AVX-512's 16-bit register columns over rows row_stride bytes apart
// (the plan's rows, or a period's) read both statistics from memory
// (kernel_config::fused16).
bool fused_columns16(const plan &P, isa_t isa, int64_t row_stride);

// AVX-512's 16-bit tiles in passes of 16 rows do (kernel_config::fused16),
// over `rows` rows row_stride bytes apart (the plan's rows, or a
// period's).
bool fused_loads16(const plan &P, isa_t isa, int64_t rows, int64_t row_stride);

// AVX-512's 16-bit long inner rows and word blocks read straight into
// their two statistics (kernel_config::fused16) from half the L3's size
// on, where every output and row starts on a line; long_rows (no
// blocks): on Intel CPUs from 32 MiB too.
bool fused_rows16(const plan &P, isa_t isa, bool long_rows);

// Whether a two-stage inner plan's slabs over rows far apart take
// wide_slab_bytes of columns, their tiles prefetching (plan::slab_width).
bool wide_slabs(const plan &P, isa_t isa);

// Whether the kernel of config cfg (its family and block_n set) streams
// dst (kernel_config::stream_dst): those that write a dst of a large part
// of src's size (inner tiny rows, tiles of under 16 rows).
bool stream_dst(const plan &P, isa_t isa, const kernel_config &cfg);

// How a vertical tile (cfg, from tile_config) prefetches: the first rule
// that fits.
void choose_tile_prefetch(const plan &P, isa_t isa, bool from_memory, kernel_config &cfg);

} // namespace crest::impl::jit
