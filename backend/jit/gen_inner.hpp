// The `inner` family's generator (gen_inner.cpp, its folds and stores in
// gen_inner_fold.cpp): the reduced group is innermost and contiguous.
// Several independent accumulators take whole vectors, the tail is masked
// (AVX-512) or taken one element at a time (AVX2); lanes are folded once
// per output. bf16/f16 rows keep raw-bits statistics on both ISAs
// (raw16()). Short rows go by the blocks of inner_blocks_generator.
#pragma once

#include <cstdint>
#include <functional>

#include "backend/jit/gen_inner_blocks.hpp"

namespace crest::impl::jit {

// reg_args, reg_src, reg_dst and reg_nout come from inner_blocks_generator.
class inner_generator : public inner_blocks_generator {
public:
    using inner_blocks_generator::inner_blocks_generator;

private:
    const Reg64 reg_row = r8;      // current row
    const Reg64 reg_rows = r9;     // rows left
    const Reg64 reg_ptr = r10;     // walks along a row
    const Reg64 reg_left = r11;    // elements left in the row

    int nacc() const { return cfg_.unroll; }
    Xmm acc(int i) const { return vmm(i); }
    Xmm x(int i) const { return vmm(nacc() + i); }
    Xmm tmp(int i) const { return vmm(2 * nacc() + (i % 2)); }
    Xmm neg_inf() const { return vmm(2 * nacc() + 2); }
    // raw16(): the largest raw bits seen, masks, and scratch (AVX-512:
    // zmm 24..31; AVX2, at most 4 accumulators: ymm 11..15).
    Xmm absmax() const { return vmm(is512() ? 24 : 11); }
    Xmm abs_mask() const { return vmm(is512() ? 25 : 12); }
    Xmm neg_inf16v() const { return vmm(is512() ? 27 : 13); }
    Xmm scratch(int u) const { return is512() ? vmm(28 + u % 4) : vmm(14 + u % 2); }
    // raw16() rows: acc(u) keeps the signed max of the raw bits (the
    // answer when a lane saw a value >= +0), minraw(u) the unsigned min
    // (the answer when it saw only negatives), absmax() the unsigned max
    // (above -inf: a negative NaN). 1-cycle ops: 4 chains of minraw do
    // (AVX2: 2, sharing them out).
    Xmm minraw(int u) const { return scratch(u); }

    void generate() override;

    // bf16/f16 rows: which raw-bits statistics a pass over an output's rows
    // keeps. all: the signed max, the unsigned min and the unsigned max (3
    // instructions per vector). maxes: no unsigned min (2); an output whose
    // signed max is negative saw only negatives, and a `mins` pass over
    // its rows, from cache, then finds its max.
    enum class raw_pass { all, maxes, mins };
    static constexpr int64_t two_pass_max_elems = 32 * 1024;

    // The loop over outputs: per output the rows, then fold and store.
    // `pass` is for raw16() only. A `maxes` loop whose output needed the
    // `mins` pass goes on at all_loop for the call's other outputs:
    // all-negative rows (log-probabilities) then read once, with three
    // statistics (bf16/f16 64x64x56x56 axes 2,3 on Zen 4: 84-86% of the
    // roofline with positive data, 68% with negative data and two passes
    // each). head: the loop's first instruction, if given.
    void outputs(raw_pass pass = raw_pass::all, Label *all_loop = nullptr, Label *head = nullptr);

    void rows_loop(const std::function<void()> &row_body);

    void reset_minraw();
    // acc(0) = the signed max of the accumulators' 16-bit lanes.
    void max_tree();
    // minraw(0) = the unsigned min of the four chains.
    void min_tree();

    // Walks one row from reg_row: steps of `loads` vectors of `elems`
    // elements each (load(u, address) for every u, then take(u)), then
    // single vectors, then tail() for the 1..elems-1 elements left in
    // reg_left (reg_ptr at them).
    void walk_row(int elems, int loads, const std::function<void(int, const Address &)> &load_u,
            const std::function<void(int)> &take, const std::function<void()> &tail);

    // 64 bytes (32 elements) into the pass's raw-bits statistics of
    // accumulator u. Positive NaNs win the signed max by themselves.
    void take_raw(raw_pass pass, int u, const Xmm &x);

    void row_body_raw(raw_pass pass);

    // f32: one vmaxps per vector with its memory operand; a NaN raises
    // the invalid flag (jit_generator::fp_env_enter), tested once an
    // output. AVX2's tail: an element at a time. The ordered-lane masks
    // this replaced on AVX-512 (a load, a max and a masked compare per
    // vector: track_ordered) read NCHW 32x64x56x56 axes 2,3 (25 MiB) on
    // Zen 4 at 69-87% of the roofline against 91-102%, 16 MiB rows of 16
    // KiB 72-93 against 97-105 (ab_runs.sh, two copies of each build);
    // from memory (64 and 196 MiB) they tied. AVX2's load and NaN-aware
    // max (compare, max, blend) read axes 2,3 capped at 65-76 against
    // 92-97.
    void row_body_f32();

    // The accumulators fold into lane 0 of acc(0) with plain maxes (f32)
    // or key maxes (bf16/f16), then one store. The output is NaN if the
    // rows saw one (f32: the invalid flag, cleared after a NaN output;
    // bf16/f16: an unsigned max of the raw bits above -inf, i.e. a
    // negative NaN; a positive NaN comes out of the key max by itself)
    // or, when accumulating, if dst holds one. bf16/f16 with `trees`
    // false: acc(0) already holds each lane's key.
    void fold_and_store_flagged(bool trees = true);

    // f32: the accumulators' tree, then the lanes, with plain maxes.
    void fold_lanes_f32();

    // bf16/f16: the statistics' trees, then per lane the larger key of
    // the signed max and the unsigned min (the signed max's when the lane
    // saw a value >= +0, else the min's), then halves down to one word.
    void fold_lanes_keys(bool trees);
};

} // namespace crest::impl::jit
