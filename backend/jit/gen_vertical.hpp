// The `vertical` family's generator (gen_vertical.cpp, its straight groups
// in gen_vertical_straight.cpp, its skewed blocks in
// gen_vertical_skew.cpp): the kept group is innermost and contiguous, the
// reduced rows lie outside it. Columns go in tiles of
// vertical_tile_cols(cfg_); the running max is kept in a tile (exact in any
// dtype, the max being an input): the dst tile, or a scratch tile until the
// last pass (vert_call::scratch). It stays in L1/L2 while 16 (AVX-512), 8
// (f32 AVX2) or 4 (16-bit AVX2) rows at a time stream through, so every src
// read is a long sequential run.
#pragma once

#include <deque>
#include <functional>

#include "backend/jit/jit_generator.hpp"

namespace crest::impl::jit {

class vertical_generator : public jit_generator {
public:
    using jit_generator::jit_generator;

private:
    const Reg64 reg_args = rdi;
    const Reg64 reg_src = rsi;    // current outer block, column 0
    const Reg64 reg_dst = rdx;
    const Reg64 reg_outer = rcx;  // outer blocks left
    const Reg64 reg_p0 = r8;      // row r, current column
    const Reg64 reg_p1 = r9;      // row r + half(), current column
    const Reg64 reg_pd = r10;     // the running max (reg_from), current column
    const Reg64 reg_cnt = r11;    // columns left in the tile
    const Reg64 reg_rs = rbx;     // row stride, bytes
    const Reg64 reg_tsrc = r12;   // tile start in row 0
    const Reg64 reg_tdst = r13;   // tile start in dst
    const Reg64 reg_left = r14;   // columns left in the outer block
    const Reg64 reg_tcols = r15;  // columns of this tile
    const Reg64 reg_rows = rbp;   // rows left
    // Inside tile(), where the three registers they alias are saved:
    const Reg64 reg_scr = r12;    // the scratch tile, or reg_tdst without one
    const Reg64 reg_from = r14;   // the running max so far: dst tile, then scratch
    const Reg64 reg_to = rcx;     // this pass writes [reg_pd + reg_to]
    const Reg64 reg_p2 = rsi;     // row r + 2 * half() (passes of 16, AVX2 8)
    const Reg64 reg_p3 = rdx;     // row r + 3 * half()
    // With prefetch_pass, inside the skewed subroutine or a straight
    // pass (next_pass_straight()), where the register it aliases
    // (reg_tdst) is saved: the next pass's line to prefetch.
    const Reg64 reg_next = r13;

    enum class mode { full, tail, scalar };
    Label l_skewed_;  // skewed_blocks(), a subroutine of the full passes
    Label l_skewed8_;  // f32 AVX-512: the same, 8 rows skewed by 8
    Label l_skewed_neg_;  // 16-bit: skewed_blocks(true)

    Xmm v(int i) const { return vmm(i); }
    // Columns per step: a vector of f32 lanes, or of 16-bit elements.
    int step() const { return raw16() ? vlen16() : vlen(); }

    void generate() override;

    // One tile: rows go in passes of max_group() rows, then one of
    // rest_from() rows and one of exactly the rows left (odd counts too: a
    // slice of 7 rows is one pass, not 4 + 2 + 1), each a single round
    // trip through the running max. Unless accumulating, the first pass writes without
    // reading it. Channels-last 7x7x2048 f32 reducing H 45 -> 64% of the
    // roofline, reducing W 38 -> 52% (same-run A/Bs, Zen 4).
    void tile();

    // g rows from reg_p0 over the whole tile, then reg_p0 moves past them.
    // The last pass (no rows left after it) writes the dst tile, the others
    // the scratch tile; all but the first read the scratch.
    void pass(int g, bool fresh);
    // A pass that ends the tile (its rows are the rows left): with
    // stream_dst, a copy of it whose full vectors go to an aligned
    // dst tile by non-temporal stores (streaming_ while it is emitted).
    void last_pass(int g, bool fresh);
    bool streaming_ = false;
    // Emits f with streaming_ off: the first of two groups, whose output
    // the second reads back at once (a line stored non-temporally is read
    // from memory: 4% of the roofline where every pass did that).
    void unstreamed(const std::function<void()> &f);

    // Walks the columns of the tile from the nb row pointers (reg_p0, p1,
    // p2, p3), restoring them afterwards. skewed, when given, first takes
    // whole blocks of columns (skewed_blocks) and body the rest.
    void columns(const std::function<void(mode)> &body, int nb,
            const std::function<void()> &skewed);

