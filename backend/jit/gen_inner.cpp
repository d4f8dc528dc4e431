// The `inner` family (gen_inner.hpp): the kernel, the loop over outputs
// and the walk along each output's rows.
#include "backend/jit/gen_inner.hpp"

#include <cstddef>

#include "backend/jit/generators.hpp"

namespace crest::impl::jit {

using namespace Xbyak;

#define ARG(field) qword[reg_args + offsetof(inner_call, field)]

void inner_generator::generate() {
    // Every inner kernel: the blocks from the caches find NaN by the
    // invalid flag, and the others' maxes would raise it in the
    // caller's environment (and trap where it unmasked it).
    fp_env_enter();
    mov(reg_src, ARG(src));
    mov(reg_dst, ARG(dst));
    mov(reg_nout, ARG(n_out));
    Label l_done;
    // AVX2 has no masked tail: blocks for rows of a vector or more (a
    // partial last vector overlapping the one before), tiny rows below
    // (plan_kernels.cpp).
    const bool with_blocks = cfg_.block_n > 0 && (is512() || cfg_.block_n >= vlen());
    if (tiny_rows_fit()) tiny_rows();
    if (with_blocks) blocks();
    // The per-output loop's constants, once the blocks (which take
    // every vector register) are done.
    bcast_neg_inf(neg_inf());
    if (raw16()) {
        bcast16(abs_mask(), 0x7fff);
        bcast16(neg_inf16v(), neg_inf16());
    }
    if (with_blocks || tiny_rows_fit()) {  // the loop below takes at least one output
        test(reg_nout, reg_nout);
        jz(l_done, T_NEAR);
    }
    // f32 outputs find NaN by the invalid flag, which the paths above may
    // have left raised.
    if (!raw16()) clear_fp_flags();
    if (raw16()) {
        // Outputs of up to two_pass_max_elems elements each take the
        // two-pass loop; larger ones would read memory twice when all
        // negative, and keep all three statistics in one pass.
        Label l_one_pass;
        mov(rax, ARG(rows));
        imul(rax, ARG(n));
        cmp(rax, two_pass_max_elems);
        jg(l_one_pass, T_NEAR);
        outputs(raw_pass::maxes, &l_one_pass);
        jmp(l_done, T_NEAR);
        outputs(raw_pass::all, nullptr, &l_one_pass);
    } else {
        outputs();
    }
    L(l_done);
    vzeroupper();
    fp_env_leave();
    ret();
}

void inner_generator::outputs(raw_pass pass, Label *all_loop, Label *head) {
    Label l_out_own;
    Label &l_out = head ? *head : l_out_own;
    L(l_out);
    // -inf's raw bits start both raw16() extrema: below every value
    // but negative NaNs in the signed max's order, above every value
    // but negative NaNs in the unsigned min's.
    for (int i = 0; i < nacc(); ++i) vmovaps(acc(i), raw16() ? neg_inf16v() : neg_inf());
    if (raw16()) {
        if (pass == raw_pass::all) reset_minraw();
        zero16(absmax());
    }
    rows_loop([&] {
        if (raw16()) row_body_raw(pass);
        else row_body_f32();
    });
    // Fold, store, next output; `next` the loop to go on with.
    auto finish = [&](Label &next) {
        fold_and_store_flagged(pass != raw_pass::maxes);
        add(reg_src, ARG(out_src_stride));
        add(reg_dst, ARG(out_dst_stride));
        dec(reg_nout);
        jnz(next, T_NEAR);
    };
    Label l_end;
    if (raw16() && pass == raw_pass::maxes) {
        Label l_keys;
        max_tree();
        if (is512()) {
            vpmovw2m(k_ord_, acc(0));
            kortestd(k_ord_, k_ord_);  // CF: every lane's sign set
            jnc(l_keys, T_NEAR);
        } else {
            vpmovmskb(eax, acc(0));  // odd bits: the lanes' signs
            and_(eax, 0xaaaaaaaa);
            cmp(eax, 0xaaaaaaaa);
            jne(l_keys, T_NEAR);
        }
        reset_minraw();
        rows_loop([&] { row_body_raw(raw_pass::mins); });
        min_tree();
        copy16(acc(0), minraw(0));
        to_key16(acc(0), minraw(1), abs_mask());
        finish(all_loop ? *all_loop : l_out);
        jmp(l_end, T_NEAR);
        L(l_keys);
        to_key16(acc(0), minraw(1), abs_mask());
    }
    finish(l_out);
    L(l_end);
}

void inner_generator::rows_loop(const std::function<void()> &row_body) {
    mov(reg_row, reg_src);
    mov(reg_rows, ARG(rows));
    Label l_row;
    L(l_row);
    row_body();
    add(reg_row, ARG(row_stride));
    dec(reg_rows);
    jnz(l_row, T_NEAR);
}

void inner_generator::walk_row(int elems, int loads,
        const std::function<void(int, const Address &)> &load_u,
        const std::function<void(int)> &take, const std::function<void()> &tail) {
    const int bytes = elems * ssz();
    mov(reg_ptr, reg_row);
    mov(reg_left, ARG(n));
    Label l_main, l_one, l_tail, l_done;
    L(l_main);
    {
        cmp(reg_left, loads * elems);
        jl(l_one, T_NEAR);
        // cfg_.prefetch (src past the L3's size): each line
        // prefetch_ahead_bytes ahead into L2. AMD Zen 4, % of the
        // roofline (2 KiB ahead then): f32 64x256x56x56 axes
        // 2,3 (196 MiB) 103 -> 108%, 4096x4096 axis 3 (64 MiB) 102 ->
        // 105%; from the L3 it cost 96 -> 79% (3 MiB).
        if (cfg_.prefetch && cfg_.block_n == 0)
            for (int u = 0; u < loads * bytes; u += 64)
                prefetcht1(ptr[reg_ptr + u + prefetch_ahead_bytes]);
        for (int u = 0; u < loads; ++u) load_u(u, ptr[reg_ptr + u * bytes]);
        for (int u = 0; u < loads; ++u) take(u);
        add(reg_ptr, loads * bytes);
        sub(reg_left, loads * elems);
        jmp(l_main, T_NEAR);
    }
    L(l_one);
    {
        cmp(reg_left, elems);
        jl(l_tail, T_NEAR);
        load_u(0, ptr[reg_ptr]);
        take(0);
        add(reg_ptr, bytes);
        sub(reg_left, elems);
        jmp(l_one, T_NEAR);
    }
    L(l_tail);
    test(reg_left, reg_left);
    jz(l_done, T_NEAR);
    if (!is512()) {
        // AVX2 (no masked 16-bit loads; its tails go element by element):
        // a row of at least a vector takes its last vector instead,
        // overlapping elements already taken (a max is idempotent).
        // Capped to AVX2 on Zen 4, % of the roofline, channels-last f32
        // rows of 12 (256x12x28x28 reducing C, 9.6 MB) 7-13 -> 11-21, of
        // 20 10-12 -> 16-18; bf16 rows of 20 gained nothing (the
        // per-output fold is their cost: blocks of 8 outputs, as whole
        // vectors get, would be the fix).
        Label l_short;
        cmp(ARG(n), elems);
        jl(l_short, T_NEAR);
        lea(reg_ptr, ptr[reg_ptr + reg_left * ssz() - bytes]);
        load_u(0, ptr[reg_ptr]);
        take(0);
        jmp(l_done, T_NEAR);
        L(l_short);
    }
    tail();
    L(l_done);
}

void inner_generator::take_raw(raw_pass pass, int u, const Xmm &x) {
    if (pass != raw_pass::mins) {
        vpmaxuw(absmax(), absmax(), x);
        vpmaxsw(acc(u), acc(u), x);
    }
    if (pass != raw_pass::maxes) vpminuw(minraw(u), minraw(u), x);
}

void inner_generator::row_body_raw(raw_pass pass) {
    if (!is512()) {
        // AVX2: the tail one element at a time, broadcast to every lane.
        walk_row(vlen16(), nacc(),
                [&](int u, const Address &a) { vmovdqu(x(u), a); },
                [&](int u) { take_raw(pass, u, x(u)); },
                [&] {
                    Label l_scalar;
                    L(l_scalar);
                    vpbroadcastw(x(0), word[reg_ptr]);
                    take_raw(pass, 0, x(0));
                    add(reg_ptr, 2);
                    dec(reg_left);
                    jnz(l_scalar, T_NEAR);
                });
        return;
    }
    // kernel_config::fused16: the checked pass's two statistics read each
    // vector from memory, no load (plan_prefetch.cpp, fused_rows16).
    const bool fused = cfg_.fused16 && pass == raw_pass::maxes;
    walk_row(vlen16(), nacc(),
            [&](int u, const Address &a) {
                if (!fused) return vmovdqu32(x(u), a);
                vpmaxuw(absmax(), absmax(), a);
                vpmaxsw(acc(u), acc(u), a);
            },
            [&](int u) {
                if (!fused) take_raw(pass, u, x(u));
            },
            [&] {
                // Lanes past the row keep -inf: harmless to the max, not NaN.
                set_tail_mask(reg_left, 32);
                vmovdqa32(x(0), neg_inf16v());
                vmovdqu16(x(0) | k_tail_, ptr[reg_ptr]);
                take_raw(pass, 0, x(0));
            });
}

void inner_generator::row_body_f32() {
    walk_row(vlen(), nacc(),
            [&](int u, const Address &a) { vmaxps(acc(u), acc(u), a); },
            [&](int) {},
            [&] {
                if (is512()) {
                    // Lanes past the row stay zero and out of the max (merge mask).
                    set_tail_mask(reg_left);
                    vmovups(x(0) | k_tail_ | T_z, ptr[reg_ptr]);
                    vmaxps(acc(1) | k_tail_, acc(1), x(0));
                    return;
                }
                // AVX2, rows of under a vector: an element at a time,
                // broadcast to every lane.
                Label l_scalar;
                L(l_scalar);
                vbroadcastss(x(0), dword[reg_ptr]);
                vmaxps(acc(0), acc(0), x(0));
                add(reg_ptr, 4);
                dec(reg_left);
                jnz(l_scalar, T_NEAR);
            });
}
#undef ARG

jit_fn generate_inner(const kernel_config &cfg, code_buffer &buf) {
    return generate_with<inner_generator>(cfg, buf);
}

} // namespace crest::impl::jit
