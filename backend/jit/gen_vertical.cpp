// `vertical` family: the kept group is innermost and contiguous, the reduced
// rows lie outside it. Columns go in tiles of vertical_tile_cols(cfg_); the
// running max is kept in a tile (exact in any dtype, the max being an input):
// the dst tile, or a scratch tile until the last pass (vert_call::scratch).
// It stays in L1/L2 while 16 (f32 AVX-512, skewed), 8 (16-bit AVX-512) or 4
// (AVX2) rows at a time stream through, so every src read is a long
// sequential run.
#include "backend/jit/generators.hpp"
#include "backend/jit/jit_generator.hpp"

#include <algorithm>
#include <cstddef>
#include <deque>
#include <functional>

namespace crest::impl::jit {

using namespace Xbyak;

namespace {

#define ARG(field) qword[reg_args + offsetof(vert_call, field)]

class vertical_generator : public jit_generator {
public:
    using jit_generator::jit_generator;

private:
    const Reg64 reg_args = rdi;
    const Reg64 reg_src = rsi;    // current outer block, column 0
    const Reg64 reg_dst = rdx;
    const Reg64 reg_outer = rcx;  // outer blocks left
    const Reg64 reg_p0 = r8;      // row r, current column
    const Reg64 reg_p1 = r9;      // row r + 2, current column
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
    const Reg64 reg_p2 = rsi;     // row r + 8, current column (16-row passes)
    const Reg64 reg_p3 = rdx;     // row r + 12

    enum class mode { full, tail, scalar };
    Label l_skewed_;  // skewed_blocks(), a subroutine of the 16-row passes

    Xmm v(int i) const { return vmm(i); }
    // Columns per step: a vector of f32 lanes, or of 16-bit elements.
    int step() const { return raw16() ? vlen16() : vlen(); }

    void generate() override {
        push(rbx); push(rbp); push(r12); push(r13); push(r14); push(r15);
        mov(reg_rs, ARG(row_stride));
        mov(reg_src, ARG(src));
        mov(reg_dst, ARG(dst));
        mov(reg_outer, ARG(n_outer));
        if (raw16()) bcast16_constants();
        Label l_outer;
        L(l_outer);
        {
            mov(reg_tsrc, reg_src);
            mov(reg_tdst, reg_dst);
            mov(reg_left, ARG(ncols));
            Label l_tile;
            L(l_tile);
            {
                mov(reg_tcols, vertical_tile_cols(cfg_));
                cmp(reg_left, reg_tcols);
                cmovl(reg_tcols, reg_left);
                push(reg_outer); push(reg_left); push(reg_tsrc);
                push(reg_src); push(reg_dst);
                tile();
                pop(reg_dst); pop(reg_src);
                pop(reg_tsrc); pop(reg_left); pop(reg_outer);
                add(reg_tsrc, vertical_tile_cols(cfg_) * ssz());
                add(reg_tdst, vertical_tile_cols(cfg_) * dsz());
                sub(reg_left, vertical_tile_cols(cfg_));
                jg(l_tile, T_NEAR);
            }
            add(reg_src, ARG(outer_src_stride));
            add(reg_dst, ARG(outer_dst_stride));
            dec(reg_outer);
            jnz(l_outer, T_NEAR);
        }
        vzeroupper();
        pop(r15); pop(r14); pop(r13); pop(r12); pop(rbp); pop(rbx);
        ret();
        if (skews()) {
            L(l_skewed_);
            skewed_blocks();
            ret();
            if (raw16()) exact_column16();
        }
    }