    // The nb row pointers and the running max move n columns on; reg_cnt
    // counts them off (flags set by that sub).
    void advance(int nb, int n);

    // Full passes of skew_rows() rows (AVX-512 16, f32 AVX2 8; AVX-512
    // f32 also 8, skews8()) read them skewed: in step t, row r reads
    // column vector t - r, so the step's loads lie in different L1 sets
    // even when the rows are a multiple of 4 KiB apart (a channels-last batch, a
    // power-of-two row), where 8 rows of one column filled a set and
    // evicted what the prefetchers brought. Column j gathers its rows in
    // register j % W and is done W - 1 steps after it began. A C++ model on
    // Zen 4, from the L3, % of a sequential read, 32 rows of 784 KiB: 72-77%
    // in straight passes of 8, 58-62% in straight passes of 16, 92-100%
    // skewed by 16. AVX2 has 16 registers: 8 rows there; its 16-bit tiles
    // (4 rows) go straight.
    bool skews() const { return is512() || !raw16(); }
    // f32: the passes find NaN by the invalid flag their maxes raise,
    // tested once a pass; a pass that met one is redone exactly. The
    // ordered-lane compares this replaced on AVX-512, one per two rows,
    // cost channels-last 32x64x56x56 axis 0 on Zen 4 10-15 points of the
    // roofline when part of src came from memory: every instruction that
    // waits on a load keeps loads from being issued (doc/performance.md,
    // session 12). AVX2 had the NaN-aware max itself (3 instructions a
    // row vector, not 1).
    bool nan_by_flags() const { return !raw16(); }
    int skew_rows() const { return is512() ? 16 : 8; }
    // AVX-512 f32 passes of exactly 8 rows (a batch of 8's reduced N, the
    // 8 left past passes of 16) go skewed by 8 too (l_skewed8_). Zen 4,
    // same-run A/Bs, % of the roofline, f32 NCHW 14x14 maps reducing N at
    // 25 MB: 8 rows 82-86 -> 85-88, at 6 MB 87-89 -> 92-93; 24 rows 69-76
    // -> 74-87; reducing N and H or W (outer_first.hpp) 62-67 -> 66-71.
    bool skews8() const { return is512() && !raw16(); }
    // AVX2's 16-bit passes (the only ones not skewed) take 8 rows, checked
    // (group_body_raw_checked), and the rows left past them one pass of
    // exactly that many.
    int max_group() const { return skews() ? skew_rows() : 8; }
    // Passes of fewer rows than this take exactly the rows left.
    int rest_from() const { return skews() ? group() : max_group(); }
    // The rows left below max_group() go in one straight pass (on
    // AVX-512 where the rows' stride is not a multiple of 2 KiB, give or
    // take a line: a run-time test), the 9-15 (AVX2 5-7) rows of a small
    // batch's reduced N, not group() and the rest in a second round
    // trip through the running max. Zen 4, same-run A/Bs, % of the
    // roofline, f32 NCHW 14x14 maps reducing N: 10 rows at 25 MB 60 ->
    // 80-85, 12 rows at 6 MB 76-81 -> 93, 14 rows reducing N and W 51-55
    // -> 61-67; capped to AVX2, 5-7 rows 51-66 -> 74-87. At such strides straight rows share
    // L1 sets: channels-last 2x1024x14x14 reducing H (rows 56 KiB apart)
    // read 84-86% in 8 + 6 rows and 58-61% in one pass of 14; AVX2's 6
    // such rows 76-78% in 4 + 2 and 93-94% in one pass. AVX-512's 16-bit
    // tiles too (a group of 8 and one of the rest joining it), but not
    // those that stream dst or prefetch: with those copies of the passes
    // the kernel outgrows its code buffer. bf16 12x1275x14x14 reducing
    // N 75 -> 83, f16 12x79x56x56 76-77 -> 88, NCHW reducing N and W
    // (slabs of 13-14 rows) bf16 67-69 -> 76-78, f16 69 -> 74-77.
    bool straight_rest() const {
        return skews() && (!raw16() || !(cfg_.stream_dst || cfg_.prefetch || cfg_.prefetch_pass));
    }
    enum class block { first, full, last };

    // Whole blocks of W (the rows skewed: skew_rows(), or 8) vectors of
    // columns, if the tile has one: a first block that starts the
    // pipeline, full blocks, and a last that drains it; the pointers end
    // past the blocks, reg_cnt counts the rest.
    void skewed_blocks(bool neg, int W);
    // The full pass's call of the skewed blocks (16-bit: in the mode
    // k_neg_mode asks for).
    void call_skewed(int g);

