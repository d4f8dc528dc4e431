// `vert_reg` family (see the class comment).
#include "backend/jit/generators.hpp"
#include "backend/jit/jit_generator.hpp"

#include <cstddef>
#include <functional>

namespace crest::impl::jit {

using namespace Xbyak;

namespace {

#define ARG(field) qword[reg_args + offsetof(vert_call, field)]

// Few columns (at most 16 vectors): the whole column block lives in
// registers while every row streams past, so no dst round trip per row.
// ncols must be in ((unroll - 1) * vlen, unroll * vlen]; AVX2 also needs a
// whole number of 8-lane vectors (no masked loads there).
class vertical_reg_generator : public jit_generator {
public:
    using jit_generator::jit_generator;

private:
    const Reg64 reg_args = rdi;
    const Reg64 reg_src = rsi;
    const Reg64 reg_dst = rdx;
    const Reg64 reg_outer = rcx;
    const Reg64 reg_row = r8;
    const Reg64 reg_rows = r9;
    const Reg64 reg_rs = r10;
    const Reg64 reg_rs3 = r11;   // 3 * row stride (first the tail count)

    int nv() const { return cfg_.unroll; }
    // Accumulator sets: consecutive rows go to different sets, so that the
    // max chain of one set (in the exact path a compare into a mask, then a
    // masked max) overlaps the next row's. On AVX-512 up to 4 sets fit in
    // zmm0-15.
    int sets() const {
        if (!is512()) return 1;
        int s = 1;
        while (s < 4 && 2 * s * nv() <= 16) s *= 2;
        return s;
    }
    Xmm acc(int i, int set = 0) const { return vmm(set * nv() + i); }
    Xmm x(int i) const { return is512() ? vmm(16 + i) : vmm(8 + i % 4); }
    Xmm tmp(int i) const { return is512() ? vmm(16 + i) : vmm(12 + i % 4); }
    bool masked(int i) const { return is512() && i == nv() - 1; }

    void ld(int i, const Xmm &v, const Address &a, data_type dt) {
        if (masked(i)) load_tail(v, a, dt);
        else load(v, a, dt);
    }

    // Row `set` past reg_row (reg_rs3 holds 3 * row stride).
    Address row(int set, int i) const {
        const int off = i * vlen() * ssz();
        switch (set) {
            case 0: return ptr[reg_row + off];
            case 1: return ptr[reg_row + reg_rs + off];
            case 2: return ptr[reg_row + reg_rs * 2 + off];
            default: return ptr[reg_row + reg_rs3 + off];
        }
    }

    void one_row(int set) {
        for (int i = 0; i < nv(); ++i) {
            ld(i, x(i), row(set, i), cfg_.src_dt);
            nanmax(acc(i, set), x(i), tmp(i));
        }
    }

    void generate() override {
        if (raw16()) return generate_keys();
        fp_env_enter();
        mov(reg_rs, ARG(row_stride));
        mov(reg_src, ARG(src));
        mov(reg_dst, ARG(dst));
        mov(reg_outer, ARG(n_outer));
        if (is512()) {
            mov(reg_rs3, ARG(ncols));
            sub(reg_rs3, (nv() - 1) * vlen());
            set_tail_mask(reg_rs3);
        }
        lea(reg_rs3, ptr[reg_rs + reg_rs * 2]);
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
                if (masked(i)) store_tail(a, acc(i), cfg_.dst_dt, x(0));
                else store(a, acc(i), cfg_.dst_dt, x(0));
            }
            add(reg_src, ARG(outer_src_stride));
            add(reg_dst, ARG(outer_dst_stride));
            dec(reg_outer);
            jnz(l_outer, T_NEAR);
        }
        vzeroupper();
        fp_env_leave();
        ret();
    }

