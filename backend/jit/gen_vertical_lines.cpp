// `vert_reg` on AVX-512 with kernel_config::fold_cols: slices whose rows
// split cache lines (NCHW reducing H of 56x56 maps: rows of 112 or 224
// bytes) read as aligned lines. The rows repeat their lanes every
// period of lcm(W, a line's lanes) elements, so every line of a slice
// maxes into the register of its place in the period (P lines), and the
// period is then folded in halves (the upper half shifted down by
// valignd and maxed onto the lower) until one row is left: max is
// lane-wise, so it commutes with the shifts. A line is one load and
// one max (16-bit: the three statistics), where a row took a split load
// a vector; the fixed blocks of 10-14 columns do the same a slice at a
// phase (gen_vertical_fixed_lines.cpp).
#include <algorithm>
#include <cstddef>
#include <vector>

#include "backend/jit/gen_vertical_reg.hpp"
#include "backend/jit/generators.hpp"

namespace crest::impl::jit {

using namespace Xbyak;

#define ARG(field) qword[reg_args + offsetof(vert_call, field)]

bool fold_fits(int cols, data_type dt) {
    if (cols <= 0) return false;
    const int esz = dt == data_type::f32 ? 4 : 2;
    const line_period f = period_of(cols, esz);
    // Rows that never split a line gain nothing; the registers: the
    // period's lines (16-bit: three statistics each, the outputs ending
    // in the first) and two temporaries, beside the 16-bit constants
    // (zmm26, zmm28). f32 keeps its bound from before the outputs shared
    // the period's registers: the periods it would add (rows of 29 or 58
    // columns) read 98-99% by the fold, 102-105% without (Zen 4,
    // ab_builds); 16-bit rows of 9 columns gain (bf16 [N x 100 x 9]
    // reducing the 100 53 -> 78%, [N x 64 x 9] 85 -> 93%).
    if (cols * esz % 64 == 0 || 64 % (cols * esz) == 0) return false;
    return esz == 4 ? f.plines + f.nvec + 2 <= 32 : 3 * f.plines + 2 <= 30;
}

bool vertical_reg_generator::folds() const {
    return is512() && cfg_.fold_cols > 0 && fold_fits(cfg_.fold_cols, cfg_.src_dt)
            && cfg_.src_dt == cfg_.dst_dt && !fixed();
}

void vertical_reg_generator::fold_entry(const Label &general, const Label &done) {
    const int w = cfg_.fold_cols, esz = ssz();
    const line_period f = period_of(w, esz);
    const bool b16 = raw16();
    // Registers: zmm0.. for the period's lines (16-bit: signed max,
    // unsigned max, unsigned min of each), then the row vectors', skipping
    // the 16-bit constants.
    std::vector<int> free_regs;
    for (int i = 0; i < 32; ++i)
        if (!b16 || (i != c_neg_inf().getIdx() && i != c_qnan().getIdx())) free_regs.push_back(i);
    size_t next = 0;
    auto take = [&](int n) {
        std::vector<Zmm> r;
        for (int i = 0; i < n; ++i) r.push_back(Zmm(free_regs[next++]));
        return r;
    };
    const int nstat = b16 ? 3 : 1;
    // The period's lines; the fold below leaves the outputs in the first
    // f.nvec of them.
    std::vector<std::vector<Zmm>> m(nstat);
    for (int s = 0; s < nstat; ++s) m[s] = take(f.plines);
    const Zmm t = take(1)[0], v = take(1)[0];
    const Opmask k_slice_tail = Opmask(1);  // k_tail_ holds the outputs' tail

    // The calls it takes: columns, dense rows and slices, rows enough for
    // a period. A slice is read as 64-byte vectors from its start (on a
    // line where the slices are whole lines from a line; else split
    // loads, which still beat a load a row of a few columns: bf16 [N x
    // 100 x 3] reducing the 100 read 15% of the roofline by the general
    // loop), its last part vector under k_slice_tail.
    Label l_slice;
    cmp(ARG(ncols), w);
    jne(general, T_NEAR);
    cmp(reg_rs, w * esz);
    jne(general, T_NEAR);
    mov(rax, ARG(rows));
    cmp(rax, f.rows);
    jl(general, T_NEAR);
    imul(rax, rax, w * esz);
    cmp(rax, ARG(outer_src_stride));
    jne(general, T_NEAR);
    mov(reg_rs3, rax);
    shr(reg_rs3, 6);  // whole vectors a slice
    mov(reg_row, rax);
    and_(reg_row, 63);
    shr(reg_row, esz == 4 ? 2 : 1);  // elements past them
    set_tail_mask(k_slice_tail, reg_row, f.lanes);
    const int tail = w - (f.nvec - 1) * f.lanes;
    mov(eax, tail >= 32 ? -1 : static_cast<int>((1u << tail) - 1));
    kmovd(k_tail_, eax);

    // Line k of the period: the first period sets, the others max in
    // (masked: only the lanes of k_slice_tail, the others neither read nor
    // joined).
    auto line = [&](int k, const Address &a, bool first, bool masked = false) {
        auto to = [&](int s) { return masked ? m[s][k] | k_slice_tail : m[s][k]; };
        if (!b16) {
            if (first) vmovups(m[0][k], a);
            else vmaxps(to(0), m[0][k], a);
            return;
        }
        if (first) {
            vmovdqu32(m[0][k], a);
            vmovdqa32(m[1][k], m[0][k]);
            vmovdqa32(m[2][k], m[0][k]);
            return;
        }
        if (masked) vmovdqu16(t | k_slice_tail | T_z, a);
        else vmovdqu32(t, a);  // one L1 read for the three
        vpmaxsw(to(0), m[0][k], t);
        vpmaxuw(to(1), m[1][k], t);
        vpminuw(to(2), m[2][k], t);
    };
    auto join = [&](int s, const Zmm &a, const Zmm &b) {
        if (!b16) vmaxps(a, a, b);
        else if (s == 0) vpmaxsw(a, a, b);
        else if (s == 1) vpmaxuw(a, a, b);
        else vpminuw(a, a, b);
    };

    // The pair (lo, hi) shifted down by elems: valignd moves whole dwords,
    // so a 16-bit shift by an odd number of words (rows of an odd column
    // count) takes a two-source word permute whose indices (s, s + 1, ...)
    // are the table's entries from s on.
    Label l_words;
    auto shifted = [&](const Zmm &to, const Zmm &hi, const Zmm &lo, int elems) {
        if (!b16 || elems % 2 == 0) return valignd(to, hi, lo, elems * esz / 4);
        vmovdqu16(to, ptr[rip + l_words + elems * 2]);
        vpermi2w(to, lo, hi);
    };
    bool odd_words = false;

    L(l_slice);
    {
        Label l_periods, l_rest, l_lines_done;
        for (int k = 0; k < f.plines; ++k) line(k, ptr[reg_src + k * 64], true);
        lea(reg_row, ptr[reg_src + f.plines * 64]);
        mov(reg_rows, reg_rs3);
        sub(reg_rows, f.plines);
        L(l_periods);
        cmp(reg_rows, f.plines);
        jl(l_rest, T_NEAR);
        for (int k = 0; k < f.plines; ++k) line(k, ptr[reg_row + k * 64], false);
        add(reg_row, f.plines * 64);
        sub(reg_rows, f.plines);
        jmp(l_periods, T_NEAR);
        L(l_rest);
        for (int k = 0; k + 1 < f.plines; ++k) {
            cmp(reg_rows, k);
            jle(l_lines_done, T_NEAR);
            line(k, ptr[reg_row + k * 64], false);
        }
        L(l_lines_done);
        // The slice's last part vector (reg_rows whole ones were left
        // after the periods), its lanes past the slice neither read nor
        // joined.
        Label l_tail_done;
        kortestd(k_slice_tail, k_slice_tail);
        jz(l_tail_done, T_NEAR);
        for (int k = 0; k < f.plines; ++k) {
            Label l_next;
            cmp(reg_rows, k);
            jne(l_next, T_NEAR);
            line(k, ptr[reg_row + k * 64], false, true);
            jmp(l_tail_done, T_NEAR);
            L(l_next);
        }
        L(l_tail_done);
        // The period's rows folded in halves: the upper half of the elements
        // [0, L) still live is maxed onto the lower, until one row is left
        // in m[s][0 .. nvec). A period holds a power of two of rows, so
        // each half is whole rows, and the shifts number about twice the
        // period's lines, where a shift a row took rows x vectors (16-bit
        // 3 columns: 6 shifts a statistic, not 32). Lanes past L hold
        // other rows of the slice (or the last register again) and are
        // never stored.
        for (int L = f.plines * f.lanes; L > w; L /= 2) {
            const int half = L / 2, nregs = (L + f.lanes - 1) / f.lanes;
            for (int j = 0; j * f.lanes < half; ++j) {
                const int e = j * f.lanes + half, q = e / f.lanes, sh = e % f.lanes;
                odd_words |= b16 && sh % 2 != 0;
                for (int s = 0; s < nstat; ++s) {
                    const Zmm &lo = m[s][q], &hi = m[s][std::min(q + 1, nregs - 1)];
                    if (sh == 0) {
                        join(s, m[s][j], lo);
                    } else {
                        shifted(v, hi, lo, sh);
                        join(s, m[s][j], v);
                    }
                }
            }
        }
        // dst's outputs as one more row; lanes past the columns are never
        // stored.
        const bool last_masked = tail < f.lanes;
        Label l_fresh;
        cmp(ARG(accumulate), 0);
        je(l_fresh, T_NEAR);
        {
            for (int i = 0; i < f.nvec; ++i) {
                const Address d = ptr[reg_dst + i * 64];
                const bool mk = last_masked && i == f.nvec - 1;
                if (!b16) {
                    if (mk) vmaxps(m[0][i] | k_tail_, m[0][i], d);
                    else vmaxps(m[0][i], m[0][i], d);
                    continue;
                }
                if (mk) vmovdqu16(t | k_tail_ | T_z, d);
                else vmovdqu32(t, d);
                for (int s = 0; s < 3; ++s) join(s, m[s][i], t);
            }
        }
        L(l_fresh);
        for (int i = 0; i < f.nvec; ++i) {
            const Address d = ptr[reg_dst + i * 64];
            const bool mk = last_masked && i == f.nvec - 1;
            if (b16) {
                select16(m[0][i], m[2][i], m[1][i], t);
                store16(d, m[0][i], mk);
            } else if (mk) {
                vmovups(d | k_tail_, m[0][i]);
            } else {
                vmovups(d, m[0][i]);
            }
        }
        add(reg_src, ARG(outer_src_stride));
        add(reg_dst, ARG(outer_dst_stride));
        dec(reg_outer);
        jnz(l_slice, T_NEAR);
    }
    // f32: a NaN anywhere (or in a lane past the columns) has the
    // general loop redo the call.
    if (!b16) redo_after_nan(general, done);
    jmp(done, T_NEAR);
    if (odd_words) {
        align(64);
        L(l_words);
        for (int i = 0; i < 2 * f.lanes; ++i) dw(uint16_t(i));
    }
}

#undef ARG

} // namespace crest::impl::jit
