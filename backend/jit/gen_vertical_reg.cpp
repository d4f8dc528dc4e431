// `vert_reg` family (see the class comment).
#include "backend/jit/generators.hpp"
#include "backend/jit/jit_generator.hpp"

#include <cstddef>

namespace crest::impl::jit {

using namespace Xbyak;

namespace {

#define ARG(field) qword[reg_args + offsetof(vert_call, field)]

// Few columns (at most 16 vectors): the whole column block lives in
// registers while every row streams past, so no dst round trip per row.
// ncols must be in ((unroll - 1) * vlen, unroll * vlen]; AVX2 also needs a
// whole number of vectors (no 16-bit masked loads there).
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
    const Reg64 reg_tail = r11;

    int nv() const { return cfg_.unroll; }
    Xmm acc(int i) const { return vmm(i); }
    Xmm x(int i) const { return is512() ? vmm(16 + i) : vmm(8 + i % 4); }
    Xmm tmp(int i) const { return is512() ? vmm(16 + i) : vmm(12 + i % 4); }
    bool masked(int i) const { return is512() && i == nv() - 1; }

    void ld(int i, const Xmm &v, const Address &a, data_type dt) {
        if (masked(i)) load_tail(v, a, dt);
        else load(v, a, dt);
    }

    void generate() override {
        mov(reg_rs, ARG(row_stride));
        mov(reg_src, ARG(src));
        mov(reg_dst, ARG(dst));
        mov(reg_outer, ARG(n_outer));
        if (is512()) {
            mov(reg_tail, ARG(ncols));
            sub(reg_tail, (nv() - 1) * vlen());
            set_tail_mask(reg_tail);
        }
        Label l_outer;
        L(l_outer);
        {
            Label l_fresh, l_rows;
            cmp(ARG(accumulate), 0);
            je(l_fresh, T_NEAR);
            for (int i = 0; i < nv(); ++i)
                ld(i, acc(i), ptr[reg_dst + i * vlen() * dsz()], cfg_.dst_dt);
            jmp(l_rows, T_NEAR);
            L(l_fresh);
            bcast_neg_inf(acc(0));
            for (int i = 1; i < nv(); ++i) vmovaps(acc(i), acc(0));
            L(l_rows);
            mov(reg_row, reg_src);
            mov(reg_rows, ARG(rows));
            Label l_row;
            L(l_row);
            {
                for (int i = 0; i < nv(); ++i) {
                    ld(i, x(i), ptr[reg_row + i * vlen() * ssz()], cfg_.src_dt);
                    nanmax(acc(i), x(i), tmp(i));
                }
                add(reg_row, reg_rs);
                dec(reg_rows);
                jnz(l_row, T_NEAR);
            }
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
        ret();
    }
};

#undef ARG

} // namespace

jit_fn generate_vertical_reg(const kernel_config &cfg,
        std::unique_ptr<Xbyak::CodeGenerator> &holder) {
    auto g = std::make_unique<vertical_reg_generator>(cfg);
    jit_fn fn = g->finalize();
    holder = std::move(g);
    return fn;
}

} // namespace crest::impl::jit
