// `inner` family: the reduced group is innermost and contiguous. Several
// independent accumulators take whole vectors, the tail is masked (AVX-512)
// or taken one element at a time (AVX2); lanes are folded once per output.
// bf16/f16 rows keep raw-bits statistics on both ISAs (raw16()).
#include "backend/jit/gen_inner_blocks.hpp"
#include "backend/jit/generators.hpp"

#include <cstddef>
#include <functional>

namespace crest::impl::jit {

using namespace Xbyak;

namespace {

#define ARG(field) qword[reg_args + offsetof(inner_call, field)]

// reg_args, reg_src, reg_dst and reg_nout come from inner_blocks_generator.
class inner_generator : public inner_blocks_generator {
public:
    using inner_blocks_generator::inner_blocks_generator;

private:
    const Reg64 reg_row = r8;      // current row
    const Reg64 reg_rows = r9;     // rows left
    const Reg64 reg_ptr = r10;     // walks along a row
    const Reg64 reg_left = r11;    // elements left in the row

    int nacc() const { return cfg_.unroll; }
    Xmm acc(int i) const { return vmm(i); }
    Xmm x(int i) const { return vmm(nacc() + i); }
    Xmm tmp(int i) const { return vmm(2 * nacc() + (i % 2)); }
    Xmm neg_inf() const { return vmm(2 * nacc() + 2); }
    // raw16(): the largest raw bits seen, masks, and scratch (AVX-512:
    // zmm 24..31; AVX2, at most 4 accumulators: ymm 11..15).
    Xmm absmax() const { return vmm(is512() ? 24 : 11); }
    Xmm abs_mask() const { return vmm(is512() ? 25 : 12); }
    Xmm neg_inf16v() const { return vmm(is512() ? 27 : 13); }
    Xmm scratch(int u) const { return is512() ? vmm(28 + u % 4) : vmm(14 + u % 2); }
    // raw16() rows: acc(u) keeps the signed max of the raw bits (the
    // answer when a lane saw a value >= +0), minraw(u) the unsigned min
    // (the answer when it saw only negatives), absmax() the unsigned max
    // (above -inf: a negative NaN). 1-cycle ops: 4 chains of minraw do
    // (AVX2: 2, sharing them out).
    Xmm minraw(int u) const { return scratch(u); }

