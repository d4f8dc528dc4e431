// `vert_reg` fixed blocks, f32 on AVX-512, slices of rows 9-15 columns
// wide that follow one another (NCHW reducing H of 14x14 maps): read as
// aligned cache lines instead of a load per row. A row of 56 bytes splits
// a line at most places, and the split loads held such slices at 55-65%
// of the roofline from memory. Here the slice's lines fold into one
// period of lcm(W, 16) elements (rows repeat their lanes every period),
// and each row of that period is shifted down to lane 0 (valignd) and
// maxed: max commutes with the shift.
#include <cstddef>
#include <numeric>
#include <vector>

#include "backend/jit/gen_vertical_reg.hpp"
#include "backend/jit/generators.hpp"

namespace crest::impl::jit {

using namespace Xbyak;

#define ARG(field) qword[reg_args + offsetof(vert_call, field)]

namespace {
constexpr int lanes = 16;  // f32 in a zmm, and in a 64-byte line

// Whether AVX-512 f32 fixed blocks of rows x cols read their slices as
// lines: 9-15 columns, and enough rows that every lane of the period
// holds a row element.
bool fixed_lines_fit(int rows, int cols) {
    if (cols < 9 || cols >= lanes) return false;
    // Every lane of the period must hold a row element, and the fold
    // below sets each of its lines from a whole line first.
    return rows * cols >= period_of(cols, 4).plines * lanes + 2 * lanes;
}
} // namespace

bool vertical_reg_generator::fixed_lines() const {
    return is512() && !raw16() && packed_slices() == 1
            && fixed_lines_fit(cfg_.block_rows, cfg_.block_cols);
}

int vertical_reg_generator::fixed_lines_group() const {
    // Slices until the first one starts on a line again.
    return lanes / std::gcd(cfg_.block_rows * cfg_.block_cols, lanes);
}

void vertical_reg_generator::fixed_lines_slice(int phase, int first_line) {
    const int w = cfg_.block_cols, n = cfg_.block_rows * w;
    const int plines = period_of(w, 4).plines, nlines = (phase + n + lanes - 1) / lanes;
    auto line = [&](int k) { return ptr[reg_src + (first_line + k) * 64]; };
    auto m = [](int f) { return Zmm(f); };  // the period's lines, zmm0-14
    const Zmm t(22), acc0(20), acc1(21), row(16);
    const Opmask k_part(5);
    // The lanes of line k inside the slice.
    auto lane_mask = [&](int k) { return line_lanes(phase, phase + n, k, lanes); };
    const uint64_t full = (uint64_t(1) << lanes) - 1;
    // Frame line f starts from the first whole line k = f (mod plines):
    // line f, or line plines for f = 0 when the slice starts inside line 0.
    std::vector<int> setter(plines, -1);
    for (int k = 0; k < nlines; ++k) {
        if (lane_mask(k) == full && setter[k % plines] < 0) setter[k % plines] = k;
    }
    over_batch([&](bool first) {
        if (first) {
            for (int f = 0; f < plines; ++f) vmovaps(m(f), line(setter[f]));
        }
        for (int k = 0; k < nlines; ++k) {
            const int f = k % plines;
            const uint64_t mask = lane_mask(k);
            if (first && k == setter[f]) continue;
            if (mask == full) {
                vmaxps(m(f), m(f), line(k));
            } else {
                // The slice's lanes only: the others are the slices around
                // it (never past the page: the line is aligned).
                vmovaps(t, line(k));
                mov(eax, mask);
                kmovw(k_part, eax);
                vmaxps(m(f) | k_part, m(f), t);
            }
        }
    });
    // Row h of the period starts at lane phase + h * w of the frame.
    for (int h = 0; h < period_of(w, 4).rows; ++h) {
        const int e = phase + h * w, f = (e / lanes) % plines, s = e % lanes;
        const Zmm dst = h == 0 ? acc0 : h == 1 ? acc1 : row;
        if (s == 0) vmovaps(dst, m(f));
        else valignd(dst, m((f + 1) % plines), m(f), s);
        if (h >= 2) vmaxps(h % 2 ? acc1 : acc0, h % 2 ? acc1 : acc0, row);
    }
    vmaxps(acc0, acc0, acc1);
    // Junk lanes past the columns are never stored.
    fixed_when_accumulating([&] { vmaxps(acc0 | k_tail_, acc0, ptr[reg_dst]); });
    vmovups(ptr[reg_dst] | k_tail_, acc0);
}

void vertical_reg_generator::fixed_lines_entry(
        const std::function<void()> &plain_slice, const Label &l_plain, const Label &l_all) {
    const int n = cfg_.block_rows * cfg_.block_cols, g = fixed_lines_group();
    const int reach = 4 * (lanes / g);  // src alignment that reaches a line
    Label l_lead, l_group, l_rest;
    cmp(reg_rs, cfg_.block_cols * 4);
    jne(l_plain, T_NEAR);
    cmp(ARG(outer_src_stride), n * 4);
    jne(l_plain, T_NEAR);
    test(reg_src, reach - 1);
    jnz(l_plain, T_NEAR);
    if (batched()) {
        // The lines read every batch index's slices at one phase: where
        // the indices' phases differ, the slices one at a time.
        Label l_one_index;
        cmp(ARG(batch), 1);
        jle(l_one_index, T_NEAR);
        test(ARG(batch_stride), 63);
        jnz(l_plain, T_NEAR);
        L(l_one_index);
    }

    cmp(reg_outer, 2 * g);
    jl(l_plain, T_NEAR);
    // Up to g - 1 slices one at a time, until src starts a line.
    L(l_lead);
    test(reg_src, 63);
    jz(l_group, T_NEAR);
    plain_slice();
    dec(reg_outer);
    jmp(l_lead, T_NEAR);
    L(l_group);
    cmp(reg_outer, g);
    jl(l_rest, T_NEAR);
    for (int q = 0; q < g; ++q) {
        fixed_lines_slice(q * n % lanes, q * n / lanes);
        add(reg_dst, ARG(outer_dst_stride));
    }
    add(reg_src, g * n * 4);
    sub(reg_outer, g);
    jmp(l_group, T_NEAR);
    L(l_rest);
    test(reg_outer, reg_outer);
    jz(l_all, T_NEAR);
}

#undef ARG

} // namespace crest::impl::jit
