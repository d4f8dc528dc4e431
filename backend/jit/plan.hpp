// How one ReduceMax problem is run: the canonical dims sorted into loops
// done in C++ (outer kept dims, extra reduced dims) and the part handed to a
// generated kernel, plus the way the work is shared between threads.
// Everything is decided at make time; execute only walks the plan.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "backend/jit/canonical.hpp"
#include "backend/jit/kernel_cache.hpp"

namespace crest::impl::jit {

constexpr int max_dims = 12;
// Below this many src bytes a problem runs inline on the calling thread:
// waking the pool and combining costs more than reading it from L2.
// Zen 4, 2 threads, benchgraph --mode=P (back-to-back calls, the pool's
// threads awake), two runs each: f32 256 KiB 2.4-2.8 us inline against
// 2.6-5.8 on the pool; 512 KiB tied (4.8-5.4 against 3.6-6.2); 784 KiB
// bf16 (2x1024x14x14, 1x512x28x28, 8 axis patterns each) 1.4-2x faster
// on the pool, 8-36 -> 5-22 us; 1 MiB 11-14 -> 6-7 us. Calls 20 ms
// apart (the threads asleep) pay about 30 us to wake them (decisions.md).
constexpr int64_t default_inline_bytes = 512 * 1024;
int64_t inline_bytes();
// Tests: a smaller threshold makes small problems take the thread split
// (< 0: back to the default). The scoped form puts the default back on
// every way out of a test.
void set_inline_bytes_for_testing(int64_t bytes);
class inline_bytes_for_testing {
public:
    explicit inline_bytes_for_testing(int64_t bytes) { set_inline_bytes_for_testing(bytes); }
    ~inline_bytes_for_testing() { set_inline_bytes_for_testing(-1); }
    inline_bytes_for_testing(const inline_bytes_for_testing &) = delete;
    inline_bytes_for_testing &operator=(const inline_bytes_for_testing &) = delete;
};
// Partial results of a two-level reduction live on the caller's stack, in
// the problem's dtype (exact: a max is one of its inputs).
constexpr int64_t partial_budget_elems = 16 * 1024;
constexpr int max_chunks = 64;
// Scratch of a two-stage (slab) inner plan, on the stack: L1-sized, or
// wide where plan::slab_width asks (plan_prefetch.cpp, wide_slabs).
constexpr int64_t slab_bytes = 16 * 1024;
constexpr int64_t wide_slab_bytes = 64 * 1024;
// The widest period of plan::period_code, in elements (16 vectors of 16),
// and the columns of a chunk of plan::chunk_code (AVX-512).
constexpr int64_t max_period = 256;
// The widest period of a tile kernel's (plan::period_code), in bytes;
// f32 rows of 2 KiB and more off the lines' grid take up to
// max_line_period_bytes (whole or half lines, rows_a_line_period: rows
// of 5000-9000 bytes 8 at a time). run_periodic's buffer holds either,
// and the period's running max with it.
constexpr int64_t max_period_bytes = 16 * 1024;
constexpr int64_t max_line_period_bytes = 72 * 1024;
static_assert(max_line_period_bytes >= 2 * max_period_bytes);

// How many of `left` indices of the innermost extra reduced dim the next
// call of a kernel with kernel_config::block_batch takes (the later
// calls accumulate): up to `most` (generated_code::batch_most, at least
// 3) a call, and never one alone after the others: its call would
// accumulate by itself, which costs most. Zen 5 (session 35) read 4 a
// call worse than 2+2 (bf16 4x16384x14x14 89 -> 31-41, 8x8192x14x14
// 87-94 -> 48-53); Zen 4 (session 42, after accumulating calls staged
// their f32 dst) read the opposite, ab_builds, % of the roofline, 2+2
// -> 4: bf16 4x16384x14x14 90 -> 95, 8x8192x14x14 80 -> 87, 4x65536x7x7
// 56 -> 67, f16 4x65536x7x7 56 -> 63, f32 4x65536x14x14 96 -> 107;
// larger batches in generators.hpp (fixed_batch_most).
inline int64_t batch_take(int64_t left, int64_t most) {
    if (left <= most) return left;
    return left == most + 1 ? most - 1 : most;
}

struct loop_dim {
    int64_t n = 1;
    int64_t ss = 0;  // src stride, bytes
    int64_t ds = 0;  // dst stride, bytes
};

enum class plan_kind {
    empty,     // nothing to write
    fill,      // every output is -inf
    copy,      // no reduction
    inner,     // reduced group innermost, contiguous
    vertical,  // kept group innermost, contiguous in src
    strided,   // anything else: scalar loops, slow but correct
};

struct plan {
    plan_kind kind = plan_kind::empty;
    isa_t isa = isa_t::none;
    data_type dt = data_type::f32;
    int64_t esz = 4;

    // inner / vertical: outer kept loops, the kept dim inside the kernel
    // (inner: outputs; vertical: columns), extra reduced loops, the reduced
    // dim inside the kernel (rows) and, for inner, the contiguous length.
    int nouter = 0;
    loop_dim outer[max_dims];
    loop_dim jd;
    // vertical: jd may group several kept dims that are one contiguous run
    // in src but not in dst (e.g. a transposed output); jsub lists them
    // (outer to inner) so the columns can be scattered. njsub == 1: jd only.
    int njsub = 1;
    loop_dim jsub[max_dims];
    int nextra = 0;
    loop_dim extra[max_dims];
    loop_dim rows;
    int64_t n = 1;