    // One tile: rows go in passes of max_group() rows (then halves of it
    // for the rest), each a single round trip through the running max.
    // Unless accumulating, the first pass writes without reading it.
    void tile() {
        if (is512()) {
            // The tail mask is the same for every row of the tile.
            mov(reg_cnt, reg_tcols);
            and_(reg_cnt, step() - 1);
            set_tail_mask(reg_cnt, step());
        }
        mov(reg_p0, reg_tsrc);
        // The scratch tile sits 2 KiB past the tile's src column in the 4
        // KiB pattern of L1 sets: far from the sets of the lines being read
        // and prefetched. A dst one line ahead of src (a malloc'd dst next
        // to page-aligned src) cost the tiles a third of their speed there.
        mov(rax, ARG(scratch));
        mov(reg_scr, reg_tdst);
        test(rax, rax);
        Label l_no_scratch;
        jz(l_no_scratch, T_NEAR);
        lea(reg_scr, ptr[reg_p0 + 2048]);
        and_(reg_scr, 4096 - 64);
        add(reg_scr, rax);
        L(l_no_scratch);
        mov(reg_from, reg_tdst);
        if (is512()) lea(rax, ptr[reg_rs + reg_rs * 2]);
        mov(reg_rows, ARG(rows));
        Label l_rest;
        cmp(ARG(accumulate), 0);
        jne(l_rest, T_NEAR);
        {
            Label l_fresh_done;
            for (int g = max_group(); g >= 1; g /= 2) {
                Label l_smaller;
                cmp(reg_rows, g);
                jl(l_smaller, T_NEAR);
                pass(g, true);
                jmp(l_fresh_done, T_NEAR);
                L(l_smaller);
            }
            L(l_fresh_done);
        }
        L(l_rest);
        Label l_full_groups, l_tail_groups;
        L(l_full_groups);
        cmp(reg_rows, max_group());
        jl(l_tail_groups, T_NEAR);
        pass(max_group(), false);
        jmp(l_full_groups, T_NEAR);
        L(l_tail_groups);
        for (int g = max_group() / 2; g >= 1; g /= 2) {
            Label l_smaller;
            cmp(reg_rows, g);
            jl(l_smaller, T_NEAR);
            pass(g, false);
            L(l_smaller);
        }
    }

    // g rows from reg_p0 over the whole tile, then reg_p0 moves past them.
    // The last pass (no rows left after it) writes the dst tile, the others
    // the scratch tile; all but the first read the scratch.
    void pass(int g, bool fresh) {
        mov(reg_to, reg_scr);
        cmp(reg_rows, g);
        cmove(reg_to, reg_tdst);
        const bool skewed = skews() && g == skew_rows();
        // The skewed blocks always join a running max: a fresh pass gives
        // them row 0 for it (its max with the rows is theirs), so that
        // one copy of the blocks serves every pass.
        if (skewed && fresh) mov(reg_from, reg_p0);
        sub(reg_to, reg_from);
        const int nb = (g + half() - 1) / half();
        for (int b = 1; b < nb; ++b) lea(base(b), ptr[base(b - 1) + reg_rs * half()]);
        const bool checked = is512() && !raw16();
        if (checked) reset_ordered();
        columns([&](mode m) { group_body(m, g, fresh); }, nb,
                skewed ? std::function<void()>([&] { call(l_skewed_); }) : nullptr);
        if (checked) {
            // A NaN in the pass's rows: the pass again, exactly. It reads
            // the same running max (or, where it wrote over it, a max that
            // only lacks the rows' NaNs), so the redo is exact either way.
            Label l_clean;
            test_ordered_nan();
            jz(l_clean, T_NEAR);
            columns([&](mode m) { group_body_f32(m, g, fresh, true); }, nb, nullptr);
            L(l_clean);
        }
        for (int left = g; left > 0; left -= 8) lea(reg_p0, ptr[reg_p0 + reg_rs * std::min(left, 8)]);
        sub(reg_rows, g);
        mov(reg_from, reg_scr);
    }

    // Walks the columns of the tile from the nb row pointers (reg_p0, p1,
    // p2, p3), restoring them afterwards. skewed, when given, first takes
    // whole blocks of columns (skewed_blocks) and body the rest.
    void columns(const std::function<void(mode)> &body, int nb,
            const std::function<void()> &skewed) {
        for (int b = 0; b < nb; ++b) push(base(b));
        mov(reg_pd, reg_from);
        mov(reg_cnt, reg_tcols);
        if (skewed) skewed();
        Label l_full, l_tail, l_done;
        L(l_full);
        {
            cmp(reg_cnt, step());
            jl(l_tail, T_NEAR);
            body(mode::full);
            advance(nb, step());
            jmp(l_full, T_NEAR);
        }
        L(l_tail);
        test(reg_cnt, reg_cnt);
        jz(l_done, T_NEAR);
        if (is512()) {
            body(mode::tail);
        } else {
            Label l_scalar;
            L(l_scalar);
            {
                body(mode::scalar);
                advance(nb, 1);
                jnz(l_scalar, T_NEAR);
            }
        }
        L(l_done);
        for (int b = nb - 1; b >= 0; --b) pop(base(b));
    }