    // W steps from the pointers' column t0 (a multiple of W vectors): row
    // r reads vector t0 + i - r, which the first block lacks for r > i and
    // the last block (i < W - 1) already read for r <= i. A column's first
    // row loads into its register, the others go through a temporary,
    // paired for the NaN check (pass()).
    void skewed_block(block b, bool neg, int W);

    // 16-bit skewed columns keep the signed max in v(slot); the rows'
    // unsigned max goes into the pass's umax_chain()s, tested after the
    // pass (a negative NaN redoes the pass exactly). The answer is the
    // signed max unless a lane saw only negatives (or the running max is
    // a negative NaN): then the column is finished out of line. In
    // negative mode (neg) the columns keep the unsigned min instead, the
    // answer where a lane saw only negatives, and a lane that saw a value
    // >= +0 is finished out of line. A pass in which most skewed columns
    // took the slow path flips the mode of the next (k_neg_mode), so that
    // all-negative data (log-probabilities) runs as fast as positive data:
    // f16 4096x4096 axis 2 from cache read at 48% in positive mode only.
    // Where that happened in two passes running (lanes of negatives only
    // beside lanes that see positives: a channel that stays negative),
    // the call's later full passes go straight with all three statistics
    // (k_mixed_mode): channels-last 64x64x56x56 axis 0 with every other
    // channel negative read 48-49% of the roofline on Zen 4 when every
    // column went out of line. A few slow columns (random signs, where a
    // lane of 16 rows sees only negatives once in 65536) flip nothing:
    // flipping on any, bf16 channels-last axis 0 with random signs read
    // 67-71%, against 83-89% never flipping. k_slow_seen counts the pass's
    // slow columns (k0 holds 1).
    const Xbyak::Opmask k_neg_mode = Xbyak::Opmask(5), k_slow_seen = Xbyak::Opmask(4);
    const Xbyak::Opmask k_mixed_mode = Xbyak::Opmask(3), k_slow_before = Xbyak::Opmask(2);
    const Xbyak::Opmask k_one = Xbyak::Opmask(0);
    // The modes from vert_call::modes (load) or back to it, when given.
    void lane_modes(bool load);
    // After a skewed 16-bit pass: a pass whose skewed columns mostly went
    // out of line flips k_neg_mode for the next, and sets k_mixed_mode
    // when the pass before it did too.
    void next_lane_mode();
    Xmm umax_chain(int c) const {
        const int regs[] = {24, 25, 27, 29};  // past the temporaries, around the constants
        return v(regs[c]);
    }
    void skewed_load16(int slot, int r, const Address &a, bool neg);
    // The column at disp (src and running max alike: 64 bytes a vector)
    // joins the running max; a lane of negatives only, or a negative NaN
    // as running max, sends it to exact_column16 out of line.
    void skewed_done16(int slot, int disp, bool neg);

    // The out-of-line ends of skewed_done16: each calls exact_column16
    // with its column's offset, then jumps back.
    struct slow16_stub {
        Label slow, back;
        int disp = 0, slot = 0;
        bool neg = false;
    };
    std::deque<slow16_stub> slow16_;

    // After the skewed subroutine: the stubs, then exact_column16 itself,
    // which finishes the column at offset rdi from [p0] .. [p3] (rows) and
    // [reg_pd] (running max) from its signed max with their unsigned min,
    // in registers the skewed blocks leave alone.
    void exact_column16();

    void ld(mode m, const Xmm &x, const Address &a, data_type dt);
    void st(mode m, const Address &a, const Xmm &x);

    // Rows per straight group: 8 with AVX-512 (rax holds 3 * row stride),
    // 4 with AVX2 (whose scalar tail needs eax). Larger groups halve the
    // round trips per src vector. Each row pointer (base()) reaches
    // half() rows.
    int group() const { return is512() ? 8 : 4; }
    int half() const { return group() / 2; }

    Reg64 base(int b) const {
        const Reg64 bases[] = {reg_p0, reg_p1, reg_p2, reg_p3};
        return bases[b];
    }
    Address row(int k, int disp = 0) const {
        const Reg64 base = this->base(k / half());
        switch (k % half()) {
            case 0: return ptr[base + disp];
            case 1: return ptr[base + reg_rs + disp];
            case 2: return ptr[base + reg_rs * 2 + disp];
            default: return ptr[base + rax + disp];
        }
    }

