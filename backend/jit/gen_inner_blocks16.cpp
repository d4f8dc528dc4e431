// The `inner` blocks' 16-bit paths (gen_inner_blocks.hpp): the raw bits
// as pairs of elements in float maxes, and as signed 16-bit maxes.
#include "backend/jit/gen_inner_blocks.hpp"

#include <algorithm>
#include <functional>
#include <vector>

namespace crest::impl::jit {

using namespace Xbyak;

#define ARG(field) qword[reg_args + offsetof(inner_call, field)]

// bf16 from the caches, two vectors (64 bytes; AVX2: 32) at a time: the
// raw dwords are maxed as f32. A dword's float is its high bf16 element
// widened, with the low element below its last mantissa bit: the max
// dword's high half is the high elements' max (within one bf16 value the
// low bits only order equal ones), a NaN high element makes the dword NaN
// and raises the invalid flag (as does +-inf beside a nonzero low element:
// an exact redo for nothing), and the accumulator keeps that order against
// the clean floats of the low elements, shifted up, maxed beside. Three
// instructions per 64 bytes (AVX2: four per 32) against six for two
// widening loads and maxes. The clean pairs (bf16_pairs()) take one more,
// an and that clears the low halves. A second view of the dwords 2 bytes
// earlier, the low elements as high halves (two maxes per 64 bytes),
// read 10-25 points slower on Zen 4: each of its loads crosses a line.
//
// f16 (AVX-512) takes the same path in the order of its bits: a dword's
// float orders like its high f16 element's bits then the low one's, and
// for sign-magnitude bits that is the f16 order, +inf included (a finite
// float here). The accumulators then hold f16 bits in their high halves,
// converted to floats after the fold. What the order does not catch: f16
// NaNs whose bits make no float NaN (those with the exponent's ones and
// the mantissa's top bits not all set): positive ones are the largest
// bits and come out as the max, a NaN; negative ones sort lowest, and an
// unsigned max of the raw bits beside (chain16(), one more instruction
// per 64 bytes) sends a block that saw one to the exact redo. The kernel
// runs with DAZ clear (fp_env_enter): f16 bits of tiny values are float
// denormals here, never as f16 values widened.
bool inner_blocks_generator::raw_pairs() const {
    if (!blocks_by_flags() || cfg_.block_n / vlen() > 4) return false;
    return cfg_.src_dt == data_type::bf16 || (cfg_.src_dt == data_type::f16 && is512());
}

// A row of block_n 16-bit elements in steps: whole pairs of vectors, then
// (AVX-512, an even number of elements left) one pair masked to its
// dwords (k_pair_: no load past them), or else the remaining whole vector
// and element tail widened.
int inner_blocks_generator::pair_steps() const {
    const int n = cfg_.block_n, pair = 2 * vlen();
    return n / pair + (n % pair ? 1 : 0);
}

bool inner_blocks_generator::masked_last_pair() const {
    const int rem = cfg_.block_n % (2 * vlen());
    return is512() && rem > 0 && rem % 2 == 0;
}

// Step st of a row (vec(v): the address of its vector v) into m; first:
// m starts with it.
void inner_blocks_generator::pair_step(const Xmm &m, const std::function<Address(int)> &vec,
        int st, bool first, const Xmm &x, const Xmm &y) {
    const int npairs = cfg_.block_n / (2 * vlen());
    if (st < npairs) return pair_max(m, vec(2 * st), x, y, first);
    if (masked_last_pair()) {
        const Address a = vec(2 * npairs);
        if (first) vmovaps(m, vmm(20));  // -inf (blocks())
        // One masked load for all: a masked memory operand costs several
        // plain loads on AMD Zen 4 (16-bit masks the most).
        const Xmm d = vmm(22);
        vmovdqu32(d | k_pair_ | T_z, a);
        if (f16_bits()) vpmaxuw(chain16(), chain16(), d);
        vpslld(x, d, 16);
        vmaxps(m | k_pair_, m, x);
        if (clean_pairs_) vpandd(d, d, high_mask());
        vmaxps(m | k_pair_, m, d);
        return;
    }
    // Widened by a shift: f16 stays in the order of its bits.
    const data_type bits = data_type::bf16;
    const int nfull = cfg_.block_n / vlen(), tail = cfg_.block_n % vlen();
    int v = 2 * npairs;
    if (first && v < nfull) {
        load(m, vec(v++), bits);
        if (f16_bits()) vpmaxuw(chain16(), chain16(), m);
    } else if (first) {
        vmovaps(m, vmm(20));  // -inf (blocks(); a tail alone: AVX-512 only)
    }
    auto take = [&](const Address &a) {
        load(x, a, bits);
        if (f16_bits()) vpmaxuw(chain16(), chain16(), x);
        vmaxps(m, m, x);
    };
    for (; v < nfull; ++v) take(vec(v));
    if (tail && !is512()) {
        take(last_vector(vec(nfull)));  // AVX2 (bf16): overlapping
    } else if (tail) {
        load_tail(x, vec(nfull), bits);
        if (f16_bits()) vpmaxuw(chain16(), chain16(), x);
        vmaxps(m | k_tail_, m, x);
    }
}

void inner_blocks_generator::pair_max(const Xmm &m, const Address &a, const Xmm &x,
        const Xmm &y, bool first) {
    const Xmm even = first ? m : x;
    if (is512()) {
        vpslld(even, a, 16);
    } else {
        vmovdqu(even, a);  // VEX shifts take no memory operand
        vpslld(even, even, 16);
    }
    if (!first) vmaxps(m, m, x);
    if (clean_pairs_) {
        if (is512()) vpandd(y, high_mask(), a);
        else vpand(y, high_mask(), a);
        vmaxps(m, m, y);
    } else {
        vmaxps(m, m, a);
    }
    if (f16_bits()) vpmaxuw(chain16(), chain16(), a);
}

// 16-bit rows of 32 to 64 elements (AVX2: 17 to 64, a ymm of 16 words
// at a time, 8 outputs a block), from the caches or from memory (where
// the other blocks keep a check per vector): per 64 bytes
// one load, a signed 16-bit max of the raw bits into the output's
// accumulator and an unsigned max into one of four chains: three
// instructions where the pairs take three (bf16) or four (f16). Both
// maxes from memory read each vector twice, and rows that are not whole
// lines (56 elements: 112 bytes) split most loads across two lines: the
// loads were the limit there (Zen 4, same-run A/Bs: bf16 and f16
// 64x64x56x56 axis 3 268 -> 253 and 254 -> 218 us; rows of 64 and 48
// gained 5-10% too). From half the L3 on, over rows on lines
// (kernel_config::fused16), both maxes do read memory: channels-last
// 64x64x56x56 axis 1 (25 MiB, rows of 128 bytes), ab_runs.sh with two
// copies of each build, % of the roofline, bf16 63-74 -> 71-89, f16
// 66-78 -> 74-87; from L2 and from memory tied. A row's
// last vector ends at its last element, overlapping the one before (a max
// takes a value twice harmlessly), so no load is masked. The signed max of
// sign-magnitude bits is the max where a row saw a value >= +0, positive
// NaNs included (the largest bits); a negative NaN hides in it, and shows
// as a chain above -inf's bits (the block is then redone exactly). An
// output whose max has its sign set saw only negatives, whose max is
// their unsigned min: that block, and the call's later ones, go to the
// pairs (blk_mode 1). The fold's shuffles move dwords, each two words of one
// output, which a last shift and max join. AVX2 took its rows of 17-64
// widened to floats (rows past 32, and f16) or as float pairs (bf16 up to
// 32) until session 26; capped to AVX2 on Zen 4, ab_runs.sh with two
// copies of each build, random signs, % of the roofline: bf16
// channels-last 4x64x56x56 axis 1 (rows of 64, from L2) 41-42 -> 77-83,
// at 25 MiB 50-54 -> 64-80; NCHW axis 3 (rows of 56) 38-40 -> 65-66 and
// 50-53 -> 64-70; rows of 28 38-42 -> 58-68 and 45-53 -> 58-67; f16 rows
// of 64 49-54 -> 68-77 (25 MiB 54-64 -> 70-74), 56 48-50 -> 58-62, 28
// 41-43 -> 53-55; rows of 20 34 -> 37-44.
bool inner_blocks_generator::word_blocks() const {
    return cfg_.block_n >= 2 * vlen() && raw16();
}

// AVX-512's word blocks of several rows an output (NCHW reducing N, H
// and W) over rows that split lines and do not go by lines: in zmm they
// read 40-75% of the roofline at 25 MiB on Zen 4 (rows of 33-121, three
// rows an output), in ymm halves 87-123% (batch_ab.sh, 3 rounds; rows of
// 49 and 81 of NCHW 7x7 and 9x9 maps with 2-3 rows 53-81 -> 73-93%).
// One row an output read 5-8 points worse in halves (rows of 65-196),
// and so did several rows of 169 and 196 (101-107 -> 86-103).
bool inner_blocks_generator::word_halves() const {
    const int n = cfg_.block_n;
    return is512() && word_blocks() && !block_lines_fit() && n % 32 != 0 && n <= 128;
}

void inner_blocks_generator::block_words(const std::function<Address(int, int)> &addr_bytes,
        const std::function<Xmm(int)> &acc_of, bool one_row) {
    // In halves (word_halves) each register's ymm, 16 words a load.
    const bool half = word_halves() && !one_row;
    auto H = [&](const Xmm &v) -> Xmm { return half ? Xmm(Ymm(v.getIdx())) : v; };
    const int n = cfg_.block_n, words = half ? vlen() : 2 * vlen();
    std::vector<int> offsets {0};
    for (int e = words; e < n; e += words) offsets.push_back(std::min(e, n - words) * ssz());
    for (int c = 0; c < word_chains(); ++c) zero16(word_chain(c));
    int c = 0;
    auto take = [&](int k, int off, bool first) {
        const Address a = addr_bytes(k, off);
        const Xmm acc = H(acc_of(k)), chain = H(word_chain(c));
        if (cfg_.fused16 && is512() && !first) {
            // Rows on lines from half the L3 on (fused_rows16): both
            // maxes read the vector from memory, no load.
            vpmaxsw(acc, acc, a);
            vpmaxuw(chain, chain, a);
            ++c;
            return;
        }
        const Xmm x = H(word_temp(c));
        load_raw(x, a);
        if (first) copy16(acc, x);
        else vpmaxsw(acc, acc, x);
        vpmaxuw(chain, chain, x);
        ++c;
    };
    // Memory order, as block_fast; first: the row that starts the
    // accumulators.
    auto row_block = [&](bool first) {
        auto by_vectors = [&] {
            for (int k = 0; k < vlen(); ++k)
                for (size_t j = 0; j < offsets.size(); ++j) take(k, offsets[j], first && j == 0);
        };
        if (block_lines_fit()) block_lines(acc_of, by_vectors, !first);
        else by_vectors();
    };
    if (one_row) return row_block(true);
    // Several rows an output (an outer reduced dim): a row's block after
    // another, each in memory order (blocks(), fast_block).
    mov(blk_pa, reg_src);
    lea(blk_pb, ptr[reg_src + blk_os * 8]);
    row_block(true);
    later_rows([&] { row_block(false); });
    // The halves' accumulators (their high halves zeroed) copied into
    // both halves, for the fold of whole registers.
    if (half)
        for (int k = 0; k < vlen(); ++k) {
            const int a = acc_of(k).getIdx();
            vinserti64x4(Zmm(a), Zmm(a), Ymm(a), 1);
        }
}

// The bf16 pairs' accumulators hold their low elements' bits below the
// high halves' values: cleared, the lanes are exact bf16 values again.
void inner_blocks_generator::clear_low_halves(const Xmm &v) {
    if (is512()) vpandd(v, v, high_mask());
    else vpand(v, v, high_mask());
}

// One block of words (word_blocks()): into l_folded with the outputs as
// floats in vmm(0), or to l_redo after a negative NaN; an output of
// negatives only falls through, with blk_mode 1, to the pairs, with pa and
// pb at the block's first rows.
void inner_blocks_generator::word_block(const std::function<Address(int, int)> &addr_bytes,
        const std::function<Xmm(int)> &acc_of, Label &l_folded, Label &l_redo) {
    const Xmm x = vmm(is512() ? 16 : 8);
    Label l_rows, l_fold;
    cmp(ARG(rows), 1);
    jne(l_rows, T_NEAR);
    block_words(addr_bytes, acc_of, true);
    jmp(l_fold, T_NEAR);
    L(l_rows);
    block_words(addr_bytes, acc_of, false);
    L(l_fold);
    Label l_negative;
    if (!is512()) {
        // The chains before the fold, which takes their registers: a lane
        // above -inf's bits is a negative NaN.
        bcast16(x, neg_inf16(), blk_tmp.cvt32());
        test_negative_nan_chains_avx2(word_chain(0), word_chain(1), x, vmm(9));
        jnz(l_redo, T_NEAR);
    }
    fold(false, true);
    vpsrld(x, vmm(0), 16);
    vpmaxsw(vmm(0), vmm(0), x);  // low words: the outputs' signed maxes
    if (is512()) {
        test_negative_nan_chains(word_chain(0), word_chain(1), word_chain(2), word_chain(3));
        jnz(l_redo, T_NEAR);
        vpmovw2m(k_ord_, vmm(0));
        // k1: the ordered chains' (k1-k4), unused from the caches.
        const Opmask k_low_words = Opmask(1);
        mov(blk_tmp.cvt32(), 0x55555555u);
        kmovd(k_low_words, blk_tmp.cvt32());
        kandd(k_ord_, k_ord_, k_low_words);
        kortestd(k_ord_, k_ord_);
    } else {
        // The sign bits of the low words: byte 1 of each dword.
        vpmovmskb(blk_tmp.cvt32(), vmm(0));
        test(blk_tmp.cvt32(), 0x22222222);
    }
    jnz(l_negative, T_NEAR);
    if (f16_bits() && is512()) {
        vpmovdw(Ymm(x.getIdx()), vmm(0));
        vcvtph2ps(vmm(0), Ymm(x.getIdx()));
    } else if (f16_bits()) {
        // The low words alone (the high ones are junk), packed to 8 words.
        const Xmm xl(x.getIdx()), tl(vmm(9).getIdx());
        vpslld(x, vmm(0), 16);
        vpsrld(x, x, 16);
        vextracti128(tl, Ymm(x.getIdx()), 1);
        vpackusdw(xl, xl, tl);
        vcvtph2ps(vmm(0), xl);
    } else {
        vpslld(vmm(0), vmm(0), 16);
    }
    jmp(l_folded, T_NEAR);
    L(l_negative);
    mov(blk_mode, 1);
    mov(blk_pa, reg_src);
    lea(blk_pb, ptr[reg_src + blk_os * 8]);
}

#undef ARG

} // namespace crest::impl::jit
