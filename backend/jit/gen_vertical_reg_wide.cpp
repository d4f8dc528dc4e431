// `vert_reg` on AVX-512 with more than 16 vectors of columns
// (gen_vertical_reg.hpp, wide()): every column of a slice in registers
// while its rows stream past in memory order.
#include <cstddef>
#include <functional>

#include "backend/jit/gen_vertical_reg.hpp"
#include "backend/jit/generators.hpp"

namespace crest::impl::jit {

using namespace Xbyak;

#define ARG(field) qword[reg_args + offsetof(vert_call, field)]

bool vertical_reg_generator::wide() const {
    return wide_columns(cfg_);
}

int vertical_reg_generator::wide_vectors() const {
    return raw16() ? npv() : nv();
}

int vertical_reg_generator::wide_regs() const {
    const int n = wide_vectors();
    return raw16() || n <= 32 ? n : 30;  // f32 spilling: two registers left
}

Xmm vertical_reg_generator::wide_umax(int i) const {
    return Zmm(wide_regs() + i);  // past the signed maxes
}

Address vertical_reg_generator::wide_slot(int i) const {
    return ptr[rsp + (i - wide_regs()) * 64];
}

void vertical_reg_generator::wide_load16(const Xmm &v, const Address &a, bool last) {
    // The last vector's lanes past the columns read as zeros, never
    // stored.
    if (!last) vmovdqu32(v, a);
    else vmovdqu16(v | k_tail_ | T_z, a);
}

void vertical_reg_generator::wide_rows(const std::function<void()> &row) {
    Label l_row, l_done;
    mov(reg_row, reg_src);
    mov(reg_rows, ARG(rows));
    L(l_row);
    test(reg_rows, reg_rows);
    jz(l_done, T_NEAR);
    row();
    add(reg_row, reg_rs);
    dec(reg_rows);
    jmp(l_row, T_NEAR);
    L(l_done);
}

void vertical_reg_generator::wide_slices(const std::function<void()> &slice) {
    Label l_slice;
    L(l_slice);
    slice();
    add(reg_src, ARG(outer_src_stride));
    add(reg_dst, ARG(outer_dst_stride));
    dec(reg_outer);
    jnz(l_slice, T_NEAR);
}

void vertical_reg_generator::wide_start() {
    const int n = wide_vectors(), r = wide_regs();
    const Zmm t(31);
    Label l_fresh, l_rows;
    cmp(ARG(accumulate), 0);
    je(l_fresh, T_NEAR);
    for (int i = 0; i < n; ++i) {
        const Address a = ptr[reg_dst + i * 64];
        const Zmm v = i < r ? Zmm(i) : t;
        if (raw16()) wide_load16(v, a, i == n - 1);
        else if (i < n - 1) vmovups(v, a);
        else vmovups(v | k_tail_ | T_z, a);
        if (raw16()) vmovdqa32(wide_umax(i), v);
        else if (i >= r) vmovdqa32(wide_slot(i), v);
    }
    jmp(l_rows, T_NEAR);
    L(l_fresh);
    // f32 and the signed max: -inf; the unsigned max: 0.
    if (raw16()) bcast16(t, jit_generator::neg_inf16());
    else bcast_neg_inf(t);
    for (int i = 0; i < n; ++i) {
        if (i < r) vmovdqa32(Zmm(i), t);
        else vmovdqa32(wide_slot(i), t);
    }
    if (raw16())
        for (int i = 0; i < n; ++i) vpxord(wide_umax(i), wide_umax(i), wide_umax(i));
    L(l_rows);
}

void vertical_reg_generator::wide_row() {
    const int n = wide_vectors(), r = wide_regs();
    // 16 vectors leave no load register: both statistics read the row
    // from memory, the last vector's lanes past the columns untouched.
    const bool fused = raw16() && 2 * r > 30;
    if (cfg_.prefetch)
        for (int off = 0; off < n * 64; off += 64) prefetcht0(ptr[reg_row + off + 4096]);
    for (int i = 0; i < n; ++i) {
        const Address a = ptr[reg_row + i * 64];
        const bool last = i == n - 1;
        const Zmm t(30 + i % 2);
        if (!raw16()) {
            const Zmm v = i < r ? Zmm(i) : t;
            if (i >= r) vmovaps(v, wide_slot(i));
            vmaxps(last ? v | k_tail_ : v, v, a);
            if (i >= r) vmovaps(wide_slot(i), v);
        } else if (fused) {
            vpmaxuw(last ? wide_umax(i) | k_tail_ : wide_umax(i), wide_umax(i), a);
            vpmaxsw(last ? Zmm(i) | k_tail_ : Zmm(i), Zmm(i), a);
        } else {
            wide_load16(t, a, last);
            vpmaxuw(wide_umax(i), wide_umax(i), t);
            vpmaxsw(Zmm(i), Zmm(i), t);
        }
    }
}

void vertical_reg_generator::wide_finish16(const Label &l_refuse) {
    const int n = wide_vectors();
    // A lane of negatives only needs the unsigned min, which these
    // registers have no room for: the caller takes this slice on.
    for (int i = 0; i < n; ++i) {
        vpmovw2m(k_ord_, Zmm(i));
        if (i == n - 1) kandd(k_ord_, k_ord_, k_tail_);
        kortestd(k_ord_, k_ord_);
        jnz(l_refuse, T_NEAR);
    }
    // The constants from memory: every register may hold a statistic.
    lea(rax, ptr[rip + l_consts16_]);
    for (int i = 0; i < n; ++i) {
        vpcmpuw(k_ord_, wide_umax(i), ptr[rax], 6);  // above -inf: a negative NaN
        vmovdqu16(Zmm(i) | k_ord_, ptr[rax + 64]);
        store16(ptr[reg_dst + i * 64], Zmm(i), i == n - 1);
    }
}

// 16-bit after a lane of negatives only, up to 14 vectors: the signed
// max in zmm0-13, the unsigned min (the answer where every row was
// negative) in the unsigned max's registers, the raw words' unsigned max
// on two chains (zmm28-29) for the negative NaNs, which the unsigned
// min passes over.
bool vertical_reg_generator::wide_negatives() const {
    return raw16() && wide_vectors() <= 14;
}

void vertical_reg_generator::wide_slice_negatives() {
    const int n = wide_vectors();
    Label l_fresh, l_rows;
    for (int k = 0; k < 2; ++k) vpxord(Zmm(28 + k), Zmm(28 + k), Zmm(28 + k));
    cmp(ARG(accumulate), 0);
    je(l_fresh, T_NEAR);
    for (int i = 0; i < n; ++i) {
        wide_load16(Zmm(i), ptr[reg_dst + i * 64], i == n - 1);
        vmovdqa32(wide_umax(i), Zmm(i));
        vpmaxuw(Zmm(28), Zmm(28), Zmm(i));
    }
    jmp(l_rows, T_NEAR);
    L(l_fresh);
    bcast16(Zmm(0), jit_generator::neg_inf16());
    for (int i = 0; i < n; ++i) {
        if (i > 0) vmovdqa32(Zmm(i), Zmm(0));
        vmovdqa32(wide_umax(i), Zmm(0));
    }
    L(l_rows);
    wide_rows([&] {
        for (int i = 0; i < n; ++i) {
            const Zmm t(30 + i % 2);
            wide_load16(t, ptr[reg_row + i * 64], i == n - 1);
            vpmaxsw(Zmm(i), Zmm(i), t);
            vpminuw(wide_umax(i), wide_umax(i), t);
            vpmaxuw(Zmm(28 + i % 2), Zmm(28 + i % 2), t);
        }
    });
}

void vertical_reg_generator::wide_finish_negatives(const Label &l_refuse) {
    const int n = wide_vectors();
    lea(rax, ptr[rip + l_consts16_]);
    vpmaxuw(Zmm(28), Zmm(28), Zmm(29));
    vpcmpuw(k_ord_, Zmm(28), ptr[rax], 6);  // above -inf: a negative NaN
    kortestd(k_ord_, k_ord_);
    jnz(l_refuse, T_NEAR);
    for (int i = 0; i < n; ++i) {
        vpmovw2m(k_ord_, Zmm(i));  // the lanes of negatives only
        vmovdqu16(Zmm(i) | k_ord_, wide_umax(i));
        store16(ptr[reg_dst + i * 64], Zmm(i), i == n - 1);
    }
}

void vertical_reg_generator::generate_wide() {
    const int n = wide_vectors(), r = wide_regs();
    const int lanes = raw16() ? 32 : 16;
    if (!raw16()) fp_env_enter();
    const int spill = (n - r) * 64;
    if (spill > 0) {
        push(rbp);
        mov(rbp, rsp);
        sub(rsp, spill);
        and_(rsp, -64);
    }
    mov(reg_rs, ARG(row_stride));
    mov(reg_src, ARG(src));
    mov(reg_dst, ARG(dst));
    mov(reg_outer, ARG(n_outer));
    mov(reg_rs3, ARG(ncols));
    sub(reg_rs3, (n - 1) * lanes);
    set_tail_mask(reg_rs3, lanes);
    Label l_refuse, l_exit, l_negatives;
    wide_slices([&] {
        wide_start();
        wide_rows([&] { wide_row(); });
        if (raw16()) {
            wide_finish16(wide_negatives() ? l_negatives : l_refuse);
            return;
        }
        // A NaN met: plain maxes lose it, and the caller redoes the slice.
        test_invalid_flag();
        jnz(l_refuse, T_NEAR);
        for (int i = 0; i < n; ++i) {
            const Address a = ptr[reg_dst + i * 64];
            const Zmm v = i < r ? Zmm(i) : Zmm(30);
            if (i >= r) vmovaps(v, wide_slot(i));
            if (i < n - 1) vmovups(a, v);
            else vmovups(a | k_tail_, v);
        }
    });
    Label l_all;
    L(l_all);
    xor_(eax, eax);
    jmp(l_exit, T_NEAR);
    if (wide_negatives()) {
        // From the slice that had a lane of negatives only, to the call's
        // end.
        L(l_negatives);
        wide_slices([&] {
            wide_slice_negatives();
            wide_finish_negatives(l_refuse);
        });
        jmp(l_all, T_NEAR);
    }
    L(l_refuse);
    mov(rax, reg_outer);  // the slices left, this one first
    L(l_exit);
    if (spill > 0) {
        mov(rsp, rbp);
        pop(rbp);
    }
    vzeroupper();
    if (!raw16()) fp_env_leave();
    ret();
    if (raw16()) {
        align(64);
        L(l_consts16_);
        for (int i = 0; i < 32; ++i) dw(jit_generator::neg_inf16());
        for (int i = 0; i < 32; ++i) dw(quiet_nan());
    }
}

#undef ARG

} // namespace crest::impl::jit