    // The nb row pointers and the running max move n columns on; reg_cnt
    // counts them off (flags set by that sub).
    void advance(int nb, int n) {
        for (int b = 0; b < nb; ++b) add(base(b), n * ssz());
        add(reg_pd, n * dsz());
        sub(reg_cnt, n);
    }

    // AVX-512: passes of skew_rows() rows (f32 16, 16-bit 8) read them
    // skewed. In step t, row r reads column vector t - r, so the step's
    // loads lie in different L1 sets even when the rows are a multiple of 4 KiB apart
    // (a channels-last batch, a power-of-two row), where 8 rows of one
    // column filled a set and evicted what the prefetchers brought. Column
    // j gathers its rows in register j % 16 (16-bit: j % 8, and its
    // unsigned max in another) and is done 15 (7) steps after it began. A C++ model on Zen 4, from the L3, % of a sequential read:
    // 32 rows of 784 KiB 72-77% in passes of 8 unskewed, 92-100% skewed
    // by 16; unskewed passes of 16 rows 58-62%.
    // The 16-bit statistics take two registers a column, AVX2 has 16
    // registers: 8 rows. AVX2's 16-bit tiles (4 rows) are not skewed.
    bool skews() const { return is512() || !raw16(); }
    int skew_rows() const { return is512() && !raw16() ? 16 : 8; }
    int max_group() const { return skews() ? skew_rows() : group(); }
    enum class block { first, full, last };

    // Whole blocks of skew_rows() vectors of columns, if the tile has one:
    // a first block that starts the pipeline, full blocks, and a last that
    // drains it; the pointers end past the blocks, reg_cnt counts the rest.
    void skewed_blocks() {
        const int cols = skew_rows() * step();
        const int nb = skew_rows() / half();
        Label l_none, l_full, l_last;
        cmp(reg_cnt, cols);
        jl(l_none, T_NEAR);
        skewed_block(block::first);
        advance(nb, cols);
        L(l_full);
        cmp(reg_cnt, cols);
        jl(l_last, T_NEAR);
        skewed_block(block::full);
        advance(nb, cols);
        jmp(l_full, T_NEAR);
        L(l_last);
        skewed_block(block::last);
        L(l_none);
    }

    // skew_rows() steps from the pointers' column t0 (a multiple of
    // skew_rows() vectors): row r reads vector t0 + i - r, which the first
    // block lacks for r > i and the last block (i < skew_rows() - 1) already
    // read for r <= i. A column's first row loads into its register, the
    // others go through a temporary, paired for the NaN check (pass()).
    void skewed_block(block b) {
        const int W = skew_rows(), vbytes = step() * ssz();
        for (int i = 0; i < (b == block::last ? W - 1 : W); ++i) {
            int pending = -1, pair = 0;  // f32: a load waiting for its pair
            for (int r = 0; r < W; ++r) {
                if ((b == block::first && r > i) || (b == block::last && r <= i)) continue;
                const int slot = ((i - r) % W + W) % W;
                const Address a = row(r, (i - r) * vbytes);
                if (cfg_.prefetch) prefetcht1(row(r, (i - r) * vbytes + prefetch_ahead_bytes));
                if (raw16()) {
                    skewed_load16(slot, r, a);
                    continue;
                }
                if (!is512()) {
                    // AVX2: the NaN-aware max itself, no check to redo.
                    const Xmm x = r == 0 ? v(slot) : v(8 + r % 2);
                    vmovups(x, a);
                    if (r > 0) nanmax(v(slot), x, v(10 + r % 2));
                    continue;
                }
                const Xmm x = r == 0 ? v(slot) : v(16 + r % 15);
                vmovups(x, a);
                if (pending < 0) {
                    pending = x.getIdx();
                } else {
                    track_ordered_pair(pair++, Zmm(pending), x);
                    pending = -1;
                }
                if (r > 0) vmaxps(v(slot), v(slot), x);
            }
            if (pending >= 0) track_ordered(pair, Zmm(pending));
            if (b == block::first && i < W - 1) continue;
            // Column t0 + i - (W - 1) has all its rows.
            const int slot = (i + 1) % W;
            const int disp = (i - (W - 1)) * step() * dsz();
            if (raw16()) {
                skewed_done16(slot, disp);
                continue;
            }
            const Xmm running = v(is512() ? 31 : 12);
            vmovups(running, ptr[reg_pd + disp]);
            // The running max's NaN stays (vmaxps returns its second
            // operand when either is NaN).
            if (is512()) vmaxps(v(slot), v(slot), running);
            else nanmax(v(slot), running, v(13));
            vmovups(ptr[reg_pd + reg_to + disp], v(slot));
        }
    }

