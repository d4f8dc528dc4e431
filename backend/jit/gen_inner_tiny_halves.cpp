// The `inner` family's AVX-512 f32 rows of 9-13 elements, one row an
// output (tiny_rows_halves(), which tiny_rows() runs before its trees):
// each row as two ymm, its first 8 elements and its last 8, maxed (the
// middle ones taken twice: a max is idempotent), 16 rows' 8-lane
// partials then folded into a vector of 16 outputs by lane shuffles. The
// permute trees pad such a row to 16 lanes, half of them copies, in zmm
// permutes, which Zen 4 runs as two halves each. Calls of several rows
// an output keep the trees, which max the rows lane by lane first, and
// so do rows of 14 and 15, which pad little (performance.md, session 37:
// 2 threads, rows of 9-13 68-82 -> 82-90% of the roofline, of 14-15
// 81-83 -> 76-78%).
#include "backend/jit/gen_inner_blocks.hpp"

#include <cstddef>

namespace crest::impl::jit {

using namespace Xbyak;

bool inner_blocks_generator::tiny_rows_halves_fit() const {
    const int n = cfg_.block_n;
    return is512() && !raw16() && n >= 9 && n <= 13;
}

void inner_blocks_generator::tiny_rows_halves() {
    constexpr int lanes = 16;
    const int n = cfg_.block_n, row_bytes = n * 4, last_half = (n - 8) * 4;
    // The fold below leaves output k at lane where[k]: each half holds
    // rows 0, 2, 4, 6 then 1, 3, 5, 7 of its eight.
    static const int where[lanes] = {0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15};
    Label l_table, l_code, l_skip;
    jmp(l_code, T_NEAR);
    align(64);
    L(l_table);
    for (int k = 0; k < lanes; ++k) dd(uint32_t(where[k]));
    L(l_code);
    tiny_rows_enter(lanes, l_skip, 1);
    const Zmm order(31), out(30);
    vmovdqu32(order, ptr[rip + l_table]);
    auto acc = [](int k) { return Ymm(k); };
    auto tmp = [](int k) { return Ymm(16 + k % 12); };
    Label l_group;
    L(l_group);
    {
        for (int k = 0; k < lanes; ++k) {
            const int at = k * row_bytes;
            vmovups(acc(k), ptr[reg_src + at]);
            vmaxps(acc(k), acc(k), ptr[reg_src + at + last_half]);
        }
        // Rows a, b -> [a's 4 partials | b's 4]: the two 128-bit halves.
        for (int i = 0; i < 8; ++i) {
            const Ymm a = acc(2 * i), b = acc(2 * i + 1), lo = tmp(2 * i), hi = tmp(2 * i + 1);
            vshuff32x4(lo, a, b, 0b00);
            vshuff32x4(hi, a, b, 0b11);
            vmaxps(acc(i), lo, hi);
        }
        // [a | b], [c | d] -> [a a c c | b b d d] (2 partials each).
        for (int j = 0; j < 4; ++j) {
            const Ymm x = acc(2 * j), y = acc(2 * j + 1), lo = tmp(2 * j), hi = tmp(2 * j + 1);
            vshufps(lo, x, y, 0x44);
            vshufps(hi, x, y, 0xee);
            vmaxps(acc(8 + j), lo, hi);
        }
        // Rows 8m .. 8m + 7 -> [r0 r2 r4 r6 | r1 r3 r5 r7] of 8m.
        for (int m = 0; m < 2; ++m) {
            const Ymm x = acc(8 + 2 * m), y = acc(8 + 2 * m + 1), lo = tmp(2 * m), hi = tmp(2 * m + 1);
            vshufps(lo, x, y, 0x88);
            vshufps(hi, x, y, 0xdd);
            vmaxps(acc(12 + m), lo, hi);
        }
        vinsertf32x8(out, Zmm(acc(12).getIdx()), acc(13), 1);
        vpermps(out, order, out);
    }
    tiny_rows_store_and_next(out, Zmm(29), false, lanes, l_group);
    test_invalid_flag();  // a NaN: ZF clear, the call to the other paths
    tiny_rows_leave(true, l_skip);
}

} // namespace crest::impl::jit
