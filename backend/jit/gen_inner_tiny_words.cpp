// AVX2's bf16/f16 tiny rows of 4-8 (gen_inner_blocks.hpp,
// tiny_rows_words(), which tiny_rows() hands them): the raw words of 16
// rows transposed in registers, so that each column is a vector, then
// the three statistics of the vertical kernels down the columns
// (design.md), exact with no redo, where tiny_rows() widened every load
// to f32 and permuted 8 lanes at a time (rows of 4-8, and rows of 8 the
// blocks). Capped to AVX2 on Zen 4, benchgraph, % of the roofline,
// bf16/f16: rows of 7 at 28 MiB 26-33 -> 56-77, at 12.8 MB 16-22 ->
// 48-51; rows of 5 23-29 -> 54-87; rows of 8 22-30 -> 72-76; rows of 4
// bf16 50-51 -> 69-77, f16 66-70 -> 67-72. Rows of 2-3 keep the in-lane shuffles: a row 14's
// 16-byte load would end past row 15.
#include "backend/jit/gen_inner_blocks.hpp"

#include <tuple>
#include <utility>
#include <vector>

namespace crest::impl::jit {

using namespace Xbyak;

// A group of 16 rows: ymm k holds row k in its low lane and row k + 8 in
// its high one (a 16-byte load each, into the next row; the group's last
// row reads the 16 bytes that end at its end, shifted down), then an 8x8
// transpose of words in both lanes at once (unpacks of words, dwords,
// qwords) leaves column c of rows 0-7 | 8-15 in one ymm, only the
// columns the rows have. Rows of 7: 69 instructions a group of 224 bytes,
// a third of them shuffles.
void inner_blocks_generator::tiny_rows_words() {
    const int n = cfg_.block_n, esz = 2, lanes = 16;
    std::vector<int> free_regs {8, 9, 10, 11, 14, 15};  // 12, 13: c_neg_inf(), c_qnan()
    auto take = [&] {
        const int r = free_regs.back();
        free_regs.pop_back();
        return Ymm(r);
    };
    auto give = [&](const Ymm &y) { free_regs.push_back(y.getIdx()); };
    Label l_skip, l_group;
    tiny_rows_enter(lanes, l_skip);
    bcast16_constants();
    L(l_group);
    std::vector<Ymm> rows;
    for (int k = 0; k < 8; ++k) {
        const Ymm v(k);
        vmovdqu(Xmm(k), ptr[reg_src + k * n * esz]);
        if (k < 7) {
            vinserti128(v, v, ptr[reg_src + (k + 8) * n * esz], 1);
        } else {
            const Ymm t = take();
            vmovdqu(Xmm(t.getIdx()), ptr[reg_src + 16 * n * esz - 16]);
            vpsrldq(Xmm(t.getIdx()), Xmm(t.getIdx()), static_cast<uint8_t>(16 - n * esz));
            vinserti128(v, v, Xmm(t.getIdx()), 1);
            give(t);
        }
        rows.push_back(v);
    }
    // Each stage pairs its inputs (a, b) into (lo, hi) unpacks of twice
    // the width, freeing the inputs as it goes.
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
    // Words: t[2p] holds words 0-3 of rows 2p, 2p + 1 interleaved, t[2p + 1] words 4-7.
    std::vector<Ymm> t(8, Ymm(0)), u(8, Ymm(0));
    for (int p = 0; p < 4; ++p) std::tie(t[2 * p], t[2 * p + 1]) = unpack(2, rows[2 * p], rows[2 * p + 1], true, true);
    // Dwords: u[j] (j < 4) holds columns 2j, 2j + 1 of rows 0-3, u[j + 4] of rows 4-7.
    for (int half = 0; half < 2; ++half) {
        const int o = 4 * half;
        std::tie(u[o], u[o + 1]) = unpack(4, t[o], t[o + 2], true, true);
        const bool high_words = n > 4;  // columns 4-7
        if (high_words) std::tie(u[o + 2], u[o + 3]) = unpack(4, t[o + 1], t[o + 3], true, n > 6);
        else {
            give(t[o + 1]);
            give(t[o + 3]);
        }
    }
    // Qwords: column c of all 16 rows, folded into the statistics at
    // once (the first two columns start them: no copies).
    const Ymm s = take(), mx = take(), mn = take();
    std::vector<Ymm> cols;
    for (int j = 0; 2 * j < n; ++j) {
        const bool odd = 2 * j + 1 < n;
        const auto [c0, c1] = unpack(8, u[j], u[j + 4], true, odd);
        cols.push_back(c0);
        if (odd) cols.push_back(c1);
        if (j == 0) {
            vpmaxsw(s, cols[0], cols[1]);
            vpmaxuw(mx, cols[0], cols[1]);
            vpminuw(mn, cols[0], cols[1]);
        } else {
            for (size_t k = size_t(2 * j); k < cols.size(); ++k) {
                vpmaxsw(s, s, cols[k]);
                vpmaxuw(mx, mx, cols[k]);
                vpminuw(mn, mn, cols[k]);
            }
        }
        for (size_t k = size_t(2 * j); k < cols.size(); ++k) give(cols[k]);
    }
    const Ymm tmp = take();
    select16(s, mn, mx, tmp);
    tiny_rows_store_and_next(s, tmp, true, lanes, l_group);
    give(tmp);
    xor_(eax, eax);  // exact throughout: ZF set, nothing to redo
    tiny_rows_leave(false, l_skip);
}

} // namespace crest::impl::jit