    // 16-bit skewed columns keep the signed max in v(slot) and the
    // unsigned max in v(8 + slot); the answer is the signed max unless a
    // lane saw only negatives or a negative NaN (group_body_raw_checked).
    Xmm umax_slot(int slot) const { return v(8 + slot); }
    void skewed_load16(int slot, int r, const Address &a) {
        if (r == 0) {
            vmovdqu32(v(slot), a);
            vmovdqa32(umax_slot(slot), v(slot));
            return;
        }
        const Xmm x = v(16 + r);
        vmovdqu32(x, a);
        vpmaxsw(v(slot), v(slot), x);
        vpmaxuw(umax_slot(slot), umax_slot(slot), x);
    }
    // The column at disp (src and running max alike: 64 bytes a vector)
    // joins the running max; a lane of negatives only or a negative NaN
    // sends it to exact_column16 out of line.
    void skewed_done16(int slot, int disp) {
        const Xmm running = v(25);
        const Opmask k_neg = k_ord_, k_nan = Opmask(1);
        vmovdqu32(running, ptr[reg_pd + disp]);
        vpmaxsw(v(slot), v(slot), running);
        vpmaxuw(umax_slot(slot), umax_slot(slot), running);
        vpmovw2m(k_neg, v(slot));
        vpcmpuw(k_nan, umax_slot(slot), c_neg_inf(), 6);  // greater than: a negative NaN
        slow16_.emplace_back();
        slow16_stub &st = slow16_.back();
        st.disp = disp;
        kortestd(k_neg, k_nan);
        jnz(st.slow, T_NEAR);
        vmovdqu32(ptr[reg_pd + reg_to + disp], v(slot));
        L(st.back);
    }

    // The out-of-line ends of skewed_done16: the pointers move to the
    // column, exact_column16 writes it, and they move back.
    struct slow16_stub {
        Label slow, back;
        int disp = 0;
    };
    std::deque<slow16_stub> slow16_;

    // After the skewed subroutine: the stubs, then exact_column16 itself,
    // which takes the column at [p0], [p1] (rows) and [reg_pd] (running
    // max) with the three statistics (group_body_raw), in registers the
    // skewed blocks leave alone.
    void exact_column16() {
        Label l_exact;
        for (auto &st : slow16_) {
            L(st.slow);
            for (const Reg64 &r : {reg_p0, reg_p1, reg_pd}) add(r, st.disp);
            call(l_exact);
            for (const Reg64 &r : {reg_p0, reg_p1, reg_pd}) sub(r, st.disp);
            jmp(st.back, T_NEAR);
        }
        L(l_exact);
        const Xmm smax = v(29), umax = v(30), umin = v(31), x = v(27);
        vmovdqu32(smax, ptr[reg_pd]);
        vmovdqa32(umax, smax);
        vmovdqa32(umin, smax);
        for (int r = 0; r < skew_rows(); ++r) {
            vmovdqu32(x, row(r));
            vpmaxsw(smax, smax, x);
            vpmaxuw(umax, umax, x);
            vpminuw(umin, umin, x);
        }
        select16(smax, umin, umax, x);
        vmovdqu32(ptr[reg_pd + reg_to], smax);
        ret();
    }

    void ld(mode m, const Xmm &x, const Address &a, data_type dt) {
        if (m == mode::full) load(x, a, dt);
        else if (m == mode::tail) load_tail(x, a, dt);
        else load_bcast(x, a, dt, Xmm(15));
    }
    void st(mode m, const Address &a, const Xmm &x) {
        if (m == mode::full) store(a, x, cfg_.dst_dt, v(14));
        else if (m == mode::tail) store_tail(a, x, cfg_.dst_dt, v(14));
        else store_scalar(a, x, cfg_.dst_dt, Xmm(14));
    }

    // Rows per full group: 8 with AVX-512 (rax holds 3 * row stride), 4
    // with AVX2 (whose scalar tail needs eax). Larger groups halve the dst
    // round trips per src vector. Rows past half() are read from reg_p1.
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