    // Every row of the outer slice at reg_src (rows at the row stride) into
    // the sets, starting from dst when accumulating, else from -inf; then
    // `take(set, grouped)` for each row (grouped: one of a group of sets()
    // rows, taken in set order) and `join(a, b)` to merge the sets into
    // set 0.
    void rows(const std::function<void(int, bool)> &take,
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

    // The NaN-aware max throughout.
    void rows_exact() {
        rows([&](int set, bool) { one_row(set); },
                [&](const Xmm &a, const Xmm &b) { nanmax(a, b, tmp(0)); },
                [](const Xmm &) {});
    }

    // The rows straight from memory into plain maxes (AVX-512: the last
    // vector's under the tail mask, junk lanes neither read nor NaN); a
    // NaN read, or in dst when accumulating (set 0 starts from dst, an
    // operand of the first row's max), raises the invalid flag
    // (jit_generator::fp_env_enter), tested once per slice: ZF clear (jnz
    // taken) when it fired, and the slice is then redone exactly. The
    // masked compares this replaced (one per two rows' vectors, as the
    // tiles had) held channels-last 32x64x56x56 axes 2,3 on Zen 4 at
    // 85-88% of the roofline, 99% without (from memory, 196 MiB, they
    // were 2-3 points ahead: 102% against 99-100%). AVX2 (whole vectors
    // only, plan_kernels.cpp) had the NaN-aware max itself.
    void rows_flagged() {
        rows([&](int set, bool) {
                    for (int i = 0; i < nv(); ++i) {
                        const Xmm a = acc(i, set);
                        if (masked(i)) vmaxps(a | k_tail_, a, row(set, i));
                        else vmaxps(a, a, row(set, i));
                    }
                },
                [&](const Xmm &a, const Xmm &b) { vmaxps(a, a, b); },
                [](const Xmm &) {});
        test_invalid_flag();
    }

    // --- bf16/f16 (jit_generator::raw16()): raw 16-bit bits ---
    // Each vector of columns (AVX-512: 32, AVX2: 16) keeps the signed max,
    // the unsigned min and the unsigned max of its raw bits, as the tiles
    // do (design.md): 3 ops per row, no compare into a mask, which was the
    // bottleneck of the widening path, and no key conversions.
    int npv() const { return (cfg_.unroll + 1) / 2; }  // unroll counts f32 vectors
    int vbytes() const { return 2 * vlen16(); }
    // Vector i's register idx: on AVX2 a last vector of 8 columns (tail_)
    // is an xmm.
    Xmm sized(int i, int idx) const {
        if (!is512() && pmasked(i)) return Xmm(idx);
        return vmm(idx);
    }
    Xmm smax(int i) const { return sized(i, i); }
    Xmm umax(int i) const { return sized(i, is512() ? 8 + i : 4 + i); }
    Xmm umin(int i) const { return sized(i, is512() ? 16 + i : 8 + i); }
    Xmm px(int i) const { return sized(i, is512() ? 29 : 14); }
    Xmm neg_inf16(int i) const { return sized(i, c_neg_inf().getIdx()); }
    // The last vector takes a 16-bit masked load (AVX2: a half-width one)
    // only when the columns end inside it: such a load costs several times
    // a plain one here, so a column count that fills its vectors runs a
    // copy of the loop without.
    bool tail_ = true;
    bool pmasked(int i) const { return tail_ && i == npv() - 1; }

    void ld16(int i, const Xmm &v, const Address &a) {
        if (!is512()) {
            vmovdqu(v, a);
        } else if (!pmasked(i)) {
            vmovdqu32(v, a);
        } else {
            vmovdqa32(v, c_neg_inf());
            vmovdqu16(v | k_tail_, a);
        }
    }

    // Vector i's answer (select16) into smax(i), stored.
    void select_store16(int i) {
        const Address a = ptr[reg_dst + i * vbytes()];
        select16(smax(i), umin(i), umax(i), sized(i, 15));
        if (!is512()) vmovdqu(a, smax(i));
        else if (pmasked(i)) vmovdqu16(a | k_tail_, smax(i));
        else vmovdqu32(a, smax(i));
    }

    void generate_keys() {
        mov(reg_rs, ARG(row_stride));
        mov(reg_src, ARG(src));
        mov(reg_dst, ARG(dst));
        mov(reg_outer, ARG(n_outer));
        if (is512()) {
            mov(reg_rs3, ARG(ncols));
            sub(reg_rs3, (npv() - 1) * 32);
            set_tail_mask(reg_rs3, 32);
        }
        bcast16_constants();
        Label l_whole, l_end;
        mov(rax, ARG(ncols));
        test(eax, vlen16() - 1);
        jz(l_whole, T_NEAR);
        tail_ = true;
        outer_loop_keys();
        jmp(l_end, T_NEAR);
        L(l_whole);
        tail_ = false;
        outer_loop_keys();
        L(l_end);
        vzeroupper();
        ret();
    }

    // Every outer slice: fresh or accumulated start, all rows, NaN fix-up, store.
    void outer_loop_keys() {
        Label l_outer;
        L(l_outer);
        {
            Label l_fresh, l_rows;
            cmp(ARG(accumulate), 0);
            je(l_fresh, T_NEAR);
            for (int i = 0; i < npv(); ++i) {
                ld16(i, smax(i), ptr[reg_dst + i * vbytes()]);
                copy16(umax(i), smax(i));
                copy16(umin(i), smax(i));
            }
            jmp(l_rows, T_NEAR);
            L(l_fresh);
            // -inf's bits: below every value but negative NaNs in the
            // signed max's order, above them in the unsigned min's.
            for (int i = 0; i < npv(); ++i) {
                copy16(smax(i), neg_inf16(i));
                copy16(umin(i), neg_inf16(i));
                zero16(umax(i));
            }
            L(l_rows);
            mov(reg_row, reg_src);
            mov(reg_rows, ARG(rows));
            Label l_row;
            L(l_row);
            {
                for (int i = 0; i < npv(); ++i) {
                    ld16(i, px(i), ptr[reg_row + i * vbytes()]);
                    vpmaxuw(umax(i), umax(i), px(i));
                    vpminuw(umin(i), umin(i), px(i));
                    vpmaxsw(smax(i), smax(i), px(i));
                }
                add(reg_row, reg_rs);
                dec(reg_rows);
                jnz(l_row, T_NEAR);
            }
            for (int i = 0; i < npv(); ++i) select_store16(i);
            add(reg_src, ARG(outer_src_stride));
            add(reg_dst, ARG(outer_dst_stride));
            dec(reg_outer);
            jnz(l_outer, T_NEAR);
        }
    }
};

#undef ARG

} // namespace

jit_fn generate_vertical_reg(const kernel_config &cfg, code_buffer &buf) {
    return generate_with<vertical_reg_generator>(cfg, buf);
}

} // namespace crest::impl::jit
