// The `inner` family's ends of an output (gen_inner.hpp): the
// accumulators' trees, the fold of the lanes and the store, NaN and the
// accumulate flag taken in.
#include "backend/jit/gen_inner.hpp"

#include <cstddef>

namespace crest::impl::jit {

using namespace Xbyak;

#define ARG(field) qword[reg_args + offsetof(inner_call, field)]

void inner_generator::reset_minraw() {
    for (int u = 0; u < (is512() ? 4 : 2); ++u) vmovaps(minraw(u), neg_inf16v());
}

void inner_generator::max_tree() {
    for (int w = 1; w < nacc(); w *= 2)
        for (int i = 0; i + w < nacc(); i += 2 * w)
            vpmaxsw(acc(i), acc(i), acc(i + w));
}

void inner_generator::min_tree() {
    vpminuw(minraw(0), minraw(0), minraw(1));
    if (!is512()) return;
    vpminuw(minraw(2), minraw(2), minraw(3));
    vpminuw(minraw(0), minraw(0), minraw(2));
}

void inner_generator::fold_and_store_flagged(bool trees) {
    if (raw16()) fold_lanes_keys(trees);
    else fold_lanes_f32();
    const Xmm rx(acc(0).getIdx()), tx(x(0).getIdx());
    const Xmm sx(scratch(1).getIdx()), mask(abs_mask().getIdx());
    Label l_nan, l_store, l_done;
    if (raw16() && is512()) {
        vpcmpuw(k_ord_, absmax(), neg_inf16v(), 6);  // greater than -inf
        kortestd(k_ord_, k_ord_);
    } else if (raw16()) {
        test_negative_nan_avx2(absmax(), neg_inf16v(), tmp(0));
    } else {
        test_invalid_flag();
    }
    jnz(l_nan, T_NEAR);
    cmp(ARG(accumulate), 0);
    je(l_store, T_NEAR);
    // Join dst: NaN there is NaN out.
    if (raw16()) {
        movzx(eax, word[reg_dst]);
        vmovd(tx, eax);
        and_(eax, 0x7fff);
        cmp(eax, nan_above());
        ja(l_nan, T_NEAR);
        to_key16(tx, sx, mask);
        vpmaxsw(rx, rx, tx);
    } else {
        vmovss(tx, dword[reg_dst]);
        vucomiss(tx, tx);
        jp(l_nan, T_NEAR);
        vmaxss(rx, rx, tx);
    }
    L(l_store);
    if (raw16()) {
        to_key16(rx, sx, mask);  // back to bits
        vmovd(eax, rx);
        mov(word[reg_dst], ax);
    } else {
        vmovss(dword[reg_dst], rx);
    }
    jmp(l_done, T_NEAR);
    L(l_nan);
    if (raw16()) {
        mov(word[reg_dst], quiet_nan());
    } else {
        mov(dword[reg_dst], 0x7fc00000);
        clear_fp_flags();  // for the next output's test
    }
    L(l_done);
}

void inner_generator::fold_lanes_f32() {
    for (int w = 1; w < nacc(); w *= 2)
        for (int i = 0; i + w < nacc(); i += 2 * w)
            vmaxps(acc(i), acc(i), acc(i + w));
    const Zmm r(acc(0).getIdx());
    const Zmm t(x(0).getIdx());
    if (is512()) {
        vextractf32x8(Ymm(t.getIdx()), r, 1);
        vmaxps(Ymm(r.getIdx()), Ymm(r.getIdx()), Ymm(t.getIdx()));
    }
    vextractf128(Xmm(t.getIdx()), Ymm(r.getIdx()), 1);
    vmaxps(Xmm(r.getIdx()), Xmm(r.getIdx()), Xmm(t.getIdx()));
    vmovhlps(Xmm(t.getIdx()), Xmm(t.getIdx()), Xmm(r.getIdx()));
    vmaxps(Xmm(r.getIdx()), Xmm(r.getIdx()), Xmm(t.getIdx()));
    vmovshdup(Xmm(t.getIdx()), Xmm(r.getIdx()));
    vmaxss(Xmm(r.getIdx()), Xmm(r.getIdx()), Xmm(t.getIdx()));
}

void inner_generator::fold_lanes_keys(bool trees) {
    if (trees) {
        max_tree();
        min_tree();
        to_key16(acc(0), minraw(1), abs_mask());
        to_key16(minraw(0), minraw(1), abs_mask());
        vpmaxsw(acc(0), acc(0), minraw(0));
    }
    const int r = acc(0).getIdx(), t = x(0).getIdx();
    if (is512()) {
        vextracti32x8(Ymm(t), Zmm(r), 1);
        vpmaxsw(Ymm(r), Ymm(r), Ymm(t));
    }
    vextracti128(Xmm(t), Ymm(r), 1);
    vpmaxsw(Xmm(r), Xmm(r), Xmm(t));
    vpshufd(Xmm(t), Xmm(r), 0x4e);  // swap the 64-bit halves
    vpmaxsw(Xmm(r), Xmm(r), Xmm(t));
    vpshufd(Xmm(t), Xmm(r), 0xb1);  // swap the 32-bit halves
    vpmaxsw(Xmm(r), Xmm(r), Xmm(t));
    vpsrld(Xmm(t), Xmm(r), 16);
    vpmaxsw(Xmm(r), Xmm(r), Xmm(t));
}

#undef ARG

} // namespace crest::impl::jit
