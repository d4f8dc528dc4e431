// `inner` family: the reduced group is innermost and contiguous. Several
// independent accumulators take whole vectors, the tail is masked (AVX-512)
// or taken one element at a time (AVX2); lanes are folded once per output.
#include "backend/jit/generators.hpp"
#include "backend/jit/jit_generator.hpp"

#include <cstddef>

namespace crest::impl::jit {

using namespace Xbyak;

namespace {

#define ARG(field) qword[reg_args + offsetof(inner_call, field)]

class inner_generator : public jit_generator {
public:
    using jit_generator::jit_generator;

private:
    const Reg64 reg_args = rdi;
    const Reg64 reg_src = rsi;     // first element of the current output
    const Reg64 reg_dst = rdx;
    const Reg64 reg_nout = rcx;    // outputs left
    const Reg64 reg_row = r8;      // current row
    const Reg64 reg_rows = r9;     // rows left
    const Reg64 reg_ptr = r10;     // walks along a row
    const Reg64 reg_left = r11;    // elements left in the row

    int nacc() const { return cfg_.unroll; }
    Xmm acc(int i) const { return vmm(i); }
    Xmm x(int i) const { return vmm(nacc() + i); }
    Xmm tmp(int i) const { return vmm(2 * nacc() + (i % 2)); }
    Xmm neg_inf() const { return vmm(2 * nacc() + 2); }

    void generate() override {
        mov(reg_src, ARG(src));
        mov(reg_dst, ARG(dst));
        mov(reg_nout, ARG(n_out));
        bcast_neg_inf(neg_inf());
        Label l_out;
        L(l_out);
        {
            for (int i = 0; i < nacc(); ++i) vmovaps(acc(i), neg_inf());
            mov(reg_row, reg_src);
            mov(reg_rows, ARG(rows));
            Label l_row;
            L(l_row);
            {
                row_body();
                add(reg_row, ARG(row_stride));
                dec(reg_rows);
                jnz(l_row, T_NEAR);
            }
            fold_and_store();
            add(reg_src, ARG(out_src_stride));
            add(reg_dst, ARG(out_dst_stride));
            dec(reg_nout);
            jnz(l_out, T_NEAR);
        }
        vzeroupper();
        ret();
    }

    void row_body() {
        const int step = nacc() * vlen();
        const data_type dt = cfg_.src_dt;
        mov(reg_ptr, reg_row);
        mov(reg_left, ARG(n));
        Label l_main, l_one, l_tail, l_done;
        L(l_main);
        {
            cmp(reg_left, step);
            jl(l_one, T_NEAR);
            for (int i = 0; i < nacc(); ++i)
                load(x(i), ptr[reg_ptr + i * vlen() * ssz()], dt);
            for (int i = 0; i < nacc(); ++i) nanmax(acc(i), x(i), tmp(i));
            add(reg_ptr, step * ssz());
            sub(reg_left, step);
            jmp(l_main, T_NEAR);
        }
        L(l_one);
        {
            cmp(reg_left, vlen());
            jl(l_tail, T_NEAR);
            load(x(0), ptr[reg_ptr], dt);
            nanmax(acc(0), x(0), tmp(0));
            add(reg_ptr, vlen() * ssz());
            sub(reg_left, vlen());
            jmp(l_one, T_NEAR);
        }
        L(l_tail);
        test(reg_left, reg_left);
        jz(l_done, T_NEAR);
        if (is512()) {
            set_tail_mask(reg_left);
            load_tail(x(0), ptr[reg_ptr], dt);
            nanmax_tail(acc(1 % nacc()), x(0));
        } else {
            Label l_scalar;
            L(l_scalar);
            {
                load_bcast(x(0), ptr[reg_ptr], dt, Xmm(tmp(0).getIdx()));
                nanmax(acc(0), x(0), tmp(0));
                add(reg_ptr, ssz());
                dec(reg_left);
                jnz(l_scalar, T_NEAR);
            }
        }
        L(l_done);
    }

    // Tree of accumulators, then lanes; joins dst when accumulating.
    void fold_and_store() {
        for (int w = 1; w < nacc(); w *= 2)
            for (int i = 0; i + w < nacc(); i += 2 * w)
                nanmax(acc(i), acc(i + w), tmp(0));
        reduce_lanes(acc(0).getIdx(), x(0).getIdx(), x(1 % nacc()).getIdx());
        const Xmm r(acc(0).getIdx());
        const Xmm t(x(0).getIdx());
        Label l_store;
        cmp(ARG(accumulate), 0);
        je(l_store, T_NEAR);
        load_bcast(t, ptr[reg_dst], cfg_.dst_dt, Xmm(x(1 % nacc()).getIdx()));
        nanmax(r, t, Xmm(tmp(0).getIdx()));
        L(l_store);
        store_scalar(ptr[reg_dst], r, cfg_.dst_dt, t);
    }
};

#undef ARG

} // namespace

jit_fn generate_inner(const kernel_config &cfg,
        std::unique_ptr<Xbyak::CodeGenerator> &holder) {
    auto g = std::make_unique<inner_generator>(cfg);
    jit_fn fn = g->finalize();
    holder = std::move(g);
    return fn;
}

} // namespace crest::impl::jit
