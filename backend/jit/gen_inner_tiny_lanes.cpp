// AVX2's tiny rows of 2-4 (gen_inner_blocks.hpp, tiny_rows_in_lanes(),
// which tiny_rows() hands them): in-lane shuffles in place of the
// two-source permutes of gen_inner_tiny.cpp.
#include "backend/jit/gen_inner_blocks.hpp"

#include <cstdint>

namespace crest::impl::jit {

using namespace Xbyak;

// AVX2, rows of 2-4: a group of 8 rows (n vectors of src) by in-lane
// shuffles (vshufps, vblendps), which AVX2 has for two sources, where
// tiny_rows() needs two one-source permutes and a blend a step. Rows of 3
// (an RGB image's channels): 9 instructions a group against 28, and
// 16-byte loads that never split a line; rows of 2 and 4: 4 and 10
// against 8 and 24 (past the loads).
void inner_blocks_generator::tiny_rows_in_lanes() {
    const int n = cfg_.block_n, lanes = vlen(), esz = ssz();
    const Ymm a(0), b(1), c(2), d(3), x(4), y(5), t(6), order(15);
    // v = elements [at, at + 4) in its low lane, [at + 12, at + 16) in its high one.
    auto load_halves = [&](const Ymm &v, int at) {
        const Address lo = ptr[reg_src + at * esz], hi = ptr[reg_src + (at + 12) * esz];
        const Xmm vx(v.getIdx());
        if (cfg_.src_dt == data_type::f32) {
            vmovups(vx, lo);
            vinsertf128(v, v, hi, 1);
            return;
        }
        vmovq(vx, lo);
        vmovhps(vx, vx, hi);
        if (cfg_.src_dt == data_type::bf16) {
            vpmovzxwd(v, vx);
            vpslld(v, v, 16);
        } else {
            vcvtph2ps(v, vx);
        }
    };
    auto vec = [&](int k) { return ptr[reg_src + k * lanes * esz]; };
    Label l_order, l_code, l_skip, l_group;
    if (n == 4) {
        // The group's maxes come out as rows 0 2 4 6 | 1 3 5 7.
        jmp(l_code, T_NEAR);
        align(32);
        L(l_order);
        for (int i : {0, 4, 1, 5, 2, 6, 3, 7}) dd(uint32_t(i));
        L(l_code);
    }
    tiny_rows_enter(lanes, l_skip);
    if (n == 4) vmovups(order, ptr[rip + l_order]);
    L(l_group);
    if (n == 2) {
        load(a, vec(0), cfg_.src_dt);
        load(b, vec(1), cfg_.src_dt);
        vshufps(x, a, b, 0x88);  // elements 0 2 of each 4: rows 0 1 4 5 | 2 3 6 7
        vshufps(y, a, b, 0xdd);  // elements 1 3
        vmaxps(x, x, y);
        vpermpd(x, x, 0xd8);  // row order
    } else if (n == 3) {
        load_halves(a, 0);  // per lane: rows 0 0 0 1
        load_halves(b, 4);  //           1 1 2 2
        load_halves(c, 8);  //           2 3 3 3
        // Lane order = row order: [a0 a3 c0 c1], [a1 b0 b3 c2], [a2 b1 b2 c3].
        vshufps(t, a, c, 0x4c);
        vblendps(x, a, b, 0x11);
        vblendps(y, b, c, 0x44);
        vshufps(d, x, y, 0xb1);
        vmaxps(t, t, d);
        vblendps(x, a, b, 0x22);
        vblendps(y, b, c, 0x88);
        vshufps(d, x, y, 0xe6);
        vmaxps(x, t, d);
    } else {
        // A row per 128-bit lane: vectors k hold rows 2k | 2k + 1. Pairs
        // of elements first, then of rows.
        for (int k = 0; k < 4; ++k) load(Ymm(k), vec(k), cfg_.src_dt);
        for (int k = 0; k < 4; k += 2) {
            vshufps(x, Ymm(k), Ymm(k + 1), 0x44);  // elements 0 1 of rows 2k, 2k + 2
            vshufps(y, Ymm(k), Ymm(k + 1), 0xee);  // elements 2 3
            vmaxps(Ymm(k), x, y);
        }
        vshufps(x, a, c, 0x88);
        vshufps(y, a, c, 0xdd);
        vmaxps(x, x, y);
        vpermps(x, order, x);
    }
    tiny_rows_store_and_next(x, y, false, lanes, l_group);
    test_invalid_flag();
    tiny_rows_leave(true, l_skip);
}

} // namespace crest::impl::jit
