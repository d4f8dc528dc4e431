// Problems whose outer dims in memory are reduced while the kept dims lie
// in a dense innermost block that has reduced dims of its own (NCHW
// reducing N and H where the fixed blocks do not take the batch,
// channels-last reducing N and C, N with any inner pattern), and, since
// session 36, the same with kept dims outside the reduced ones (NCHW
// reducing C and W: [N kept][C reduced][H x W block]): the one-stage plans
// loop over the outer dims around short inner rows or narrow columns and
// read src at 6-45% of the roofline. Here two stages instead: a vertical
// max over the reduced outer dims into a block-sized buffer for each index
// of the kept ones outside (long contiguous rows, the tiles' best
// pattern), then the block's own reduction from that buffer, which the
// caches hold.
#pragma once

#include <cstdint>
#include <string>

#include "backend/kernel.hpp"

namespace crest::impl::jit {

struct outer_first_split {
    reduce_problem outer;  // the outer dims reduced: src -> a dense [lead x block]
    reduce_problem block;  // the block's own reduction: dense [lead x block] -> dst
    int64_t lead_n = 1;     // the kept dims outside the reduced ones: their indices
    int64_t block_elems = 0;
    int64_t src_bytes = 0;
    int64_t idx_n = 0;      // the block's outermost dim (kept): its size,
    int64_t idx_elems = 0;  // the elements under one of its indices,
    int64_t idx_outputs = 0;  // and the outputs under one.
};

struct plan;

// Where p also has a two-stage split, whether its one-stage plan P reads
// as well: inner rows through the slab scratch (128 outputs or more),
// register columns at least 64 bytes wide, or AVX-512 fixed blocks that
// take the batch over rows of 17-32 bytes (f32: any past 16); never with
// under 64 KiB of src an index of its extra reduced dims.
bool one_stage_reads_well(const plan &P);

// Whether the two stages s are taken over p's one-stage plan P: where P
// does not read well, or where s's outer stage keeps a whole row of the
// block in registers (AVX-512, blocks of 256-448 elements, f32 576: NCHW
// reducing C and W of 16x16 to 21x21 maps, f32 to 24x24).
bool outer_first_preferred(const plan &P, const outer_first_split &s);

// Whether p takes the two stages (at least 8 outer rows and 256 KiB of
// src; with kept dims outside, lead_n blocks of at most 16 KiB together
// or of one buffer an index of their outermost dim), and how.
bool split_outer_first(const reduce_problem &p, outer_first_split *s);

// Whether s runs each stage whole, on the pool (lead_n blocks of at most
// 16 KiB together), rather than in pieces of the block's outermost dim.
bool outer_first_whole(const outer_first_split &s);

// The two-stage kernel, or nullptr when a stage has no JIT plan.
kernel_ptr make_outer_first(const outer_first_split &s, const thread_pool &pool,
        std::string *why_not);

} // namespace crest::impl::jit
