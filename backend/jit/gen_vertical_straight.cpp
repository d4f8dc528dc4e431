// The vertical tiles' straight groups (gen_vertical.hpp, group_body()): a
// group of rows per column vector, as loads or broadcasts for the full,
// tail and scalar columns; f32 by plain maxes (NaN-aware when exact),
// bf16/f16 by their raw-bits statistics, checked or exact.
#include "backend/jit/gen_vertical.hpp"

#include <algorithm>

namespace crest::impl::jit {

using namespace Xbyak;

void vertical_generator::ld(mode m, const Xmm &x, const Address &a, data_type dt) {
    if (m == mode::full) load(x, a, dt);
    else if (m == mode::tail) load_tail(x, a, dt);
    else load_bcast(x, a, dt, Xmm(15));
}

void vertical_generator::st(mode m, const Address &a, const Xmm &x) {
    if (m == mode::full && streaming_) store_stream(a, x, cfg_.dst_dt, v(14));
    else if (m == mode::full) store(a, x, cfg_.dst_dt, v(14));
    else if (m == mode::tail) store_tail(a, x, cfg_.dst_dt, v(14));
    else store_scalar(a, x, cfg_.dst_dt, Xmm(14));
}

void vertical_generator::prefetch_rows(mode m, int g) {
    if (m != mode::full) return;
    if (next_pass_straight()) {
        // A step's lines' worth of the next pass's rows, in memory order.
        const int lines = std::max(1, g * step() * ssz() / 64);
        for (int i = 0; i < lines; ++i) prefetcht1(ptr[reg_next + 64 * i]);
        add(reg_next, 64 * lines);
    }
    if (cfg_.prefetch_l1_bytes)
        for (int k = 0; k < g; ++k) prefetcht0(row(k, cfg_.prefetch_l1_bytes));
    if (cfg_.prefetch)
        for (int k = 0; k < g; ++k) prefetcht1(row(k, prefetch_ahead()));
}

void vertical_generator::group_body(mode m, int g, bool fresh) {
    prefetch_rows(m, g);
    if (raw16() && g > 8) {
        // AVX-512, a pass of 9-16 rows: a group of 8, then one of the
        // rest joining its output.
        unstreamed([&] { group_body_raw_checked(m, 8, fresh); });
        group_body_raw_checked(m, g - 8, false, true);
        return;
    }
    // AVX2 checks passes of 2-8 rows over whole vectors; one row, and
    // its one-column steps, go exact.
    if (raw16() && (is512() ? m != mode::scalar : m == mode::full && g > 1))
        return group_body_raw_checked(m, g, fresh);
    if (raw16()) return group_body_raw_split(m, g, fresh);
    group_body_f32(m, g, fresh, m == mode::scalar);
}

void vertical_generator::group_body_f32(mode m, int g, bool fresh, bool exact) {
    // The running max and nanmax's temporary, past the rows' registers.
    const Xmm run = v(std::max(8, g)), tmp = v(std::max(8, g) + 1);
    for (int k = 0; k < g; ++k) ld(m, v(k), row(k), cfg_.src_dt);
    for (int w = 1; w < g; w *= 2)
        for (int i = 0; i + w < g; i += 2 * w) {
            if (exact) nanmax(v(i), v(i + w), tmp);
            else vmaxps(v(i), v(i), v(i + w));
        }
    if (fresh) {
        st(m, ptr[reg_pd + reg_to], v(0));
        return;
    }
    ld(m, run, ptr[reg_pd], cfg_.dst_dt);
    // vmaxps returns its second operand when either is NaN: the running
    // max's NaN stays (the rows' are the pass's redo's business).
    if (exact) nanmax(run, v(0), tmp);
    else vmaxps(run, v(0), run);
    st(m, ptr[reg_pd + reg_to], run);
}

void vertical_generator::group_body_raw_checked(mode m, int g, bool fresh, bool upper) {
    raw_stats(m, g, fresh, false, upper);
    Label l_slow, l_done;
    if (is512()) {
        const Opmask k_neg = k_ord_, k_nan = Opmask(1);
        vpmovw2m(k_neg, v(0));
        if (m == mode::tail) kandd(k_neg, k_neg, k_tail_);
        negative_nan_lanes(k_nan, umax16(0));
        kortestd(k_neg, k_nan);
        jnz(l_slow, T_NEAR);
    } else {
        // AVX2 (whole vectors only): the words' sign bits are the byte
        // mask's odd bits; then the negative NaNs. v(9) is free after the
        // trees.
        vpmovmskb(eax, v(0));
        test(eax, 0xaaaaaaaa);
        jnz(l_slow, T_NEAR);
        test_negative_nan_avx2(umax16(0), c_neg_inf(), v(9));
        jnz(l_slow, T_NEAR);
    }
    store16(m, v(0));
    jmp(l_done, T_NEAR);
    L(l_slow);
    group_body_raw_split(m, g, fresh, upper);
    L(l_done);
}

void vertical_generator::group_body_raw_split(mode m, int g, bool fresh, bool upper) {
    if (g <= group()) return group_body_raw(m, g, fresh, upper);
    unstreamed([&] { group_body_raw(m, group(), fresh, upper); });
    group_body_raw(m, g - group(), false, true);
}

void vertical_generator::ld16(mode m, const Xmm &x, const Address &a) {
    if (m == mode::full) {
        load_raw(x, a);
    } else if (m == mode::scalar) {
        vpbroadcastw(x, Address(16, false, a.getRegExp()));
    } else {
        vmovdqa32(x, c_neg_inf());
        vmovdqu16(x | k_tail_, a);
    }
}

void vertical_generator::group_body_raw(mode m, int g, bool fresh, bool upper) {
    raw_stats(m, g, fresh, true, upper);
    select16(v(0), umin16(0), umax16(0), v(9));
    store16(m, v(0));
}

void vertical_generator::raw_stats(mode m, int g, bool fresh, bool with_umin, bool upper) {
    const Xmm d = v(is512() ? 16 : 14);
    auto r = [&](int k) { return row(upper ? group() + k : k); };
    // fused16: the checked statistics of each pair of rows take its
    // second row from memory in both maxes (one instruction fewer waiting
    // on each load). Channels-last slices of 7-14 rows from half the L3
    // (choose_tile_prefetch): Zen 4, ab_runs.sh with two copies of each
    // build, % of the roofline: bf16 128x14x14x512 reducing H 64-66 ->
    // 71-73, all negative 66-67 -> 69, f16 reducing W 59-62 -> 72-75;
    // 7x7x2048 bf16 reducing W 55-56 -> 56-58, f16 reducing H 56-59 ->
    // 58-60.
    const bool fused = cfg_.fused16 && is512() && m == mode::full && !with_umin && g >= 2;
    const bool lone_last = g % 2 == 1;  // the odd row, which joins the first pair
    for (int k = 0; k < g; ++k)
        if (!fused || k % 2 == 0) ld16(m, v(k), r(k));
    if (g == 1) {
        copy16(umax16(0), v(0));
        if (with_umin) copy16(umin16(0), v(0));
    }
    for (int i = 0; 2 * i + 1 < g; ++i) {
        if (fused) {
            vpmaxuw(umax16(i), v(2 * i), r(2 * i + 1));
            vpmaxsw(v(2 * i), v(2 * i), r(2 * i + 1));
            continue;
        }
        vpmaxuw(umax16(i), v(2 * i), v(2 * i + 1));
        if (with_umin) vpminuw(umin16(i), v(2 * i), v(2 * i + 1));
    }
    if (g > 1 && lone_last) {
        vpmaxuw(umax16(0), umax16(0), v(g - 1));
        if (with_umin) vpminuw(umin16(0), umin16(0), v(g - 1));
    }
    for (int w = 1; 2 * w < g; w *= 2)
        for (int i = 0; i + w < g / 2; i += 2 * w) {
            vpmaxuw(umax16(i), umax16(i), umax16(i + w));
            if (with_umin) vpminuw(umin16(i), umin16(i), umin16(i + w));
        }
    // The signed max's tree (fused: from its second level, the pairs' maxes
    // in the even registers and the lone last row in its own).
    for (int w = fused ? 2 : 1; w < g; w *= 2)
        for (int i = 0; i + w < g; i += 2 * w) vpmaxsw(v(i), v(i), v(i + w));
    if (!fresh) {
        ld16(m, d, upper ? ptr[reg_pd + reg_to] : ptr[reg_pd]);
        vpmaxuw(umax16(0), umax16(0), d);
        if (with_umin) vpminuw(umin16(0), umin16(0), d);
        vpmaxsw(v(0), v(0), d);
    }
}

void vertical_generator::store16(mode m, const Xmm &x) {
    const Address to = ptr[reg_pd + reg_to];
    if (m == mode::full && streaming_) vmovntdq(to, x);
    else if (m == mode::full && is512()) vmovdqu32(to, x);
    else if (m == mode::full) vmovdqu(to, x);
    else if (m == mode::tail) vmovdqu16(to | k_tail_, x);
    else vpextrw(word[reg_pd + reg_to], Xmm(x.getIdx()), 0);
}

} // namespace crest::impl::jit