    void generate() override {
        // Every inner kernel: the blocks from the caches find NaN by the
        // invalid flag, and the others' maxes would raise it in the
        // caller's environment (and trap where it unmasked it).
        fp_env_enter();
        mov(reg_src, ARG(src));
        mov(reg_dst, ARG(dst));
        mov(reg_nout, ARG(n_out));
        Label l_done;
        // AVX2 has no masked tail: blocks only for whole vectors (plan_kernels.cpp).
        const bool with_blocks = cfg_.block_n > 0 && (is512() || cfg_.block_n % vlen() == 0);
        if (tiny_rows_fit()) tiny_rows();
        if (with_blocks) blocks();
        // The per-output loop's constants, once the blocks (which take
        // every vector register) are done.
        bcast_neg_inf(neg_inf());
        if (raw16()) {
            bcast16(abs_mask(), 0x7fff);
            bcast16(neg_inf16v(), neg_inf16());
        }
        if (with_blocks) {
            test(reg_nout, reg_nout);
            jz(l_done, T_NEAR);
        }
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

    // bf16/f16 rows: which raw-bits statistics a pass over an output's rows
    // keeps. all: the signed max, the unsigned min and the unsigned max (3
    // instructions per vector). maxes: no unsigned min (2); an output whose
    // signed max is negative saw only negatives, and a `mins` pass over
    // its rows, from cache, then finds its max.
    enum class raw_pass { all, maxes, mins };
    static constexpr int64_t two_pass_max_elems = 32 * 1024;

    // The loop over outputs: per output the rows, then fold and store.
    // `pass` is for raw16() only. A `maxes` loop whose output needed the
    // `mins` pass goes on at all_loop for the call's other outputs:
    // all-negative rows (log-probabilities) then read once, with three
    // statistics (bf16/f16 64x64x56x56 axes 2,3 on Zen 4: 84-86% of the
    // roofline with positive data, 68% with negative data and two passes
    // each). head: the loop's first instruction, if given.
    void outputs(raw_pass pass = raw_pass::all, Label *all_loop = nullptr, Label *head = nullptr) {
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
        } else if (is512()) {
            reset_ordered();
        }
        rows_loop([&] {
            if (raw16()) row_body_raw(pass);
            else if (is512()) row_body_f32();
            else row_body();
        });
        // Fold, store, next output; `next` the loop to go on with.
        auto finish = [&](Label &next) {
            if (is512() || raw16()) fold_and_store_flagged(pass != raw_pass::maxes);
            else fold_and_store();
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

    void rows_loop(const std::function<void()> &row_body) {
        mov(reg_row, reg_src);
        mov(reg_rows, ARG(rows));
        Label l_row;
        L(l_row);
        row_body();
        add(reg_row, ARG(row_stride));
        dec(reg_rows);
        jnz(l_row, T_NEAR);
    }

    void reset_minraw() {
        for (int u = 0; u < (is512() ? 4 : 2); ++u) vmovaps(minraw(u), neg_inf16v());
    }
    // acc(0) = the signed max of the accumulators' 16-bit lanes.
    void max_tree() {
        for (int w = 1; w < nacc(); w *= 2)
            for (int i = 0; i + w < nacc(); i += 2 * w)
                vpmaxsw(acc(i), acc(i), acc(i + w));
    }
    // minraw(0) = the unsigned min of the four chains.
    void min_tree() {
        vpminuw(minraw(0), minraw(0), minraw(1));
        if (!is512()) return;
        vpminuw(minraw(2), minraw(2), minraw(3));
        vpminuw(minraw(0), minraw(0), minraw(2));
    }

    // Walks one row from reg_row: steps of `loads` vectors of `elems`
    // elements each (load(u, address) for every u, then take(u)), then
    // single vectors, then tail() for the 1..elems-1 elements left in
    // reg_left (reg_ptr at them).
    void walk_row(int elems, int loads, const std::function<void(int, const Address &)> &load_u,
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
        tail();
        L(l_done);
    }

    // AVX2: widening loads and the NaN-aware max; the tail one element at
    // a time.
    void row_body() {
        const data_type dt = cfg_.src_dt;
        walk_row(vlen(), nacc(),
                [&](int u, const Address &a) { load(x(u), a, dt); },
                [&](int u) { nanmax(acc(u), x(u), tmp(u)); },
                [&] {
                    Label l_scalar;
                    L(l_scalar);
                    load_bcast(x(0), ptr[reg_ptr], dt, Xmm(tmp(0).getIdx()));
                    nanmax(acc(0), x(0), tmp(0));
                    add(reg_ptr, ssz());
                    dec(reg_left);
                    jnz(l_scalar, T_NEAR);
                });
    }

    // 64 bytes (32 elements) into the pass's raw-bits statistics of
    // accumulator u. Positive NaNs win the signed max by themselves.
    void take_raw(raw_pass pass, int u, const Xmm &x) {
        if (pass != raw_pass::mins) {
            vpmaxuw(absmax(), absmax(), x);
            vpmaxsw(acc(u), acc(u), x);
        }
        if (pass != raw_pass::maxes) vpminuw(minraw(u), minraw(u), x);
    }

    void row_body_raw(raw_pass pass) {
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
        walk_row(vlen16(), nacc(),
                [&](int u, const Address &a) { vmovdqu32(x(u), a); },
                [&](int u) { take_raw(pass, u, x(u)); },
                [&] {
                    // Lanes past the row keep -inf: harmless to the max, not NaN.
                    set_tail_mask(reg_left, 32);
                    vmovdqa32(x(0), neg_inf16v());
                    vmovdqu16(x(0) | k_tail_, ptr[reg_ptr]);
                    take_raw(pass, 0, x(0));
                });
    }

    // AVX-512 f32: a plain vmaxps per vector and, off the accumulator's
    // chain, a masked compare that clears the lanes where x is NaN
    // (track_ordered): 2 instructions per vector. The masked max it
    // replaced was 30% slower in L3; the |bits| tracking after it (3
    // instructions) read 20% slower than a plain max from L3 (doc/performance-history.md).
    void take_f32(int i, const Xmm &x) {
        vmaxps(acc(i), acc(i), x);
        track_ordered(i, x);
    }

    void row_body_f32() {
        walk_row(vlen(), nacc(),
                [&](int u, const Address &a) { vmovups(x(u), a); },
                [&](int u) { take_f32(u, x(u)); },
                [&] {
                    // Lanes past the row stay zero and out of the max (merge mask).
                    set_tail_mask(reg_left);
                    vmovups(x(0) | k_tail_ | T_z, ptr[reg_ptr]);
                    vmaxps(acc(1) | k_tail_, acc(1), x(0));
                    track_ordered(0, x(0));  // zeroed lanes are ordered
                });
    }

    // AVX-512 (and bf16/f16 on AVX2): the accumulators fold into lane 0 of
    // acc(0) with plain maxes (f32) or key maxes (bf16/f16), then one
    // store. The output is NaN if
    // the rows saw one (f32: a lane cleared in the ordered masks; bf16/f16:
    // an unsigned max of the raw bits above -inf, i.e. a negative NaN; a
    // positive NaN comes out of the key max by itself) or, when
    // accumulating, if dst holds one. bf16/f16 with `trees` false: acc(0)
    // already holds each lane's key.
    void fold_and_store_flagged(bool trees = true) {
        if (raw16()) fold_lanes_keys(trees);
        else fold_lanes_f32();
        const Xmm rx(acc(0).getIdx()), tx(x(0).getIdx());
        const Xmm sx(scratch(1).getIdx()), mask(abs_mask().getIdx());
        Label l_nan, l_store, l_done;
        if (raw16() && is512()) {
            vpcmpuw(k_ord_, absmax(), neg_inf16v(), 6);  // greater than -inf
            kortestd(k_ord_, k_ord_);
        } else if (raw16()) {
            // Saturating: nonzero where the bits are above -inf's.
            vpsubusw(tmp(0), absmax(), neg_inf16v());
            vptest(tmp(0), tmp(0));
        } else {
            test_ordered_nan();
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
        if (raw16()) mov(word[reg_dst], quiet_nan());
        else mov(dword[reg_dst], 0x7fc00000);
        L(l_done);
    }

    // f32: the accumulators' tree, then the lanes, with plain maxes.
    void fold_lanes_f32() {
        for (int w = 1; w < nacc(); w *= 2)
            for (int i = 0; i + w < nacc(); i += 2 * w)
                vmaxps(acc(i), acc(i), acc(i + w));
        const Zmm r(acc(0).getIdx());
        const Zmm t(x(0).getIdx());
        vextractf32x8(Ymm(t.getIdx()), r, 1);
        vmaxps(Ymm(r.getIdx()), Ymm(r.getIdx()), Ymm(t.getIdx()));
        vextractf128(Xmm(t.getIdx()), Ymm(r.getIdx()), 1);
        vmaxps(Xmm(r.getIdx()), Xmm(r.getIdx()), Xmm(t.getIdx()));
        vmovhlps(Xmm(t.getIdx()), Xmm(t.getIdx()), Xmm(r.getIdx()));
        vmaxps(Xmm(r.getIdx()), Xmm(r.getIdx()), Xmm(t.getIdx()));
        vmovshdup(Xmm(t.getIdx()), Xmm(r.getIdx()));
        vmaxss(Xmm(r.getIdx()), Xmm(r.getIdx()), Xmm(t.getIdx()));
    }

    // bf16/f16: the statistics' trees, then per lane the larger key of
    // the signed max and the unsigned min (the signed max's when the lane
    // saw a value >= +0, else the min's), then halves down to one word.
    void fold_lanes_keys(bool trees) {
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

jit_fn generate_inner(const kernel_config &cfg, code_buffer &buf) {
    return generate_with<inner_generator>(cfg, buf);
}

} // namespace crest::impl::jit
