// AVX2's bf16/f16 tiny rows of 4-16 (gen_inner_blocks.hpp,
// tiny_rows_words(), which tiny_rows() hands them): the raw words of 16
// rows transposed in registers, so that each column is a vector, then
// the three statistics of the vertical kernels down the columns
// (design.md), exact with no redo, where tiny_rows() widened every load
// to f32 and permuted 8 lanes at a time (rows of 4-7) and the blocks
// folded widened vectors (rows of 8-16). Capped to AVX2 on Zen 4,
// benchgraph, % of the roofline, bf16/f16: rows of 7 at 28 MiB 26-33 ->
// 56-77, at 12.8 MB 16-22 -> 48-51; rows of 5 23-29 -> 54-87; rows of 8
// 22-30 -> 72-76; rows of 4 bf16 50-51 -> 69-77, f16 66-70 -> 67-72;
// rows of 14 (NCHW axis 3 of 14x14 maps, 26 MiB) 38-41 -> 58-68; rows
// of 10 25-27 -> 52-64; rows of 16 48-49 -> 54-68. Rows of 2-3 keep the
// in-lane shuffles: a row 14's 16-byte load would end past row 15.
#include "backend/jit/gen_inner_blocks.hpp"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

namespace crest::impl::jit {

using namespace Xbyak;

// A group of 16 rows, by blocks of 8 words: ymm k holds block words of
// row k in its low lane and of row k + 8 in its high one, then an 8x8
// transpose of words in both lanes at once (unpacks of words, dwords,
// qwords, only toward the columns needed) leaves column c of rows 0-7 |
// 8-15 in one ymm. Rows of 4-8 take one block from the row's start (a
// 16-byte load into the next row; the group's last row reads the 16
// bytes that end at its end, shifted down); rows of 9-16 a second one
// ending at the row's end, of which only the columns past the first
// block count. Rows of 7: 69 instructions a group of 224 bytes, a third
// of them shuffles.
void inner_blocks_generator::tiny_rows_words() {
    const int n = cfg_.block_n, esz = 2, lanes = 16;
    // Every ymm but c_neg_inf() and c_qnan() (12, 13).
    std::vector<int> free_regs {15, 14, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
    auto take = [&] {
        const int r = free_regs.back();
        free_regs.pop_back();
        return Ymm(r);
    };
    auto give = [&](const Ymm &y) { free_regs.push_back(y.getIdx()); };
    // Each stage pairs its inputs (a, b) into (lo, hi) unpacks of twice
    // the width, freeing the inputs.
    auto unpack = [&](int width, const Ymm &a, const Ymm &b, bool want_lo, bool want_hi) {
        std::pair<Ymm, Ymm> out {Ymm(0), Ymm(0)};
        if (want_lo) {
            out.first = take();
            if (width == 2) vpunpcklwd(out.first, a, b);
            else if (width == 4) vpunpckldq(out.first, a, b);
            else vpunpcklqdq(out.first, a, b);
        }
        if (want_hi) {
            out.second = take();
            if (width == 2) vpunpckhwd(out.second, a, b);
            else if (width == 4) vpunpckhdq(out.second, a, b);
            else vpunpckhqdq(out.second, a, b);
        }
        give(a);
        give(b);
        return out;
    };
    Label l_skip, l_group;
    tiny_rows_enter(lanes, l_skip);
    bcast16_constants();
    L(l_group);
    const Ymm s = take(), mx = take(), mn = take();
    int folded = 0;  // columns in the statistics so far
    Ymm first(0);
    // Column c joins the statistics (the first two start them: no copies).
    auto fold = [&](const Ymm &c) {
        if (folded == 0) {
            first = c;
        } else if (folded == 1) {
            vpmaxsw(s, first, c);
            vpmaxuw(mx, first, c);
            vpminuw(mn, first, c);
            give(first);
        } else {
            vpmaxsw(s, s, c);
            vpmaxuw(mx, mx, c);
            vpminuw(mn, mn, c);
        }
        if (folded++ > 0) give(c);
    };
    // The block of words [at, at + 8) of every row, its columns from
    // `from` on.
    auto block = [&](int at, int from) {
        std::vector<Ymm> rows;
        for (int k = 0; k < 8; ++k) {
            const Ymm v = take();
            vmovdqu(Xmm(v.getIdx()), ptr[reg_src + (k * n + at) * esz]);
            if (k < 7 || n >= 8) {
                vinserti128(v, v, ptr[reg_src + ((k + 8) * n + at) * esz], 1);
            } else {
                const Ymm t = take();
                vmovdqu(Xmm(t.getIdx()), ptr[reg_src + 16 * n * esz - 16]);
                vpsrldq(Xmm(t.getIdx()), Xmm(t.getIdx()), static_cast<uint8_t>(16 - n * esz));
                vinserti128(v, v, Xmm(t.getIdx()), 1);
                give(t);
            }
            rows.push_back(v);
        }
        const int to = std::min(n - at, 8);  // columns [from, to) of the block
        auto need = [&](int c) { return c >= from && c < to; };
        bool need_u[4];
        for (int j = 0; j < 4; ++j) need_u[j] = need(2 * j) || need(2 * j + 1);
        // Words: t[2p] holds words 0-3 of rows 2p, 2p + 1 interleaved,
        // t[2p + 1] words 4-7.
        std::vector<Ymm> t(8, Ymm(0)), u(8, Ymm(0));
        const bool lo4 = need_u[0] || need_u[1], hi4 = need_u[2] || need_u[3];
        for (int p = 0; p < 4; ++p)
            std::tie(t[2 * p], t[2 * p + 1]) = unpack(2, rows[2 * p], rows[2 * p + 1], lo4, hi4);
        // Dwords: u[j] (j < 4) holds columns 2j, 2j + 1 of rows 0-3, u[j + 4]
        // of rows 4-7.
        for (int o = 0; o < 8; o += 4) {
            if (lo4) std::tie(u[o], u[o + 1]) = unpack(4, t[o], t[o + 2], need_u[0], need_u[1]);
            if (hi4)
                std::tie(u[o + 2], u[o + 3]) = unpack(4, t[o + 1], t[o + 3], need_u[2], need_u[3]);
        }
        // Qwords: columns 2j, 2j + 1 of all 16 rows.
        for (int j = 0; j < 4; ++j) {
            if (!need_u[j]) continue;
            const auto [c0, c1] = unpack(8, u[j], u[j + 4], need(2 * j), need(2 * j + 1));
            if (need(2 * j)) fold(c0);
            if (need(2 * j + 1)) fold(c1);
        }
    };
    block(0, 0);
    if (n > 8) block(n - 8, 16 - n);
    const Ymm tmp = take();
    select16(s, mn, mx, tmp);
    tiny_rows_store_and_next(s, tmp, true, lanes, l_group);
    xor_(eax, eax);  // exact throughout: ZF set, nothing to redo
    tiny_rows_leave(false, l_skip);
}

} // namespace crest::impl::jit
