// The plain description of one generated kernel. It is the generator's only
// input and the key of the kernel cache: two problems whose plans ask for
// the same config share the code. Shapes are runtime arguments (see the call
// structs), so a handful of configs serve every problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <tuple>

#include "backend/kernel.hpp"

namespace crest::impl::jit {

enum class isa_t : int { none = 0, avx2 = 1, avx512_core = 2 };
const char *isa_name(isa_t isa);

enum class family_t : int {
    inner,     // reduce a contiguous row (and rows of rows) to one value
    vert_tile, // dst tile in L1 as accumulator, several rows at a time
    vert_reg,  // few columns: the block in registers, walk down all rows
};

struct kernel_config {
    isa_t isa = isa_t::avx512_core;
    family_t family = family_t::inner;
    data_type src_dt = data_type::f32;
    data_type dst_dt = data_type::f32;  // f32 when writing partial results
    int unroll = 4;  // inner: accumulators; vert_reg: vectors per column block
    // inner: the row length the code is unrolled for, when rows are short
    // enough to fold a vector of outputs at once (0: none; AVX2: whole
    // vectors only).
    int block_n = 0;
    // src streams from memory (at least the L3's size). vert_tile: each
    // row prefetches its line prefetch_bytes ahead into L2; inner: the long rows'
    // main loop does (not the blocks, nor the per-output loop of a config
    // with blocks). There it helps, while from the L3 it costs
    // (gen_vertical.cpp, gen_inner.cpp). With it the AVX-512 f32 tiles
    // keep a register between load and max (gen_vertical_skew.cpp) and
    // the blocks their ordered-lane compares (gen_inner_blocks.cpp).
    // vert_reg's wide columns (wide_columns): each row the lines 4 KiB
    // ahead into L1.
    bool prefetch = false;
    // vert_tile, bf16/f16 on AVX-512: the skewed rows give both
    // statistics the vector from memory (two L1 reads, no register
    // between), as the prefetching tiles do (prefetch implies it there),
    // and the checked straight groups the second row of each pair: fewer
    // instructions waiting on each load where the rows stream from beyond
    // L2 (plan_prefetch.cpp, fused_loads16 and choose_tile_prefetch);
    // inner: the long rows' checked pass and the word blocks
    // (fused_rows16).
    bool fused16 = false;
    // vert_tile with prefetch: how far ahead; 0: 1 KiB (the inner rows
    // always). 4 KiB for 16-bit tiles of rows at least 32 KiB wide, 16 KiB
    // for slices of under 16 rows (plan_prefetch.cpp).
    int prefetch_bytes = 0;
    // vert_tile without prefetch, rows one after another and a tile as
    // wide as a row: the skewed blocks prefetch the next pass's rows, the
    // block of src after this pass's, in memory order (one line a load).
    bool prefetch_pass = false;
    // vert_tile, AVX2's 16-bit passes: each row's line this many bytes
    // ahead into L1 (prefetcht0) in the full steps, 0: none. Their two
    // statistics wait on each load (plan_prefetch.cpp, choose_tile_prefetch).
    int prefetch_l1_bytes = 0;
    // vert_reg: the rows and columns of a slice the code is unrolled for
    // (0: none). Fresh calls of exactly that block take straight-line
    // slices in vectors only as wide as the columns
    // (gen_vertical_fixed.cpp); other calls run the general loop. AVX2
    // 16-bit with partial_last sets block_cols alone too: the columns
    // every call has.
    int block_rows = 0;
    int block_cols = 0;
    // With block_rows, rows of 8-16 bytes: the calls whose rows and
    // slices lie these many bytes apart take 2 slices a ymm, a slice in
    // each 16-byte lane, at offsets fixed in the code
    // (gen_vertical_fixed_slices.cpp, fixed_packed; there `prefetch` takes src
    // 4 KiB ahead). 0: none.
    int block_row_stride = 0;
    int block_slice_stride = 0;
    // vert_reg, AVX2: the columns are not a whole number of vectors. f32
    // reads and writes the last vector by vmaskmovps; 16-bit reads it
    // whole but in a slice's last row, which reads its block_cols' bytes
    // in pieces, as the stores write them (AVX-512 masks its last vector
    // always).
    bool partial_last = false;
    // inner tiny rows, and vert_tile's passes that end a tile: dst written
    // with non-temporal stores where it is aligned to them; vert_reg
    // fixed blocks: a dense, line-aligned dst through a stage of whole
    // lines on the stack (plan_prefetch.cpp, stream_dst).
    bool stream_dst = false;
    // vert_reg on AVX-512, slices of rows of this many columns that split
    // cache lines (0: none): calls whose rows and slices are dense and
    // whose slices start on lines read each slice as aligned lines folded
    // into one period of lcm(columns, a line's lanes) (gen_vertical_lines.cpp).
    int fold_cols = 0;
    // vert_reg with block_rows (AVX2: f32, not packed): calls may pass
    // vert_call::batch > 1, and the fixed blocks then max each slice over
    // that many batch indices in registers before its one store; the
    // kernel returns its status (jit_status_fn).
    bool block_batch = false;

