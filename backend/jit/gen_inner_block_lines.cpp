// AVX-512 f32 inner blocks over rows that split cache lines
// (gen_inner_blocks.hpp, block_lines): 16 dense rows of W elements are W
// whole lines, so a block that starts on a line reads them aligned,
// each line maxed into the accumulator of every row it holds (under a
// mask of that row's lanes where the row ends inside it), where the rows
// took a load a vector, most of them across two lines. Each accumulator
// then holds elements of its row only, whatever their lanes, and the
// fold takes the max over all of them.
#include <algorithm>
#include <vector>

#include "backend/jit/gen_inner_blocks.hpp"

namespace crest::impl::jit {

using namespace Xbyak;

bool inner_blocks_generator::block_lines_fit() const {
    // Rows a multiple of 16 elements never split a line; long rows split
    // few of their lines and would unroll many.
    const int n = cfg_.block_n;
    return is512() && !raw16() && n % 16 != 0 && n > 16 && n <= 128;
}

void inner_blocks_generator::block_lines(
        const std::function<Xmm(int)> &acc_of, const std::function<void()> &plain) {
    constexpr int lanes = 16;
    const int n = cfg_.block_n;
    const Xmm t = vmm(16), ninf = vmm(20);  // ninf: blocks()' -inf
    const Opmask k_row(1), k_next(2);
    Label l_plain, l_done;
    cmp(blk_os, n * 4);
    jne(l_plain, T_NEAR);
    test(blk_pa, 63);
    jnz(l_plain, T_NEAR);
    // The lanes of line l that row k holds.
    auto lanes_of = [&](int k, int l) {
        const int lo = std::max(k * n - l * lanes, 0);
        const int hi = std::min((k + 1) * n - l * lanes, lanes);
        return lo >= hi ? 0u : ((1u << hi) - 1) & ~((1u << lo) - 1);
    };
    const unsigned full = (1u << lanes) - 1;
    // First every row's whole lines (the first sets its accumulator),
    // then the lines rows share, once each.
    for (int k = 0; k < vlen(); ++k) {
        const Xmm m = acc_of(k);
        bool first = true;
        for (int l = k * n / lanes; l <= ((k + 1) * n - 1) / lanes; ++l) {
            if (lanes_of(k, l) != full) continue;
            if (first) vmovaps(m, ptr[blk_pa + l * 64]);
            else vmaxps(m, m, ptr[blk_pa + l * 64]);
            first = false;
        }
        if (first) vmovaps(m, ninf);
    }
    for (int l = 0; l < n; ++l) {
        // The rows holding part of line l (at most lanes of them).
        std::vector<int> rows;
        for (int k = l * lanes / n; k < vlen() && k * n < (l + 1) * lanes; ++k)
            if (lanes_of(k, l) != 0 && lanes_of(k, l) != full) rows.push_back(k);
        if (rows.empty()) continue;
        vmovaps(t, ptr[blk_pa + l * 64]);
        for (size_t i = 0; i < rows.size(); ++i) {
            const Opmask km = i % 2 ? k_next : k_row;
            mov(blk_tmp.cvt32(), lanes_of(rows[i], l));
            kmovw(km, blk_tmp.cvt32());
            vmaxps(acc_of(rows[i]) | km, acc_of(rows[i]), t);
        }
    }
    jmp(l_done, T_NEAR);
    L(l_plain);
    plain();
    L(l_done);
}

} // namespace crest::impl::jit