    // With cfg_.prefetch (src at least the L3's size, plan.cpp) each row
    // of a full step prefetches its line 2 KiB ahead into L2: 8 rows one stride
    // apart are more streams than the hardware prefetchers keep up with.
    // AMD Zen 4, % of the roofline, medians of 3-5 interleaved runs: from
    // memory it helps (f32 4096x4096 axis 2 90 -> 92%, 64x64x64x64 axis 1
    // 89 -> 94%; prefetcht0 cost 10-40% there), from the L3 it costs
    // (1x128x150x150 axis 1 78 -> 69%, channels-last 32x64x56x56 axis 0
    // 80 -> 75%, 8x64x64x64 axis 1 58 -> 51%). Past the tile's end the
    // line is the next tile's or the next row's, read soon after.
    void prefetch_rows(mode m, int g) {
        if (m != mode::full || !cfg_.prefetch) return;
        for (int k = 0; k < g; ++k) prefetcht1(row(k, prefetch_ahead_bytes));
    }

    // dst = max(dst, rows 0 .. g-1), or (fresh) just the max of the rows.
    // Junk lanes of a masked tail are zero and never stored.
    void group_body(mode m, int g, bool fresh) {
        prefetch_rows(m, g);
        if (raw16() && is512() && m != mode::scalar) return group_body_raw_checked(m, g, fresh);
        if (raw16()) return group_body_raw(m, g, fresh);
        group_body_f32(m, g, fresh, !is512() || m == mode::scalar);
    }

    // f32 lanes, g rows joined into the running max. exact: the NaN-aware
    // max throughout. Otherwise (AVX-512) a plain vmaxps tree, and beside
    // it one masked compare per pair of rows into the ordered-lane chains
    // (track_ordered_pair), tested once per pass (pass()): only a pass
    // whose rows hold a NaN is redone exactly. The exact max alone, a
    // compare per row, held fewer loads in flight (65% of a streaming read
    // at 64 MiB, doc/performance-history.md). The pairs replaced a vaddps tree (g - 1
    // adds, also tripped by +inf meeting -inf): from the L3 on Zen 4,
    // channels-last 32x64x56x56 axis 0 went from 58% to 64% of the
    // roofline, 1x128x150x150 axis 1 from 76% to 80%.
    // Junk lanes of a masked tail are zero: ordered, never stored.
    void group_body_f32(mode m, int g, bool fresh, bool exact) {
        // The running max and nanmax's temporary, past the rows' registers.
        const Xmm run = v(std::max(8, g)), tmp = v(std::max(8, g) + 1);
        for (int k = 0; k < g; ++k) ld(m, v(k), row(k), cfg_.src_dt);
        if (!exact) {
            if (g == 1) track_ordered(0, v(0));
            for (int k = 0; k + 1 < g; k += 2) track_ordered_pair(k / 2, v(k), v(k + 1));
        }
        for (int w = 1; w < g; w *= 2)
            for (int i = 0; i + w < g; i += 2 * w) {
                if (exact) nanmax(v(i), v(i + w), tmp);
                else vmaxps(v(i), v(i), v(i + w));
            }
        if (fresh) {
            st(m, ptr[reg_pd + reg_to], v(0));
            return;
        }
        ld(m, run, ptr[reg_pd], cfg_.dst_dt);
        // vmaxps returns its second operand when either is NaN: the running
        // max's NaN stays (the rows' are the pass's redo's business).
        if (exact) nanmax(run, v(0), tmp);
        else vmaxps(run, v(0), run);
        st(m, ptr[reg_pd + reg_to], run);
    }

    // AVX-512, 16-bit lanes: the signed max tree alone is the answer where
    // a lane saw a value >= +0 and no negative NaN (whose bits, above
    // -inf's as unsigned, an unsigned max tree shows). Only a step with a
    // lane of negatives only, or a negative NaN, redoes its rows with the
    // three statistics (group_body_raw); the unsigned min tree is skipped
    // otherwise. Junk lanes of a masked tail (-inf) do not count.
    void group_body_raw_checked(mode m, int g, bool fresh) {
        const Opmask k_neg = k_ord_, k_nan = Opmask(1);
        raw_stats(m, g, fresh, false);
        vpmovw2m(k_neg, v(0));
        if (m == mode::tail) kandd(k_neg, k_neg, k_tail_);
        vpcmpuw(k_nan, umax16(0), c_neg_inf(), 6);  // greater than: a negative NaN
        Label l_slow, l_done;
        kortestd(k_neg, k_nan);
        jnz(l_slow, T_NEAR);
        store16(m, v(0));
        jmp(l_done, T_NEAR);
        L(l_slow);
        group_body_raw(m, g, fresh);
        L(l_done);
    }

