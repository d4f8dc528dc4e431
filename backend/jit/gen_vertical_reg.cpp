// `vert_reg` family (gen_vertical_reg.hpp).
#include "backend/jit/gen_vertical_reg.hpp"

#include <cstddef>

#include "backend/jit/generators.hpp"

namespace crest::impl::jit {

using namespace Xbyak;

#define ARG(field) qword[reg_args + offsetof(vert_call, field)]

Address vertical_reg_generator::row(int set, int i) const {
    const int off = i * (raw16() ? vbytes() : vlen() * ssz());
    switch (set) {
        case 0: return ptr[reg_row + off];
        case 1: return ptr[reg_row + reg_rs + off];
        case 2: return ptr[reg_row + reg_rs * 2 + off];
        default: return ptr[reg_row + reg_rs3 + off];
    }
}

void vertical_reg_generator::one_row(int set) {
    for (int i = 0; i < nv(); ++i) {
        ld(i, x(i), row(set, i), cfg_.src_dt);
        nanmax(acc(i, set), x(i), tmp(i));
    }
}

void vertical_reg_generator::enter(const Label &l_end, int full_cols, int lanes) {
    mov(reg_rs, ARG(row_stride));
    mov(reg_src, ARG(src));
    mov(reg_dst, ARG(dst));
    mov(reg_outer, ARG(n_outer));
    Label l_general;
    if (folds()) fold_entry(l_general, l_end);
    if (fixed()) {
        fixed_entry(l_general);
        jmp(l_end, T_NEAR);
    }
    L(l_general);
    if (is512()) {
        mov(reg_rs3, ARG(ncols));
        sub(reg_rs3, full_cols);
        set_tail_mask(reg_rs3, lanes);
    } else if (avx2_masks() && cfg_.partial_last) {
        // Lanes [0, tail) of the mask from a row of 8 ones and 8 zeros.
        mov(reg_rs3, full_cols + 8);
        sub(reg_rs3, ARG(ncols));
        lea(rax, ptr[rip + l_avx2_mask_]);
        vmovups(avx2_mask(), ptr[rax + reg_rs3 * 4]);
    }
    lea(reg_rs3, ptr[reg_rs + reg_rs * 2]);
}

void vertical_reg_generator::avx2_mask_table() {
    if (!avx2_masks()) return;
    align(32);
    L(l_avx2_mask_);
    for (int i = 0; i < 16; ++i) dd(i < 8 ? 0xffffffffu : 0u);
}

void vertical_reg_generator::generate() {
    if (wide()) return generate_wide();
    if (raw16()) return generate_keys();
    fp_env_enter();
    Label l_end;
    enter(l_end, (nv() - 1) * vlen(), 16);
    Label l_outer;
    L(l_outer);
    {
        Label l_store;
        rows_flagged();
        jz(l_store, T_NEAR);  // no NaN anywhere in the slice
        rows_exact();
        clear_fp_flags();  // for the next slice's test
        L(l_store);
        for (int i = 0; i < nv(); ++i) {
            const Address a = ptr[reg_dst + i * vlen() * dsz()];
            if (!masked(i)) store(a, acc(i), cfg_.dst_dt, x(0));
            else if (is512()) store_tail(a, acc(i), cfg_.dst_dt, x(0));
            else vmaskmovps(a, avx2_mask(), acc(i));  // f32
        }
        add(reg_src, ARG(outer_src_stride));
        add(reg_dst, ARG(outer_dst_stride));
        dec(reg_outer);
        jnz(l_outer, T_NEAR);
    }
    L(l_end);
    status_exit();
    vzeroupper();
    fp_env_leave();
    ret();
    avx2_mask_table();
}

void vertical_reg_generator::rows(const std::function<void(int, bool)> &take,
        const std::function<void(const Xmm &, const Xmm &)> &join,
        const std::function<void(const Xmm &)> &from_dst) {
    const int ns = sets();
    Label l_fresh, l_rows;
    cmp(ARG(accumulate), 0);
    je(l_fresh, T_NEAR);
    for (int i = 0; i < nv(); ++i) {
        ld(i, acc(i), ptr[reg_dst + i * vlen() * dsz()], cfg_.dst_dt);
        from_dst(acc(i));
    }
    jmp(l_rows, T_NEAR);
    L(l_fresh);
    bcast_neg_inf(acc(0));
    for (int i = 1; i < nv(); ++i) vmovaps(acc(i), acc(0));
    L(l_rows);
    // Sets past the first start at -inf (no effect on the max).
    if (ns > 1) bcast_neg_inf(acc(0, 1));
    for (int k = nv() + 1; k < ns * nv(); ++k) vmovaps(vmm(k), acc(0, 1));
    mov(reg_row, reg_src);
    mov(reg_rows, ARG(rows));
    Label l_group, l_single, l_done;
    L(l_group);
    {
        cmp(reg_rows, ns);
        jl(l_single, T_NEAR);
        for (int set = 0; set < ns; ++set) take(set, ns > 1);
        lea(reg_row, ptr[reg_row + reg_rs * ns]);
        sub(reg_rows, ns);
        jmp(l_group, T_NEAR);
    }
    L(l_single);
    {
        test(reg_rows, reg_rows);
        jz(l_done, T_NEAR);
        take(0, false);
        add(reg_row, reg_rs);
        dec(reg_rows);
        jmp(l_single, T_NEAR);
    }
    L(l_done);
    for (int w = 1; w < ns; w *= 2)
        for (int set = 0; set + w < ns; set += 2 * w)
            for (int i = 0; i < nv(); ++i) join(acc(i, set), acc(i, set + w));
}

void vertical_reg_generator::rows_exact() {
    rows([&](int set, bool) { one_row(set); },
            [&](const Xmm &a, const Xmm &b) { nanmax(a, b, tmp(0)); },
            [](const Xmm &) {});
}

void vertical_reg_generator::rows_flagged() {
    rows([&](int set, bool) {
                for (int i = 0; i < nv(); ++i) {
                    const Xmm a = acc(i, set);
                    if (!masked(i)) {
                        vmaxps(a, a, row(set, i));
                    } else if (is512()) {
                        vmaxps(a | k_tail_, a, row(set, i));
                    } else {
                        vmaskmovps(x(i), avx2_mask(), row(set, i));
                        vmaxps(a, a, x(i));  // lanes past the columns: junk, not stored
                    }
                }
            },
            [&](const Xmm &a, const Xmm &b) { vmaxps(a, a, b); },
            [](const Xmm &) {});
    test_invalid_flag();
}

void vertical_reg_generator::ld16(int i, const Xmm &v, const Address &a, bool exact) {
    if (!is512()) {
        if (exact && partial16() && pmasked(i))
            load_bytes(v, a.getRegExp(), tail_bytes16(), Xmm(15));
        else vmovdqu(v, a);
    } else if (!pmasked(i)) {
        vmovdqu32(v, a);
    } else {
        vmovdqa32(v, c_neg_inf());
        vmovdqu16(v | k_tail_, a);
    }
}

void vertical_reg_generator::store16(const Address &a, const Xmm &x, bool masked) {
    if (!is512() && masked && partial16()) store_bytes(a.getRegExp(), x, tail_bytes16(), Xmm(15));
    else if (!is512()) vmovdqu(a, x);
    else if (masked) vmovdqu16(a | k_tail_, x);
    else vmovdqu32(a, x);
}

void vertical_reg_generator::select_store16(int i) {
    select16(smax(i), umin(i), umax(i), sized(i, 15));
    store16(ptr[reg_dst + i * vbytes()], smax(i), pmasked(i));
}

void vertical_reg_generator::generate_keys() {
    bcast16_constants();
    Label l_whole, l_end;
    enter(l_end, (npv() - 1) * 32, 32);
    tail_ = true;
    if (partial16()) {
        // The column count is the config's (plan_kernels.cpp).
        outer_loop_keys();
        jmp(l_end, T_NEAR);
    }
    mov(rax, ARG(ncols));
    test(eax, vlen16() - 1);
    jz(l_whole, T_NEAR);
    outer_loop_keys();
    jmp(l_end, T_NEAR);
    L(l_whole);
    tail_ = false;
    outer_loop_keys();
    L(l_end);
    status_exit();
    vzeroupper();
    ret();
}

void vertical_reg_generator::slice_keys(bool with_umin) {
    Label l_fresh, l_rows;
    cmp(ARG(accumulate), 0);
    je(l_fresh, T_NEAR);
    for (int i = 0; i < npv(); ++i) {
        ld16(i, smax(i), ptr[reg_dst + i * vbytes()], true);
        copy16(umax(i), smax(i));
        if (with_umin) copy16(umin(i), smax(i));
    }
    jmp(l_rows, T_NEAR);
    L(l_fresh);
    // -inf's bits: below every value but negative NaNs in the signed
    // max's order, above them in the unsigned min's.
    for (int i = 0; i < npv(); ++i) {
        copy16(smax(i), neg_inf16(i));
        if (with_umin) copy16(umin(i), neg_inf16(i));
        zero16(umax(i));
    }
    L(l_rows);
    mov(reg_row, reg_src);
    mov(reg_rows, ARG(rows));
    // AVX2 partial16(): every row but the last reads its last vector
    // whole, into the next row; the last one after the loop.
    if (partial16()) dec(reg_rows);
    // Rows four at a time, then one at a time: the loop's own add, dec
    // and jump were a quarter of a row's instructions at 2 vectors
    // (64x64x64x64 f16 axes 0,2).
    auto take_row = [&](int k, bool exact = false) {
        for (int i = 0; i < npv(); ++i) {
            if (cfg_.fused16 && is512() && !with_umin && !pmasked(i)) {
                // Checked slices from half the L3 on (plan_prefetch.cpp):
                // both statistics read the row from memory, no load.
                vpmaxuw(umax(i), umax(i), row(k, i));
                vpmaxsw(smax(i), smax(i), row(k, i));
                continue;
            }
            const Xmm x = sized(i, is512() ? row_temp(k) : px(i).getIdx());
            ld16(i, x, row(k, i), exact);
            vpmaxuw(umax(i), umax(i), x);
            if (with_umin) vpminuw(umin(i), umin(i), x);
            vpmaxsw(smax(i), smax(i), x);
        }
    };
    Label l_quad, l_single, l_done;
    L(l_quad);
    {
        cmp(reg_rows, 4);
        jl(l_single, T_NEAR);
        for (int k = 0; k < 4; ++k) take_row(k);
        lea(reg_row, ptr[reg_row + reg_rs * 4]);
        sub(reg_rows, 4);
        jmp(l_quad, T_NEAR);
    }
    L(l_single);
    {
        test(reg_rows, reg_rows);
        jz(l_done, T_NEAR);
        take_row(0);
        add(reg_row, reg_rs);
        dec(reg_rows);
        jmp(l_single, T_NEAR);
    }
    L(l_done);
    if (partial16()) take_row(0, true);
}

void vertical_reg_generator::outer_loop_keys() {
    // eax: 0 while the slices go checked (AVX-512), then 1 for the rest
    // of the call.
    const bool checked = is512();
    if (checked) xor_(eax, eax);
    Label l_outer;
    L(l_outer);
    {
        Label l_exact, l_next;
        if (checked) {
            Label l_redo;
            test(eax, eax);
            jnz(l_exact, T_NEAR);
            slice_keys(false);
            // A lane of negatives only (its signed max negative) needs the
            // unsigned min: this slice again, and the rest of the call,
            // with all three statistics.
            for (int i = 0; i < npv(); ++i) {
                vpmovw2m(k_ord_, smax(i));
                if (pmasked(i)) kandd(k_ord_, k_ord_, k_tail_);
                kortestd(k_ord_, k_ord_);
                jnz(l_redo, T_NEAR);
            }
            for (int i = 0; i < npv(); ++i) {
                negative_nan_lanes(k_ord_, umax(i));
                vmovdqu16(smax(i) | k_ord_, c_qnan());
                store16(ptr[reg_dst + i * vbytes()], smax(i), pmasked(i));
            }
            jmp(l_next, T_NEAR);
            L(l_redo);
            mov(eax, 1);
        }
        L(l_exact);
        slice_keys(true);
        for (int i = 0; i < npv(); ++i) select_store16(i);
        L(l_next);
        add(reg_src, ARG(outer_src_stride));
        add(reg_dst, ARG(outer_dst_stride));
        dec(reg_outer);
        jnz(l_outer, T_NEAR);
    }
}

#undef ARG

jit_fn generate_vertical_reg(const kernel_config &cfg, code_buffer &buf) {
    return generate_with<vertical_reg_generator>(cfg, buf);
}

} // namespace crest::impl::jit