    // With cfg_.prefetch (src at least the L3's size, plan_prefetch.cpp) each row
    // of a full step prefetches its line prefetch_ahead() ahead into
    // L2: 8 rows one stride apart are more streams than the hardware
    // prefetchers keep up with. AMD Zen 4, % of the roofline, medians of
    // 3-5 interleaved runs (2 KiB ahead then): from
    // memory it helps (f32 4096x4096 axis 2 90 -> 92%, 64x64x64x64 axis 1
    // 89 -> 94%; prefetcht0 cost 10-40% there), from the L3 it costs
    // (1x128x150x150 axis 1 78 -> 69%, channels-last 32x64x56x56 axis 0
    // 80 -> 75%, 8x64x64x64 axis 1 58 -> 51%). Past the tile's end the
    // line is the next tile's or the next row's, read soon after.
    void prefetch_rows(mode m, int g);
    // AVX2's 16-bit passes (straight, no skewed blocks) with prefetch_pass:
    // each full step prefetches its share of the next pass's rows, which
    // follow this pass's in memory.
    bool next_pass_straight() const { return cfg_.prefetch_pass && !skews(); }
    // p moves n rows on.
    void past_rows(const Reg64 &p, int n);

    // dst = max(dst, rows 0 .. g-1), or (fresh) just the max of the rows.
    // Junk lanes of a masked tail are zero and never stored.
    void group_body(mode m, int g, bool fresh);

    // f32 lanes, g rows joined into the running max. exact: the NaN-aware
    // max throughout. Otherwise a plain vmaxps tree, each row an
    // operand of a max (g == 1 and fresh: stored as read), so that a NaN
    // raises the invalid flag that pass() tests once (nan_by_flags()).
    // Junk lanes of a masked tail are zero, never NaN, never stored.
    void group_body_f32(mode m, int g, bool fresh, bool exact);

    // 16-bit lanes: the signed max tree alone is the answer where a lane
    // saw a value >= +0 and no negative NaN (whose bits, above -inf's as
    // unsigned, an unsigned max tree shows). Only a step with a lane of
    // negatives only, or a negative NaN, redoes its rows with the three
    // statistics (group_body_raw_split); the unsigned min tree is skipped
    // otherwise. Junk lanes of a masked tail (-inf) do not count.
    // upper (AVX-512's passes of 9-16 rows, g the rows past 8): rows 8
    // on, joining what rows 0-7 wrote at [reg_pd + reg_to]; the
    // statistics take two registers a row. AVX2 (whole vectors, since
    // session 20): up to 8 rows in ymm 0-7, their unsigned-max pairs in
    // ymm 8-11, the running max in ymm 14 (2 ops a row against the exact
    // groups' 3, and one round trip through the running max a pass of up
    // to 8 rows against 4).
    void group_body_raw_checked(mode m, int g, bool fresh, bool upper = false);

    // The exact statistics (group_body_raw) in groups of up to group()
    // rows, the second joining the first's output (only AVX2's 16-bit
    // passes of 5-8 rows need two).
    void group_body_raw_split(mode m, int g, bool fresh, bool upper = false);

    // A vector of each row in 16-bit lanes; a tail keeps -inf past the
    // tile's end (not NaN, no effect on the max) and stores only its lanes;
    // AVX2's one-column steps broadcast the element.
    void ld16(mode m, const Xmm &x, const Address &a);

    // bf16/f16 on the raw 16-bit bits, as the inner rows (design.md): a
    // signed max tree is the max where a lane saw a value >= +0 (positive
    // NaNs win it), an unsigned min tree the max where it saw only
    // negatives, and an unsigned max tree above -inf's bits shows a
    // negative NaN, which turns the lane into the quiet NaN. 3 ops per row
    // and no key conversions; the keys took 4 and 5 more per group.
    // AVX2 (4 rows a group): the same in ymm 0-9 and 12-14.
    void group_body_raw(mode m, int g, bool fresh, bool upper = false);

    // The three statistics' registers (the signed max is v(i)).
    Xmm umax16(int i) const { return v(8 + i); }
    Xmm umin16(int i) const { return v(is512() ? 12 + i : 6 + i); }

    // g rows' 16-bit vectors (joined by the running max unless fresh) into
    // the signed max v(0), the unsigned max umax16(0) and, with_umin, the
    // unsigned min umin16(0).
    void raw_stats(mode m, int g, bool fresh, bool with_umin, bool upper);

    // x's 16-bit lanes to this pass's output (the tail's lanes, or AVX2's
    // one column).
    void store16(mode m, const Xmm &x);
};

} // namespace crest::impl::jit
