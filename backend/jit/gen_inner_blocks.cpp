// Short inner rows in blocks of outputs (gen_inner_blocks.hpp).
#include "backend/jit/gen_inner_blocks.hpp"

#include <algorithm>
#include <functional>
#include <vector>

#include "backend/jit/generators.hpp"

namespace crest::impl::jit {

using namespace Xbyak;

#define ARG(field) qword[reg_args + offsetof(inner_call, field)]

// Folds the vlen() accumulators vmm(0 .. vlen()-1) into vmm(0), lane k
// = output k: pairs of registers share out 256-bit halves, then 128-bit
// lanes (AVX-512: vshuff32x4; AVX2: one level of vperm2f128), then
// floats within lanes (vshufps). exact: the NaN-aware max; else the
// accumulators are known to hold no NaN.
void inner_blocks_generator::fold(bool exact, bool words) {
    const Xmm t = vmm(is512() ? 17 : 13), t1 = vmm(is512() ? 18 : 14), t2 = vmm(is512() ? 19 : 15);
    auto level = [&](int pairs_n, bool lanes, uint8_t lo, uint8_t hi) {
        for (int i = 0; i < pairs_n; ++i) {
            const Xmm a = vmm(2 * i), b = vmm(2 * i + 1);
            if (lanes && !is512()) {
                vperm2f128(Ymm(t1.getIdx()), Ymm(a.getIdx()), Ymm(b.getIdx()), lo);
                vperm2f128(Ymm(t2.getIdx()), Ymm(a.getIdx()), Ymm(b.getIdx()), hi);
            } else if (lanes) {
                vshuff32x4(Zmm(t1.getIdx()), Zmm(a.getIdx()), Zmm(b.getIdx()), lo);
                vshuff32x4(Zmm(t2.getIdx()), Zmm(a.getIdx()), Zmm(b.getIdx()), hi);
            } else {
                vshufps(t1, a, b, lo);
                vshufps(t2, a, b, hi);
            }
            if (exact) {
                nanmax(t1, t2, t);
                vmovaps(vmm(i), t1);
            } else if (words) {
                vpmaxsw(vmm(i), t1, t2);
            } else {
                vmaxps(vmm(i), t1, t2);
            }
        }
    };
    if (is512()) {
        level(8, true, 0x44, 0xee);
        level(4, true, 0x88, 0xdd);
    } else {
        level(4, true, 0x20, 0x31);  // low halves | high halves
    }
    level(2, false, 0x44, 0xee);
    level(1, false, 0x88, 0xdd);
}

// One row per output (channels-last reducing C): each output's vectors
// in memory order into a plain vmaxps chain, and beside it a NaN check;
// ZF clear (jnz taken) when it fired, and the caller redoes the block
// exactly. Memory order keeps one stream per thread: the vector-major
// order (a vector of each row in turn, 16 rows 256 B to 4 KiB apart) read
// 25 MiB channels-last from L3 at half the speed on AMD Zen 4
// (doc/performance-history.md, session 8).
// From the caches (blocks_by_flags()): plain maxes, f32 rows straight
// from memory into them; a NaN raises the invalid flag, which the caller
// tests after the fold. With the ordered-lane compares used before (one
// per vector) channels-last 32x64x56x56 axis 1 read 76-86% of the
// roofline on Zen 4, 83-91% without. From memory (cfg_.prefetch: src past
// the L3) the checks stay, ZF clear (jnz taken) when one fired and the
// caller then redoes the block exactly: without them 64x256x56x56 axis 1
// (196 MiB) read 96-99% of the roofline, with them 102-104%. AVX-512: the
// ordered-lane masks (track_ordered), exact; a partial last vector joins
// by a masked max (junk lanes zero, ordered, never NaN). AVX2 (no
// opmasks; whole vectors only): four running vaddps totals, NaN only if
// an element is or +inf met -inf.
void inner_blocks_generator::block_fast(const std::function<Address(int, int)> &addr,
        const std::function<Xmm(int)> &acc_of, int nfull, bool tail, bool more) {
    const Reg64 p = r11, vcnt = r8;
    const int vbytes = vlen() * ssz();
    const Xmm totals[4] = {vmm(11), vmm(12), vmm(13), vmm(14)};  // AVX2
    int chain = 0;
    auto temp = [&] { return is512() ? vmm(16 + chain % 4) : vmm(8 + chain % 2); };
    const bool flags = blocks_by_flags();
    auto take = [&](const Xmm &m, const Address &a, bool first) {
        first = first && !more;
        if (flags && !first && !raw16()) {
            vmaxps(m, m, a);
            return;
        }
        const Xmm x = first ? m : temp();
        load(x, a, cfg_.src_dt);
        if (!flags && is512()) track_ordered(chain, x);
        else if (!flags) vaddps(totals[chain % 4], totals[chain % 4], x);
        ++chain;
        if (!first) vmaxps(m, m, x);
    };
    if (!flags && is512()) reset_ordered();
    else if (!flags)
        for (const Xmm &t : totals) vxorps(t, t, t);
    if (raw_pairs()) {
        // One output's row after another, in memory order.
        for (int k = 0; k < vlen(); ++k) {
            for (int st = 0; st < pair_steps(); ++st)
                pair_step(acc_of(k), [&](int v) { return addr(k, v); }, st, st == 0 && !more,
                        temp(), clean_temp(k));
            ++chain;
        }
        return;
    }
    auto rows_by_vectors = [&] {
        for (int k = 0; k < vlen(); ++k) {
            const Xmm m = acc_of(k);
            if (nfull == 0 && !more) vmovaps(m, vmm(20));  // -inf (blocks(), AVX-512 only)
            if (nfull <= 8) {
                for (int v = 0; v < nfull; ++v) take(m, addr(k, v), v == 0);
            } else {
                // Long rows: a loop of four vectors per turn keeps the code short.
                lea(p, addr(k, 0));
                take(m, ptr[p], true);
                add(p, vbytes);
                mov(vcnt, (nfull - 1) / 4);
                Label l_four;
                L(l_four);
                for (int v = 0; v < 4; ++v) take(m, ptr[p + v * vbytes], false);
                add(p, 4 * vbytes);
                dec(vcnt);
                jnz(l_four, T_NEAR);
                for (int v = 0; v < (nfull - 1) % 4; ++v) take(m, ptr[p + v * vbytes], false);
            }
            if (tail && !is512()) {
                take(m, last_vector(addr(k, nfull)), false);
            } else if (tail && flags && !raw16()) {
                // Lanes outside the mask are neither read nor flagged.
                vmaxps(m | k_tail_, m, addr(k, nfull));
            } else if (tail) {
                const Xmm x = temp();
                load_tail(x, addr(k, nfull), cfg_.src_dt);
                if (!flags) track_ordered(chain++, x);
                vmaxps(m | k_tail_, m, x);
            }
        }
    };
    if (flags && !raw16() && block_lines_fit()) block_lines(acc_of, rows_by_vectors, more);
    else rows_by_vectors();
    if (flags) return;
    if (is512()) {
        test_ordered_nan();
        return;
    }
    vaddps(totals[0], totals[0], totals[1]);
    vaddps(totals[2], totals[2], totals[3]);
    vaddps(totals[0], totals[0], totals[2]);
    test_nan(totals[0], totals[1]);
}

void inner_blocks_generator::later_rows(const std::function<void()> &body) {
    mov(blk_rows, ARG(rows));
    dec(blk_rows);
    Label l_row;
    L(l_row);
    add(blk_pa, ARG(row_stride));
    add(blk_pb, ARG(row_stride));
    body();
    dec(blk_rows);
    jnz(l_row, T_NEAR);
}

// Short rows: per output, the lane folding costs as much as the row, so
// vlen() outputs (16; AVX2: 8) go at once, one accumulator each, and
// are folded together by a transpose-reduce (15 two-source shuffles and
// maxes in all; AVX2: 7), then stored as one vector. The rows are
// generated for cfg_.block_n elements (the exact block unrolled up to 4
// vectors, block_fast up to 8, looped past that). With one row per output
// a block first tries block_fast. Runs while vlen() outputs remain, the
// call's n is block_n and dst is contiguous; the per-output loop does the
// rest. AVX2 (no masked loads): rows past a whole number of vectors
// take their last vector overlapping the one before (last_vector).
void inner_blocks_generator::blocks() {
    // Outputs 0-7 are read from pa, 8-15 from pb, at multiples of the
    // output stride os (os3, os5, os7 precomputed: every k * os is one
    // base + index * scale address).
    const Reg64 &rows = blk_rows, &pa = blk_pa, &tmp = blk_tmp;
    const Reg64 &os = blk_os, &os3 = blk_os3, &os5 = blk_os5, &os7 = blk_os7, &pb = blk_pb;
    const Xmm x = vmm(is512() ? 16 : 8), t = vmm(is512() ? 17 : 9);
    const Xmm ninf = vmm(is512() ? 20 : 10);
    const int nfull = cfg_.block_n / vlen();
    const int tail = cfg_.block_n % vlen();
    auto addr_bytes = [&](int k, int disp) {
        const Reg64 base = k < 8 ? pa : pb;
        switch (k % 8) {
            case 0: return ptr[base + disp];
            case 1: return ptr[base + os + disp];
            case 2: return ptr[base + os * 2 + disp];
            case 3: return ptr[base + os3 + disp];
            case 4: return ptr[base + os * 4 + disp];
            case 5: return ptr[base + os5 + disp];
            case 6: return ptr[base + os3 * 2 + disp];
            default: return ptr[base + os7 + disp];
        }
    };
    auto addr = [&](int k, int v) { return addr_bytes(k, v * vlen() * ssz()); };
    // Output k goes to the register whose lane k the fold below leaves
    // it in (AVX-512: a 4x4 transpose of lane groups, its own inverse;
    // AVX2: lane k = 4 * half + j holds register 2 * j + half).
    auto acc_of = [&](int k) {
        return is512() ? vmm((k % 4) * 4 + k / 4) : vmm((k % 4) * 2 + k / 4);
    };
    // Emits body(v) for vectors v0..v1-1 of the rows at pa/pb: unrolled
    // when few, else a loop of two vectors per turn that moves pa/pb
    // (and puts them back): the code of a long row stays short, which
    // is most of what generating it costs.
    const Reg64 vcnt = r8;  // reg_row: the per-output loop sets it again
    const int vbytes = vlen() * ssz();
    auto walk_vectors = [&](int v0, int v1, const std::function<void(int)> &body) {
        const int n = v1 - v0;
        if (n <= 4) {
            for (int v = v0; v < v1; ++v) body(v);
            return;
        }
        add(pa, v0 * vbytes);
        add(pb, v0 * vbytes);
        mov(vcnt, n / 2);
        Label l_two;
        L(l_two);
        body(0);
        body(1);
        add(pa, 2 * vbytes);
        add(pb, 2 * vbytes);
        dec(vcnt);
        jnz(l_two, T_NEAR);
        if (n % 2) body(0);
        sub(pa, (v0 + n / 2 * 2) * vbytes);
        sub(pb, (v0 + n / 2 * 2) * vbytes);
    };
    Label l_block, l_end, l_skip;
    cmp(ARG(n), cfg_.block_n);
    jne(l_skip, T_NEAR);
    cmp(ARG(out_dst_stride), dsz());
    jne(l_skip, T_NEAR);
    push(rbx); push(r12); push(r13); push(r14); push(r15);
    mov(blk_mode, word_blocks() ? 0 : 1);
    // Negative NaNs are the bits above -inf's (clobbers eax).
    // (AVX2's word blocks broadcast theirs where they test.)
    if ((word_blocks() && is512()) || (raw_pairs() && f16_bits()))
        bcast16(c_neg_inf(), neg_inf16());
    if (word_blocks() && is512()) bcast16(word_floor(), 0x8000);
    if (bf16_pairs()) {
        mov(tmp.cvt32(), 0xffff0000u);
        vmovd(Xmm(high_mask().getIdx()), tmp.cvt32());
        vpbroadcastd(high_mask(), Xmm(high_mask().getIdx()));
    }
    if (tail && is512()) {
        mov(tmp, tail);
        set_tail_mask(tmp);
    }
    if (raw_pairs() && masked_last_pair()) {
        const int rem = cfg_.block_n % (2 * vlen());
        mov(tmp.cvt32(), (1u << (rem / 2)) - 1);
        kmovw(k_pair_, tmp.cvt32());
    }
    bcast_neg_inf(ninf);
    mov(os, ARG(out_src_stride));
    lea(os3, ptr[os + os * 2]);
    lea(os5, ptr[os + os * 4]);
    lea(os7, ptr[os3 + os * 4]);
    // Every row of the block's outputs with the NaN-aware max (the exact
    // redo), vector-major: consecutive instructions feed different
    // accumulators (each max waits on its own accumulator's last one).
    // Starts pa and pb at the block's first row and moves them.
    auto exact_rows = [&] {
        mov(pa, reg_src);
        lea(pb, ptr[reg_src + os * 8]);
        for (int k = 0; k < vlen(); ++k) vmovaps(vmm(k), ninf);
        mov(rows, ARG(rows));
        Label l_row;
        L(l_row);
        // A whole vector of output k's row into its accumulator.
        auto take = [&](int k, const Address &a) {
            load(x, a, cfg_.src_dt);
            nanmax(acc_of(k), x, t);
        };
        walk_vectors(0, nfull, [&](int v) {
            for (int k = 0; k < vlen(); ++k) take(k, addr(k, v));
        });
        if (tail)
            for (int k = 0; k < vlen(); ++k) {
                if (!is512()) {
                    take(k, last_vector(addr(k, nfull)));
                    continue;
                }
                load_tail(x, addr(k, nfull), cfg_.src_dt);
                nanmax_tail(acc_of(k), x);
            }
        add(pa, ARG(row_stride));
        add(pb, ARG(row_stride));
        dec(rows);
        jnz(l_row, T_NEAR);
    };
    // First the fast block (one row per output: channels-last reducing C)
    // or the rows with plain maxes; the exact rows only after a NaN.
    Label l_exact, l_folded;
    L(l_block);
    cmp(reg_nout, vlen());
    jl(l_end, T_NEAR);
    mov(pa, reg_src);
    lea(pb, ptr[reg_src + os * 8]);
    // The words first (they raise no flag), unless a block before needed
    // the pairs (blk_mode 1) or the clean pairs (2).
    Label l_redo, l_clean, l_after_words;
    if (word_blocks()) {
        cmp(blk_mode, 1);
        je(l_after_words, T_NEAR);
        if (bf16_pairs()) ja(l_clean, T_NEAR);
        word_block(addr_bytes, acc_of, l_folded, blocks_by_flags() ? l_redo : l_exact);
    } else if (bf16_pairs()) {
        cmp(blk_mode, 1);
        ja(l_clean, T_NEAR);
    }
    L(l_after_words);
    if (blocks_by_flags()) {
        // The block with plain maxes, folded, into l_folded unless the
        // flag (or f16's negative NaN check) sends it on.
        auto fast_block = [&] {
            Label l_rows, l_fold;
            if (raw_pairs() && f16_bits()) vpxord(chain16(), chain16(), chain16());
            cmp(ARG(rows), 1);
            jne(l_rows, T_NEAR);
            block_fast(addr, acc_of, nfull, tail);
            jmp(l_fold, T_NEAR);
            L(l_rows);
            {
                // Several rows an output (an outer reduced dim: NCHW
                // reducing N, H and W): a row's block after another, each
                // in memory order, where the rows vector-major read the
                // 16 outputs' rows, hundreds of bytes apart, in turn. Zen
                // 4, bg_runs.sh, % of the roofline, 25 MiB, NCHW reducing
                // N, H and W: f32 2x40454x9x9 37-43 -> 106, 3x26969x9x9
                // 37-41 -> 106-111, 2x16718x14x14 49 -> 99.
                block_fast(addr, acc_of, nfull, tail);
                later_rows([&] { block_fast(addr, acc_of, nfull, tail, true); });
            }
            L(l_fold);
            // Every element has been an operand of a max by the end of the
            // fold: its flag tells whether one was NaN.
            fold(false);
            if (raw_pairs() && f16_bits()) {
                negative_nan_lanes(k_ord_, chain16());
                kortestd(k_ord_, k_ord_);
                jnz(l_redo, T_NEAR);
                // f16 bits in the high halves to floats.
                vpsrld(x, vmm(0), 16);
                vpmovdw(Ymm(x.getIdx()), x);
                vcvtph2ps(vmm(0), Ymm(x.getIdx()));
            } else if (raw_pairs()) {
                clear_low_halves(vmm(0));
            }
            test_invalid_flag();
            jz(l_folded, T_NEAR);
        };
        fast_block();
        if (bf16_pairs()) {
            // The flag came from a NaN or from an infinity beside a
            // nonzero element: the clean pairs tell which, from here on.
            // Masked scores (half of the elements -inf) read 32-34% of
            // the roofline on Zen 4 when every block redid exactly.
            clear_fp_flags();
            mov(blk_mode, 2);
            L(l_clean);
            mov(pa, reg_src);
            lea(pb, ptr[reg_src + os * 8]);
            clean_pairs_ = true;
            fast_block();
            clean_pairs_ = false;
        }
        L(l_redo);
        clear_fp_flags();
    } else {
        // From memory: each row's block checked as it is read (ZF clear:
        // a NaN, and the block goes exact). f32 outputs of several rows
        // take them a row's block after another, as from the caches: Zen
        // 4, f32 3x37448x100 reducing the 3 and the 100 (45 MB) read 30%
        // of the roofline by the exact rows; 16-bit pairs keep them.
        Label l_fold;
        if (raw16()) {
            cmp(ARG(rows), 1);
            jne(l_exact, T_NEAR);
        }
        block_fast(addr, acc_of, nfull, tail);
        jnz(l_exact, T_NEAR);
        if (!raw16()) {
            cmp(ARG(rows), 1);
            je(l_fold, T_NEAR);
            later_rows([&] {
                block_fast(addr, acc_of, nfull, tail, true);
                jnz(l_exact, T_NEAR);
            });
        }
        L(l_fold);
        fold(false);
        jmp(l_folded, T_NEAR);
    }
    L(l_exact);
    exact_rows();
    fold(true);
    L(l_folded);
    Label l_store;
    cmp(ARG(accumulate), 0);
    je(l_store, T_NEAR);
    load(x, ptr[reg_dst], cfg_.dst_dt);
    nanmax(vmm(0), x, t);
    L(l_store);
    store(ptr[reg_dst], vmm(0), cfg_.dst_dt, t);
    lea(reg_src, ptr[reg_src + os * 8]);
    if (is512()) lea(reg_src, ptr[reg_src + os * 8]);
    add(reg_dst, vlen() * dsz());
    sub(reg_nout, vlen());
    jmp(l_block, T_NEAR);
    L(l_end);
    pop(r15); pop(r14); pop(r13); pop(r12); pop(rbx);
    L(l_skip);
}

#undef ARG

} // namespace crest::impl::jit
