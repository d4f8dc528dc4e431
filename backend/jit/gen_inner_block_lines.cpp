// AVX-512 inner blocks over rows that split cache lines
// (gen_inner_blocks.hpp, block_lines): 16 dense rows of W elements are
// whole lines (f32: W lines; 16-bit, W even: W / 2), so a block that
// starts on a line reads them aligned, each line maxed into the
// accumulator of every row it holds (under a mask of that row's lanes
// where the row ends inside it), where the rows took a load a vector,
// most of them across two lines. Each accumulator then holds elements of
// its row only, whatever their lanes, and the fold takes the max over
// all of them.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "backend/jit/gen_inner_blocks.hpp"

namespace crest::impl::jit {

using namespace Xbyak;

namespace {
// The bytes a call reads from which blocks go by lines (below, by
// vectors). The masks cost instructions, which from L2 or a warm L3
// cost more than the split loads do: 16-bit word blocks of rows of 56
// (2 threads, a call a thread) 97 -> 91% of the roofline at 3.2 MB a
// call, 63-66 -> 87% at 6.4 MB; 0.4 MB 99-104 -> 100-102% past it, 1.6
// MB 88-90 -> 80-81% at 1 MiB. f32 read alike from 0.4 MB (71-77
// against 72-80%).
int64_t lines_min_bytes(bool words) { return words ? int64_t(4) << 20 : int64_t(1) << 20; }
} // namespace

bool inner_blocks_generator::block_lines_fit() const {
    // Rows a whole number of lines never split one; long rows split few
    // of their lines and would unroll many. 16-bit: the word blocks'
    // rows (32 or more), an even count (a block of whole lines).
    const int n = cfg_.block_n, lanes = 64 / ssz();
    if (!is512() || n % lanes == 0 || n > 128) return false;
    return raw16() ? word_blocks() && n % 2 == 0 : n > 16;
}

void inner_blocks_generator::block_lines(
        const std::function<Xmm(int)> &acc_of, const std::function<void()> &plain, bool more) {
    const bool words = raw16();
    const int n = cfg_.block_n, lanes = 64 / ssz(), nlines = vlen() * n / lanes;
    const Xmm t = vmm(16);  // blocks()' x, the word blocks' first temporary
    // A row with no whole line starts from the lowest value: -inf
    // (blocks()' vmm(20)), or the word blocks' signed floor.
    const Xmm floor = words ? word_floor() : vmm(20);
    const Opmask k_row(1);  // the ordered chains' (k1-k4), unused from the caches
    Label l_plain, l_done;
    cmp(blk_os, n * ssz());
    jne(l_plain, T_NEAR);
    mov(blk_tmp, lines_min_bytes(words) / (n * ssz()));
    cmp(qword[reg_args + offsetof(inner_call, n_out)], blk_tmp);
    jl(l_plain, T_NEAR);
    test(blk_pa, 63);
    jnz(l_plain, T_NEAR);
    // The lanes of line l that row k holds.
    auto lanes_of = [&](int k, int l) { return line_lanes(k * n, (k + 1) * n, l, lanes); };
    const uint64_t full = (uint64_t(1) << lanes) - 1;
    auto set = [&](const Xmm &m, const Xmm &src) {
        if (words) copy16(m, src);
        else vmovaps(m, src);
    };
    auto max_in = [&](const Xmm &m, const Operand &src) {
        if (words) vpmaxsw(m, m, src);
        else vmaxps(m, m, src);
    };
    // Line by line in memory order: each line once (16-bit: into the
    // unsigned max chains too, which catch negative NaNs).
    std::vector<bool> started(vlen(), more);
    int chain = 0;
    for (int l = 0; l < nlines; ++l) {
        const Address a = ptr[blk_pa + l * 64];
        load_raw(t, a);
        if (words) {
            const Xmm c = word_chain(chain++ % word_chains());
            vpmaxuw(c, c, t);
        }
        for (int k = l * lanes / n; k < vlen() && k * n < (l + 1) * lanes; ++k) {
            const uint64_t m = lanes_of(k, l);
            if (m == 0) continue;
            if (!started[k]) {
                set(acc_of(k), m == full ? t : floor);
                started[k] = true;
                if (m == full) continue;
            }
            if (m == full) {
                max_in(acc_of(k), t);
                continue;
            }
            mov(blk_tmp, m);
            if (words) {
                kmovd(k_row, blk_tmp.cvt32());
                vpmaxsw(acc_of(k) | k_row, acc_of(k), t);
            } else {
                kmovw(k_row, blk_tmp.cvt32());
                vmaxps(acc_of(k) | k_row, acc_of(k), t);
            }
        }
    }
    jmp(l_done, T_NEAR);
    L(l_plain);
    plain();
    L(l_done);
}

} // namespace crest::impl::jit