    // A vector of each row in 16-bit lanes; a tail keeps -inf past the
    // tile's end (not NaN, no effect on the max) and stores only its lanes;
    // AVX2's one-column steps broadcast the element.
    void ld16(mode m, const Xmm &x, const Address &a) {
        if (m == mode::full) {
            if (is512()) vmovdqu32(x, a);
            else vmovdqu(x, a);
        } else if (m == mode::scalar) {
            vpbroadcastw(x, Address(16, false, a.getRegExp()));
        } else {
            vmovdqa32(x, c_neg_inf());
            vmovdqu16(x | k_tail_, a);
        }
    }

    // bf16/f16 on the raw 16-bit bits, as the inner rows (design.md): a
    // signed max tree is the max where a lane saw a value >= +0 (positive
    // NaNs win it), an unsigned min tree the max where it saw only
    // negatives, and an unsigned max tree above -inf's bits shows a
    // negative NaN, which turns the lane into the quiet NaN. 3 ops per row
    // and no key conversions; the keys took 4 and 5 more per group.
    // AVX2 (4 rows a group): the same in ymm 0-9 and 12-13.
    void group_body_raw(mode m, int g, bool fresh) {
        raw_stats(m, g, fresh, true);
        select16(v(0), umin16(0), umax16(0), v(9));
        store16(m, v(0));
    }

    // The three statistics' registers (the signed max is v(i)).
    Xmm umax16(int i) const { return v(is512() ? 8 + i : 4 + i); }
    Xmm umin16(int i) const { return v(is512() ? 12 + i : 6 + i); }

    // g rows' 16-bit vectors (joined by the running max unless fresh) into
    // the signed max v(0), the unsigned max umax16(0) and, with_umin, the
    // unsigned min umin16(0).
    void raw_stats(mode m, int g, bool fresh, bool with_umin) {
        const Xmm d = v(is512() ? 16 : 8);
        for (int k = 0; k < g; ++k) ld16(m, v(k), row(k));
        if (g == 1) {
            copy16(umax16(0), v(0));
            if (with_umin) copy16(umin16(0), v(0));
        }
        for (int i = 0; 2 * i + 1 < g; ++i) {
            vpmaxuw(umax16(i), v(2 * i), v(2 * i + 1));
            if (with_umin) vpminuw(umin16(i), v(2 * i), v(2 * i + 1));
        }
        for (int w = 1; 2 * w < g; w *= 2)
            for (int i = 0; i + w < g / 2; i += 2 * w) {
                vpmaxuw(umax16(i), umax16(i), umax16(i + w));
                if (with_umin) vpminuw(umin16(i), umin16(i), umin16(i + w));
            }
        for (int w = 1; w < g; w *= 2)
            for (int i = 0; i + w < g; i += 2 * w) vpmaxsw(v(i), v(i), v(i + w));
        if (!fresh) {
            ld16(m, d, ptr[reg_pd]);
            vpmaxuw(umax16(0), umax16(0), d);
            if (with_umin) vpminuw(umin16(0), umin16(0), d);
            vpmaxsw(v(0), v(0), d);
        }
    }

    // x's 16-bit lanes to this pass's output (the tail's lanes, or AVX2's
    // one column).
    void store16(mode m, const Xmm &x) {
        const Address to = ptr[reg_pd + reg_to];
        if (m == mode::full && is512()) vmovdqu32(to, x);
        else if (m == mode::full) vmovdqu(to, x);
        else if (m == mode::tail) vmovdqu16(to | k_tail_, x);
        else vpextrw(word[reg_pd + reg_to], Xmm(x.getIdx()), 0);
    }
};


#undef ARG

} // namespace

jit_fn generate_vertical(const kernel_config &cfg, code_buffer &buf) {
    if (cfg.family == family_t::vert_reg) return generate_vertical_reg(cfg, buf);
    return generate_with<vertical_generator>(cfg, buf);
}

} // namespace crest::impl::jit
