// Permute trees (permute_tree.hpp): their shapes and tables, and the code
// of a group of windows (jit_generator::permute_tree_group), shared by the
// inner tiny rows (gen_inner_tiny.cpp) and the column fixed blocks'
// slices of under two vectors (gen_vertical_fixed_tree.cpp).
#include "backend/jit/jit_generator.hpp"

#include <algorithm>
#include <utility>

namespace crest::impl::jit {

using namespace Xbyak;

namespace {

permute_tree shape(int n, int lanes) {
    permute_tree s;
    s.lanes = lanes;
    s.n = n;
    s.np = 2;
    while (s.np < n) s.np *= 2;
    s.p0 = s.np / 2;
    s.r0 = lanes / s.p0;
    return s;
}

} // namespace

permute_tree permute_tree::rows(int n, int lanes) {
    permute_tree s = shape(n, lanes);
    s.outs = s.r0;
    s.span = s.r0 * n;
    s.at = [n](int r, int e) { return r * n + e; };
    return s;
}

bool permute_tree::columns_fit(int rows, int cols, int lanes) {
    if (rows < 2 || cols < 1) return false;
    const permute_tree s = shape(rows, lanes);
    return rows * cols > lanes && rows * cols <= 2 * lanes && cols <= s.r0;
}

permute_tree permute_tree::columns(int rows, int cols, int lanes) {
    permute_tree s = shape(rows, lanes);
    s.outs = cols;
    s.span = rows * cols;
    s.at = [cols](int r, int e) { return e * cols + r; };
    return s;
}

std::vector<std::vector<uint32_t>> permute_tree::tables() const {
    std::vector<std::vector<uint32_t>> t;
    const size_t nl = static_cast<size_t>(lanes);
    std::vector<uint32_t> e0(nl), o0(nl);
    for (int r = 0; r < r0; ++r) {
        const int out = std::min(r, outs - 1);  // junk lanes repeat the last output
        for (int q = 0; q < p0; ++q) {
            e0[size_t(r * p0 + q)] = uint32_t(index_of(at(out, std::min(2 * q, n - 1))));
            o0[size_t(r * p0 + q)] = uint32_t(index_of(at(out, std::min(2 * q + 1, n - 1))));
        }
    }
    t.push_back(e0);
    t.push_back(o0);
    for (int p = p0; p > 1; p /= 2) {
        const int rows = lanes / p;  // outputs a merged operand holds
        std::vector<uint32_t> e(nl), o(nl);
        for (int r = 0; r < 2 * rows; ++r)
            for (int q = 0; q < p / 2; ++q) {
                const int from = (r < rows ? 0 : lanes) + (r % rows) * p + 2 * q;
                e[size_t(r * (p / 2) + q)] = uint32_t(from);
                o[size_t(r * (p / 2) + q)] = uint32_t(from + 1);
            }
        t.push_back(e);
        t.push_back(o);
    }
    return t;
}

std::vector<uint32_t> permute_tree::pack_table() const {
    std::vector<uint32_t> t(static_cast<size_t>(lanes));
    const int real = outputs();
    for (int i = 0; i < lanes; ++i) {
        const int k = std::min(i, real - 1);
        t[size_t(i)] = uint32_t(k / outs * r0 + k % outs);
    }
    return t;
}

Xmm jit_generator::permute_tree_group(const permute_tree &s,
        const std::vector<std::vector<uint32_t>> &tables, const permute_tree_regs &r,
        const Reg64 &src, int window_bytes, bool words, bool keys) {
    const Xmm &a = r.a, &b = r.b, &t = r.t;
    const int lanes = s.lanes, esz = words ? 2 : ssz();
    auto permute = [&](const Xmm &x, int tab, const Xmm &y) {
        if (words) return vpermt2w(x, r.table(tab), y);
        if (is512()) return vpermt2ps(x, r.table(tab), y);
        // AVX2 has one-source permutes only: each source by the table's
        // low bits, then the lanes whose index points past the first
        // source from the second (t is free in f32).
        int from_y = 0;
        for (int i = 0; i < lanes; ++i)
            if (tables[size_t(tab)][size_t(i)] >= uint32_t(lanes)) from_y |= 1 << i;
        const Ymm idx(r.table(tab).getIdx()), xy(x.getIdx()), ty(t.getIdx());
        vpermps(ty, idx, Ymm(y.getIdx()));
        vpermps(xy, idx, xy);
        vblendps(xy, xy, ty, from_y);
    };
    auto copy = [&](const Xmm &x, const Xmm &y) {
        if (is512()) vmovdqa32(x, y);
        else vmovaps(x, y);
    };
    auto max = [&](const Xmm &x, const Xmm &y) {
        if (words) vpmaxsw(x, x, y);
        else vmaxps(x, x, y);
    };
    // Operands on a stack, each with its level (merges it took): a
    // first-step operand joins the one below it while they share a level,
    // so that few stay live.
    std::vector<std::pair<Xmm, int>> stack;
    std::vector<int> free_regs = r.operands;
    for (int w = 0; w < s.p0; ++w) {
        // First step: the window's first vector and the vector that ends
        // it, paired into p0 partials an output.
        const Xmm acc = vmm(free_regs.back());
        free_regs.pop_back();
        const Address first = ptr[src + w * window_bytes];
        const Address second = ptr[src + w * window_bytes + s.second_at() * esz];
        // One load of each (most windows split lines: f32's second read
        // of each, as a permute's memory operand, was its limit at 4.2
        // cycles per 64 bytes).
        if (is512()) {
            vmovdqu32(a, first);
            vmovdqu32(b, second);
        } else {
            load(a, first, cfg_.src_dt);
            load(b, second, cfg_.src_dt);
        }
        if (words) {
            vpmaxuw(r.chain0, r.chain0, a);
            vpmaxuw(r.chain1, r.chain1, b);
            if (keys) {
                to_key16(a, t, r.abs_mask);
                to_key16(b, t, r.abs_mask);
            }
        }
        copy(acc, a);
        permute(acc, 0, b);
        permute(a, 1, b);
        max(acc, a);
        stack.push_back({acc, 0});
        // Merges: two operands of k outputs x p partials into one of
        // 2k outputs x p / 2.
        while (stack.size() >= 2 && stack.back().second == stack[stack.size() - 2].second) {
            const Xmm y = stack.back().first;
            stack.pop_back();
            free_regs.push_back(y.getIdx());
            auto &[x, level] = stack.back();
            const int tab = 2 + 2 * level;
            copy(b, x);
            permute(x, tab, y);
            permute(b, tab + 1, y);
            max(x, b);
            ++level;
        }
    }
    const Xmm out = stack.back().first;
    if (keys) to_key16(out, t, r.abs_mask);  // keys back to bits
    return out;
}

void jit_generator::permute_tree_words(const std::function<Xmm(bool)> &group,
        const Reg64 &redone, const std::function<void(const Xmm &, Label &)> &store_and_next) {
    // The raw bits' signed max first (four instructions a window fewer
    // than keys: bf16 65536x7 from L2 13.2 us against 18.8); after two
    // groups redone in a row (rows of 2 with random signs: most groups)
    // keys from the start.
    Label l_group, l_keys, l_keys_only, l_done;
    xor_(redone, redone);
    L(l_group);
    cmp(redone, 2);
    jae(l_keys_only, T_NEAR);
    const Xmm raw = group(false);
    vpmovw2m(k_ord_, raw);
    kortestd(k_ord_, k_ord_);
    jnz(l_keys, T_NEAR);
    xor_(redone, redone);
    store_and_next(raw, l_group);
    jmp(l_done, T_NEAR);
    L(l_keys);
    inc(redone);
    L(l_keys_only);
    store_and_next(group(true), l_group);
    L(l_done);
}

} // namespace crest::impl::jit
