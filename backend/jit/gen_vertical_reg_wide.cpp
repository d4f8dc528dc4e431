// `vert_reg` on AVX-512 with more than 16 vectors of columns
// (gen_vertical_reg.hpp, wide()): every column of a slice in registers
// while its rows stream past in memory order.
#include <cstddef>

#include "backend/jit/gen_vertical_reg.hpp"
#include "backend/jit/generators.hpp"

namespace crest::impl::jit {

using namespace Xbyak;

#define ARG(field) qword[reg_args + offsetof(vert_call, field)]

bool vertical_reg_generator::wide() const {
    return wide_columns(cfg_);
}

Xmm vertical_reg_generator::wide_umax(int i) const {
    return Zmm(npv() + i);  // past the signed maxes
}

void vertical_reg_generator::wide_slice16() {
    const int n = npv();
    // 16 vectors leave no load register: both statistics read the row
    // from memory, the last vector's lanes past the columns untouched.
    const bool fused = 2 * n > 30;
    Label l_fresh, l_rows, l_row, l_done;
    cmp(ARG(accumulate), 0);
    je(l_fresh, T_NEAR);
    for (int i = 0; i < n; ++i) {
        const Address a = ptr[reg_dst + i * vbytes()];
        if (i < n - 1) vmovdqu32(Zmm(i), a);
        else vmovdqu16(Zmm(i) | k_tail_ | T_z, a);
        vmovdqa32(wide_umax(i), Zmm(i));
    }
    jmp(l_rows, T_NEAR);
    L(l_fresh);
    bcast16(Zmm(0), jit_generator::neg_inf16());
    for (int i = 0; i < n; ++i) {
        if (i > 0) vmovdqa32(Zmm(i), Zmm(0));
        vpxord(wide_umax(i), wide_umax(i), wide_umax(i));
    }
    L(l_rows);
    mov(reg_row, reg_src);
    mov(reg_rows, ARG(rows));
    L(l_row);
    {
        test(reg_rows, reg_rows);
        jz(l_done, T_NEAR);
        for (int i = 0; i < n; ++i) {
            const Address a = ptr[reg_row + i * vbytes()];
            const bool last = i == n - 1;
            if (fused) {
                vpmaxuw(last ? wide_umax(i) | k_tail_ : wide_umax(i), wide_umax(i), a);
                vpmaxsw(last ? Zmm(i) | k_tail_ : Zmm(i), Zmm(i), a);
                continue;
            }
            const Zmm t(30 + i % 2);
            // The last vector's lanes past the columns read as zeros,
            // never stored.
            if (!last) vmovdqu32(t, a);
            else vmovdqu16(t | k_tail_ | T_z, a);
            vpmaxuw(wide_umax(i), wide_umax(i), t);
            vpmaxsw(Zmm(i), Zmm(i), t);
        }
        add(reg_row, reg_rs);
        dec(reg_rows);
        jmp(l_row, T_NEAR);
    }
    L(l_done);
}

void vertical_reg_generator::generate_wide() {
    const int n = raw16() ? npv() : nv();
    const int lanes = raw16() ? 32 : 16;
    if (!raw16()) fp_env_enter();
    mov(reg_rs, ARG(row_stride));
    mov(reg_src, ARG(src));
    mov(reg_dst, ARG(dst));
    mov(reg_outer, ARG(n_outer));
    mov(reg_rs3, ARG(ncols));
    sub(reg_rs3, (n - 1) * lanes);
    set_tail_mask(reg_rs3, lanes);
    Label l_outer, l_refuse, l_exit;
    L(l_outer);
    if (raw16()) {
        wide_slice16();
        // A lane of negatives only needs the unsigned min, which these
        // registers have no room for: the caller takes this slice on.
        for (int i = 0; i < n; ++i) {
            vpmovw2m(k_ord_, Zmm(i));
            if (i == n - 1) kandd(k_ord_, k_ord_, k_tail_);
            kortestd(k_ord_, k_ord_);
            jnz(l_refuse, T_NEAR);
        }
        // Every register holds a statistic: the constants from memory.
        lea(rax, ptr[rip + l_consts16_]);
        for (int i = 0; i < n; ++i) {
            vpcmpuw(k_ord_, wide_umax(i), ptr[rax], 6);  // above -inf: a negative NaN
            vmovdqu16(Zmm(i) | k_ord_, ptr[rax + 64]);
            const Address a = ptr[reg_dst + i * vbytes()];
            if (i < n - 1) vmovdqu32(a, Zmm(i));
            else vmovdqu16(a | k_tail_, Zmm(i));
        }
    } else {
        Label l_fresh, l_rows, l_row, l_done;
        cmp(ARG(accumulate), 0);
        je(l_fresh, T_NEAR);
        // A NaN in dst raises the flag at the first row's max.
        for (int i = 0; i < n; ++i) {
            const Address a = ptr[reg_dst + i * 64];
            if (i < n - 1) vmovups(Zmm(i), a);
            else vmovups(Zmm(i) | k_tail_ | T_z, a);
        }
        jmp(l_rows, T_NEAR);
        L(l_fresh);
        bcast_neg_inf(Zmm(0));
        for (int i = 1; i < n; ++i) vmovaps(Zmm(i), Zmm(0));
        L(l_rows);
        mov(reg_row, reg_src);
        mov(reg_rows, ARG(rows));
        L(l_row);
        {
            test(reg_rows, reg_rows);
            jz(l_done, T_NEAR);
            if (cfg_.prefetch)
                for (int off = 0; off < n * 64; off += 64) prefetcht0(ptr[reg_row + off + 4096]);
            for (int i = 0; i < n; ++i) {
                const Address a = ptr[reg_row + i * 64];
                if (i < n - 1) vmaxps(Zmm(i), Zmm(i), a);
                else vmaxps(Zmm(i) | k_tail_, Zmm(i), a);
            }
            add(reg_row, reg_rs);
            dec(reg_rows);
            jmp(l_row, T_NEAR);
        }
        L(l_done);
        // A NaN met: plain maxes lose it, and the caller redoes the slice.
        test_invalid_flag();
        jnz(l_refuse, T_NEAR);
        for (int i = 0; i < n; ++i) {
            const Address a = ptr[reg_dst + i * 64];
            if (i < n - 1) vmovups(a, Zmm(i));
            else vmovups(a | k_tail_, Zmm(i));
        }
    }
    add(reg_src, ARG(outer_src_stride));
    add(reg_dst, ARG(outer_dst_stride));
    dec(reg_outer);
    jnz(l_outer, T_NEAR);
    xor_(eax, eax);
    jmp(l_exit, T_NEAR);
    L(l_refuse);
    mov(rax, reg_outer);  // the slices left, this one first
    L(l_exit);
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
