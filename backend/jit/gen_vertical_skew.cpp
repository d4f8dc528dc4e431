// The vertical tiles' skewed blocks (gen_vertical.hpp, skew_rows()): a
// subroutine of the kernel that every full pass calls (bf16/f16: one per
// mode, positive or negative lanes), and for bf16/f16 the out-of-line ends
// of the columns that need more than their one statistic.
#include "backend/jit/gen_vertical.hpp"

namespace crest::impl::jit {

using namespace Xbyak;

void vertical_generator::call_skewed(int g) {
    if (!raw16()) return call(g == skew_rows() ? l_skewed_ : l_skewed8_);
    Label l_neg, l_done;
    kortestd(k_neg_mode, k_neg_mode);
    jnz(l_neg, T_NEAR);
    call(l_skewed_);
    jmp(l_done, T_NEAR);
    L(l_neg);
    call(l_skewed_neg_);
    L(l_done);
}

void vertical_generator::skewed_blocks(bool neg, int W) {
    const int cols = W * step();
    const int nb = W / half();
    Label l_none, l_full, l_last;
    // The next pass's rows start W rows on, right after this
    // pass's.
    if (cfg_.prefetch_pass) {
        push(reg_next);
        mov(reg_next, reg_p0);
        past_rows(reg_next, W);
    }
    cmp(reg_cnt, cols);
    jl(l_none, T_NEAR);
    skewed_block(block::first, neg, W);
    advance(nb, cols);
    L(l_full);
    cmp(reg_cnt, cols);
    jl(l_last, T_NEAR);
    skewed_block(block::full, neg, W);
    advance(nb, cols);
    jmp(l_full, T_NEAR);
    L(l_last);
    skewed_block(block::last, neg, W);
    L(l_none);
    if (cfg_.prefetch_pass) pop(reg_next);
}

void vertical_generator::skewed_block(block b, bool neg, int W) {
    const int vbytes = step() * ssz();
    int next_lines = 0;  // prefetch_pass: lines past reg_next so far
    for (int i = 0; i < (b == block::last ? W - 1 : W); ++i) {
        for (int r = 0; r < W; ++r) {
            if ((b == block::first && r > i) || (b == block::last && r <= i)) continue;
            const int slot = ((i - r) % W + W) % W;
            const Address a = row(r, (i - r) * vbytes);
            if (cfg_.prefetch) prefetcht1(row(r, (i - r) * vbytes + prefetch_ahead()));
            // 16-bit, where the tile prefetches (each row ahead or the next
            // pass): the line this row reads in the next step, into L1, so
            // that its load hits L1 and the two statistics waiting on it
            // leave the scheduler sooner (skewed_load16). Zen 4, ab_runs.sh
            // with two copies of each build, % of the roofline. Rows ahead:
            // bf16 channels-last 64x64x56x56 axis 0 80-84 -> 88-93, f16
            // 80-88 -> 88-99; f16 1x96x400x256 axis 1 76-86 -> 85-92; bf16
            // 48x64x56x56 axis 0 78-83 -> 77-88; bf16 64x256x56x56 axis 0
            // (from memory) 105-109 either way. 2-4 lines ahead gained
            // less (128 B 85-92, 256 B 79-86), 8 lost 10 points; f32 (one
            // max a load) gained nothing. Next pass: bf16 128x128x28x28
            // axis 1 57-62 -> 61-67, f16 64x64x56x56 axis 1 75-80 -> 79-84,
            // f16 4096x4096 axis 0 84-89 -> 84-92, bf16 64x64x56x56 axis 1
            // and f16 6400x2048 axis 0 within 2 points.
            if ((cfg_.prefetch || cfg_.prefetch_pass) && raw16())
                prefetcht0(row(r, (i - r + 1) * vbytes));
            if (cfg_.prefetch_pass) prefetcht1(ptr[reg_next + 64 * next_lines++]);
            if (raw16()) {
                skewed_load16(slot, r, a, neg);
                continue;
            }
            // A NaN raises the invalid flag (nan_by_flags()). From the
            // caches the rows go straight into the maxes (channels-last
            // 32x64x56x56 axis 0 on Zen 4: 64-75% -> 81-86% of the
            // roofline, most where part of src comes from memory), while
            // the prefetching tiles keep a register between (f32
            // 64x256x56x56 axis 0, 199 MiB: 94-96% with memory operands,
            // 100-101% without).
            const Xmm x = is512() ? v(16 + r % 15) : v(8 + r % 8);
            if (r == 0) {
                vmovups(v(slot), a);
            } else if (cfg_.prefetch) {
                vmovups(x, a);
                vmaxps(v(slot), v(slot), x);
            } else {
                vmaxps(v(slot), v(slot), a);
            }
        }
        if (b == block::first && i < W - 1) continue;
        // Column t0 + i - (W - 1) has all its rows.
        const int slot = (i + 1) % W;
        const int disp = (i - (W - 1)) * step() * dsz();
        if (raw16()) {
            skewed_done16(slot, disp, neg);
            continue;
        }
        // The running max's NaN stays (vmaxps returns its second
        // operand when either is NaN).
        vmaxps(v(slot), v(slot), ptr[reg_pd + disp]);
        vmovups(ptr[reg_pd + reg_to + disp], v(slot));
    }
    if (cfg_.prefetch_pass) add(reg_next, 64 * next_lines);
}

void vertical_generator::skewed_load16(int slot, int r, const Address &a, bool neg) {
    // Prefetching (src past the L3) or fused16: both statistics read the
    // vector from memory, the second read hitting L1, so that with the
    // prefetch a load takes 3 instructions, not 4, and more loads stay in
    // flight (f16 4096x4096 axis 0 on Zen 4, 32 MiB: 76% -> 84% of the
    // roofline). From the caches the doubled L1 reads cost instead (f16
    // 1x128x160x160 axis 1: 89% -> 84%; 61% where rows are not 64-byte
    // aligned), and f32's pairs gained nothing from it.
    const Xmm chain = umax_chain(r % 4);
    const bool from_memory = (cfg_.prefetch || cfg_.fused16) && r > 0;
    const Xmm x = r == 0 ? v(slot) : v(16 + r % 8);
    if (!from_memory) vmovdqu32(x, a);
    const Operand &y = from_memory ? static_cast<const Operand &>(a) : x;
    if (r > 0 && neg) vpminuw(v(slot), v(slot), y);
    else if (r > 0) vpmaxsw(v(slot), v(slot), y);
    vpmaxuw(chain, chain, y);
}

void vertical_generator::skewed_done16(int slot, int disp, bool neg) {
    const Xmm running = v(30);
    const Opmask k_neg = k_ord_, k_nan = Opmask(1);
    vmovdqu32(running, ptr[reg_pd + disp]);
    if (neg) {
        vpminuw(v(slot), v(slot), running);
        vpmovw2m(k_neg, v(slot));
        knotd(k_neg, k_neg);  // the lanes that saw a value >= +0
    } else {
        vpmaxsw(v(slot), v(slot), running);
        vpmovw2m(k_neg, v(slot));  // the lanes that saw only negatives
    }
    negative_nan_lanes(k_nan, running);
    slow16_.emplace_back();
    slow16_stub &st = slow16_.back();
    st.disp = disp;
    st.slot = slot;
    st.neg = neg;
    kortestd(k_neg, k_nan);
    jnz(st.slow, T_NEAR);
    vmovdqu32(ptr[reg_pd + reg_to + disp], v(slot));
    L(st.back);
}

void vertical_generator::exact_column16() {
    // Each stub hands its column's offset over in rdi (reg_args, saved
    // around the call) and its statistic in v(16): 28 bytes a stub, where
    // moving the five pointers in place took 70.
    Label l_exact[2];
    const Reg64 ptrs[] = {reg_p0, reg_p1, reg_p2, reg_p3, reg_pd};
    const Xmm stat = v(16), other = v(17);
    for (auto &st : slow16_) {
        L(st.slow);
        kaddd(k_slow_seen, k_slow_seen, k_one);
        push(reg_args);
        mov(reg_args, st.disp);
        vmovdqa32(stat, v(st.slot));
        call(l_exact[st.neg]);
        pop(reg_args);
        jmp(st.back, T_NEAR);
    }
    // The rows' negative NaNs are the pass's redo's business (umax_chain).
    // Positive mode: a lane whose signed max is negative saw only
    // negatives, whose max is their unsigned min. Negative mode: a lane
    // whose unsigned min is >= +0 saw such a value, and its max is the
    // signed max. A negative NaN running max stays NaN. The rows come from
    // L1 or L2 (rows a multiple of 4 KiB apart share a set), read in the
    // last 16 steps.
    for (bool neg : {false, true}) {
        L(l_exact[neg]);
        for (const Reg64 &r : ptrs) add(r, reg_args);
        vmovdqu32(other, ptr[reg_pd]);
        for (int r = 0; r < skew_rows(); ++r) {
            if (neg) vpmaxsw(other, other, row(r));
            else vpminuw(other, other, row(r));
        }
        vpmovw2m(k_ord_, stat);
        if (neg) knotd(k_ord_, k_ord_);
        vmovdqu16(stat | k_ord_, other);
        negative_nan_lanes(k_ord_, ptr[reg_pd]);
        vmovdqu16(stat | k_ord_, c_qnan());
        vmovdqu32(ptr[reg_pd + reg_to], stat);
        for (const Reg64 &r : ptrs) sub(r, reg_args);
        ret();
    }
}

} // namespace crest::impl::jit