    // copy / fill / strided: all canonical dims, kept first then reduced.
    int nkept = 0;
    loop_dim kept[max_dims];
    int nred = 0;
    loop_dim red[max_dims];

    int64_t n_out = 1;
    int64_t src_bytes = 0;

    int nchunks = 1;
    // Output-split chunk bounds are multiples of it (output_chunk_bound).
    int64_t out_align = 32;
    bool two_level = false;
    int split = 0;  // two-level: 0..nextra-1 extra dim, nextra rows, nextra+1 n

    std::shared_ptr<const generated_code> code;  // reads and writes dt

    // inner with short rows whose rows dim lies far outside the outputs'
    // block (e.g. NCHW reducing C and W): slab_code, a vertical tile
    // kernel, first maxes the rows of up to slab_bytes of contiguous
    // outputs x row elements into a stack scratch in memory order, then
    // `code` reduces the scratch's short rows. Null: one stage.
    std::shared_ptr<const generated_code> slab_code;
    // The columns a slab takes, in bytes: slab_bytes or wide_slab_bytes.
    int64_t slab_width = slab_bytes;

    // two-level with dst dense in the flat output order: the chunks'
    // partial results (rows pstride apart) are combined by this vertical
    // tile kernel instead of a scalar loop. Null: the scalar loop.
    std::shared_ptr<const generated_code> combine_code;

    // vertical over rows of few columns that follow one another in src
    // (under 64 bytes, rows jd.n elements apart): period_code, a
    // register-column kernel, maxes them `period` columns (period / jd.n
    // rows) at a time into a stack buffer, where `code` folds the period
    // and the rows left over (run_periodic). Null: `code` alone, a
    // partial vector a row.
    int64_t period = 0;
    std::shared_ptr<const generated_code> period_code;

    // vertical over rows that follow one another, a few hundred columns
    // wide (see plan_kernels.cpp): chunk_code, a register-column kernel, takes
    // the columns 256 at a time, `code` the rest. Null: `code` alone.
    // Since wide_code below, which takes such rows first, only the
    // slices it leaves.
    std::shared_ptr<const generated_code> chunk_code;
    // Rows that follow one another of 257-512 columns (f32 800):
    // wide_code, register columns a whole row wide (wide_max_cols),
    // takes the calls of every column; the slices it leaves (a NaN met,
    // 16-bit lanes of negatives only) go on as above. Null: none.
    std::shared_ptr<const generated_code> wide_code;

    // vertical tile plans of 16-bit slices of 2-16 rows: fixed_code, a
    // register-column kernel unrolled for the slice (kernel_config::
    // block_rows), takes the calls of whole fresh slices (no accumulate,
    // every row and column), `code` the others. Null: `code` alone.
    std::shared_ptr<const generated_code> fixed_code;

    // The scratch tile (vert_call::scratch) that run_range hands the
    // vertical tile kernel (code or slab_code) when it takes more than one
    // pass over the rows: the widest tile it can meet plus room to place
    // it. 0: none.
    int64_t tile_scratch_bytes = 0;

    // vertical with a transposed output (run_range, transpose.hpp): the
    // transposes store dst's lines non-temporally where they are aligned,
    // else prefetch for writing the lines of the next chunk at the same
    // place. Set from half the L3's size (plan_kernels.cpp).
    bool stream_transposed = false;

    const char *name = "";  // static storage
};

// The kept dims in the flat output order (outer dims, then jd or its
// sub-dims), outermost first, into out (room for 2 * max_dims); returns
// how many.
int flat_output_dims(const plan &P, loop_dim *out);

// Where chunk c of nch of n outputs (or, two-level, of the split dim's
// n indices) starts (c == nch: n): the multiple of align nearest to an
// even share, so that a chunk holds at most an align more or less than
// its share. Rounding down gave the first threads whole multiples fewer:
// 112 outputs in multiples of 32 split 32 / 80, and 56 outputs 0 / 56
// (one thread doing all).
int64_t output_chunk_bound(int64_t n, int64_t align, int nch, int64_t c);

// How a two-stage plan's cnt outputs, rows of row_bytes from s, go into
// slabs of up to `width` bytes: `per` outputs a slab, the first `first`.
// Slabs start and end on cache lines where the rows' length allows it, so
// that the slab tiles' vectors never split a line: the first runs up to
// the first output that starts one.
struct slab_split {
    int64_t per = 0, first = 0;
};
slab_split split_slabs(const void *s, int64_t row_bytes, int64_t cnt, int64_t width);

// With P's loops set (make_plan), P's kernels: code and, as the problem
// asks, slab_code, combine_code, period_code, chunk_code, and the tile
// scratch they take (plan_kernels.cpp).
void choose_kernels(plan &P, isa_t isa);

// For a dst that the caller reads right after (a stage's stack buffer):
// P's kernels without non-temporal stores, which would send the buffer to
// memory and make the next stage read it from there.
void keep_dst_cached(plan &P);

// Builds the plan; returns false with *why_not when the problem cannot be
// run (ISA none, unsupported dtype, bad strides).
bool make_plan(const reduce_problem &p, isa_t isa, int pool_size, plan *out,
        std::string *why_not);

} // namespace crest::impl::jit
