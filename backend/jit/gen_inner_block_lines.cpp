// AVX-512 inner blocks over rows that split cache lines
// (gen_inner_blocks.hpp, block_lines): 16 dense rows of W elements are
// whole lines (f32: W lines; 16-bit, W even: W / 2), so a block that
// starts on a line reads them aligned, each line maxed into the
// accumulator of every row it holds (under a mask of that row's lanes
// where the row ends inside it), where the rows took a load a vector,
// most of them across two lines. Each accumulator then holds elements of
// its row only, whatever their lanes, and the fold takes the max over
// all of them. A later row of the outputs (an outer reduced dim) whose
// block does not start on a line has its lines shifted out of the
// aligned lines around it.
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
    Label l_plain, l_done, l_shifted;
    cmp(blk_os, n * ssz());
    jne(l_plain, T_NEAR);
    // The call's bytes: its outputs' rows, all of them.
    mov(blk_tmp, qword[reg_args + offsetof(inner_call, n_out)]);
    imul(blk_tmp, qword[reg_args + offsetof(inner_call, rows)]);
    cmp(blk_tmp, lines_min_bytes(words) / (n * ssz()));
    jl(l_plain, T_NEAR);
    test(blk_pa, 63);
    jnz(more ? l_shifted : l_plain, T_NEAR);
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
    // unsigned max chains too, which catch negative NaNs); line(l) puts
    // the block's line l in a register.
    auto by_lines = [&](const std::function<Xmm(int)> &line) {
        std::vector<bool> started(vlen(), more);
        int chain = 0;
        for (int l = 0; l < nlines; ++l) {
            const Xmm x = line(l);
            if (words) {
                const Xmm c = word_chain(chain++ % word_chains());
                vpmaxuw(c, c, x);
            }
            for (int k = l * lanes / n; k < vlen() && k * n < (l + 1) * lanes; ++k) {
                const uint64_t m = lanes_of(k, l);
                if (m == 0) continue;
                if (!started[k]) {
                    set(acc_of(k), m == full ? x : floor);
                    started[k] = true;
                    if (m == full) continue;
                }
                if (m == full) {
                    max_in(acc_of(k), x);
                    continue;
                }
                mov(blk_tmp, m);
                if (words) {
                    kmovd(k_row, blk_tmp.cvt32());
                    vpmaxsw(acc_of(k) | k_row, acc_of(k), x);
                } else {
                    kmovw(k_row, blk_tmp.cvt32());
                    vmaxps(acc_of(k) | k_row, acc_of(k), x);
                }
            }
        }
        jmp(l_done, T_NEAR);
    };
    by_lines([&](int l) {
        load_raw(t, ptr[blk_pa + l * 64]);
        return t;
    });
    if (more) {
        // A later row of the outputs (an outer reduced dim) whose stride
        // is off the lines' grid: the block's lines are shifted out of
        // the aligned lines around them by a two-source permute, where
        // the plain rows would split most of their loads. Zen 4, f32
        // NCHW 3x87378x5x5 reducing N, H and W (rows of 100 bytes,
        // 8737800 bytes apart) read 52% of the roofline by the plain
        // rows, 114% with the batch on the grid (3x87384x5x5).
        Label l_table;
        const Xmm idx = vmm(17), even = vmm(18), odd = vmm(19);
        const Reg64 base = r8;  // walk_vectors' count, free here
        L(l_shifted);
        test(blk_pa, ssz() - 1);  // an element split across lines: as it comes
        jnz(l_plain, T_NEAR);
        // Lane i takes element i + s of the pair of lines (s the block's
        // elements past its first line's start): the table's entry s on.
        mov(blk_tmp, blk_pa);
        and_(blk_tmp, 63);
        lea(base, ptr[rip + l_table]);
        vmovdqu32(idx, ptr[base + blk_tmp]);
        mov(base, blk_pa);
        and_(base, -64);
        load_raw(even, ptr[base]);
        by_lines([&](int l) {
            const Xmm x = l % 2 ? odd : even, next = l % 2 ? even : odd;
            load_raw(next, ptr[base + (l + 1) * 64]);
            if (words) vpermt2w(x, idx, next);
            else vpermt2d(x, idx, next);
            return x;
        });
        align(64);
        L(l_table);
        for (int i = 0; i < 2 * lanes; ++i) {
            if (words) dw(uint16_t(i));
            else dd(uint32_t(i));
        }
    }
    L(l_plain);
    plain();
    L(l_done);
}

} // namespace crest::impl::jit