    auto tie() const {
        return std::make_tuple(isa, family, src_dt, dst_dt, unroll, block_n, prefetch, fused16,
                prefetch_bytes, prefetch_pass, prefetch_l1_bytes, block_rows, block_cols,
                block_row_stride, block_slice_stride, partial_last, stream_dst, fold_cols,
                block_batch);
    }
    bool operator==(const kernel_config &o) const { return tie() == o.tie(); }
    bool operator!=(const kernel_config &o) const { return !(*this == o); }
};

struct kernel_config_hash {
    size_t operator()(const kernel_config &c) const {
        size_t h = static_cast<size_t>(c.isa);
        auto mix = [&h](size_t v) { h = h * 1000003u ^ v; };
        mix(static_cast<size_t>(c.family));
        mix(static_cast<size_t>(c.src_dt));
        mix(static_cast<size_t>(c.dst_dt));
        mix(static_cast<size_t>(c.unroll));
        mix(static_cast<size_t>(c.block_n));
        mix(static_cast<size_t>(c.prefetch));
        mix(static_cast<size_t>(c.fused16));
        mix(static_cast<size_t>(c.prefetch_bytes));
        mix(static_cast<size_t>(c.prefetch_pass));
        mix(static_cast<size_t>(c.prefetch_l1_bytes));
        mix(static_cast<size_t>(c.block_rows));
        mix(static_cast<size_t>(c.block_cols));
        mix(static_cast<size_t>(c.block_row_stride));
        mix(static_cast<size_t>(c.block_slice_stride));
        mix(static_cast<size_t>(c.partial_last));
        mix(static_cast<size_t>(c.stream_dst));
        mix(static_cast<size_t>(c.fold_cols));
        mix(static_cast<size_t>(c.block_batch));
        return h;
    }
};

// Arguments of an `inner` kernel: for each of n_out outputs, the max over
// rows x n elements (rows row_stride bytes apart, n contiguous) is written
// to dst (dst_dt). With accumulate != 0 the value already in dst joins the
// max, which is exact in every dtype because the max is one of the inputs.
struct inner_call {
    const void *src;
    void *dst;
    int64_t n_out;
    int64_t out_src_stride;  // bytes
    int64_t out_dst_stride;  // bytes
    int64_t rows;
    int64_t row_stride;      // bytes
    int64_t n;               // elements, > 0
    int64_t accumulate;
};

// Arguments of a `vert_*` kernel: dst[j] = max over rows of src[r][j] for
// j < ncols, src rows row_stride bytes apart, dst contiguous (dst_dt).
// accumulate as above. n_outer repeats the whole block at outer strides.
// The 16-bit tiles' lane modes (opmask bits, gen_vertical.hpp), carried
// from one call to the next over a thread's range, so that a run of short
// calls (the two-stage plans' slabs) does not learn them anew each time.
struct lane_modes16 {
    uint32_t neg = 0, mixed = 0, slow_before = 0;
};

struct vert_call {
    const void *src;
    void *dst;
    int64_t ncols;           // > 0
    int64_t rows;            // > 0
    int64_t row_stride;      // bytes
    int64_t accumulate;
    int64_t n_outer;
    int64_t outer_src_stride;  // bytes
    int64_t outer_dst_stride;  // bytes
    // vert_tile only, may be null: at a 4 KiB boundary, the tile's bytes
    // (min(ncols, tile columns) x dst size) + 4 KiB, at most
    // vert_scratch_bytes.
    // The tile's passes before its last keep their running max there, at
    // the offset where its lines do not share L1 sets with the lines of
    // the rows being read (design.md, JIT backend).
    void *scratch;
    // vert_tile, bf16/f16 on AVX-512, may be null (every call then starts
    // in positive mode): read at the start, written at the end.
    lane_modes16 *modes;
    // kernel_config::block_batch only: the call is `batch` calls (0 or 1:
    // one) whose src lie batch_stride bytes apart, the later ones
    // accumulating (an extra reduced dim: NCHW reducing N and H).
    int64_t batch;
    int64_t batch_stride;  // bytes
};

// Columns of one vertical tile: up to 64 KiB of each src row, long
// sequential runs for the prefetchers (16 KiB measured 15-30% slower on
// outer-axis cases), while the dst tile, at most 64 KiB, stays in L2.
constexpr int vertical_tile_bytes = 64 * 1024;
// The largest tile scratch: the widest tile and room to place it 2 KiB
// past its src column in the 4 KiB page pattern.
constexpr int vert_scratch_bytes = vertical_tile_bytes + 4096;

using jit_fn = void (*)(const void *args);
// The same code called for its status (kernel_config::block_batch): 0
// when it did the call; 1 when it did not (a batch its fixed blocks
// cannot take, or, f32, a NaN met on the way), and dst then holds, for
// each output, its old value or the max of it and some of its elements,
// so that one call a batch index (batch 1, the later ones accumulating)
// makes it exact.
using jit_status_fn = int64_t (*)(const void *args);

inline size_t dt_size(data_type dt) {
    return dt == data_type::f32 ? 4 : 2;
}

} // namespace crest::impl::jit
