// The `inner` family's short rows (gen_inner.cpp): a vector of outputs at
// a time, each in its own accumulator, folded together by one
// transpose-reduce. The base of inner_generator, which calls blocks() and
// shares its argument registers.
#pragma once

#include <cstddef>
#include <functional>

#include "backend/jit/jit_generator.hpp"

namespace crest::impl::jit {

// Calls of one row an output reading this many bytes or more take the
// tiny rows' lines forms (gen_inner_tiny.cpp, gen_inner_tiny_dwords.cpp):
// their shifts cost more than the split loads from L2. 2 threads, a call
// each, % of the roofline, split -> lines: f32 NCHW 1x1024x14x14
// reducing W (0.4 MB a call) 87-89 -> 81-82, f16 1x2048x7x7 (0.1 MB)
// 145-187 -> 136-143; 1.6-3.2 MB a call alike or better, 12.8 MB f32
// 55-61 -> 72-98.
constexpr int64_t tiny_lines_min_bytes = int64_t(1) << 20;

// The shape of a tiny-rows vector of outputs: rows padded to a power of two
// elements (np), halved by the first permute pair (p0 = np / 2 partials a
// row), so r0 = lanes / p0 rows a window of the first step.
struct tiny_shape {
    int n = 0, lanes = 0, np = 0, p0 = 0, r0 = 0;
    tiny_shape(int n_, int lanes_) : n(n_), lanes(lanes_) {
        np = 2;
        while (np < n) np *= 2;
        p0 = np / 2;
        r0 = lanes / p0;
    }
    // The window's r0 rows: r0 * n elements, in (lanes, 2 * lanes]; the
    // second table is the vector that ends with them.
    int second_at() const { return r0 * n - lanes; }
    // A window's element e as an index into (first vector, second vector).
    int index_of(int e) const { return e < lanes ? e : lanes + e - second_at(); }
};

class inner_blocks_generator : public jit_generator {
public:
    using jit_generator::jit_generator;

protected:
    const Xbyak::Reg64 reg_args = rdi;
    const Xbyak::Reg64 reg_src = rsi;     // first element of the current output
    const Xbyak::Reg64 reg_dst = rdx;
    const Xbyak::Reg64 reg_nout = rcx;    // outputs left

    // blocks()' own: the first rows of outputs 0-7 (pa) and 8-15 (pb), the
    // output stride (os) and its multiples, rows left, a temporary.
    const Xbyak::Reg64 blk_pa = r10, blk_pb = r14, blk_os = rax, blk_os3 = rbx, blk_os5 = r12,
            blk_os7 = r13, blk_rows = r9, blk_tmp = r11;
    // Which fast block the call is at (sticky): 0 words, 1 pairs, 2 clean
    // pairs (bf16).
    const Xbyak::Reg32 blk_mode = r15d;

    // Blocks of vlen() outputs while they last (see the definition);
    // clobbers every vector register, r8-r11 and rax.
    void blocks();

    // AVX-512 rows of 2-16 elements (bf16/f16: 2-31; gen_inner_tiny.cpp):
    // whole vectors of outputs in memory order, by permutes, while a
    // call's rows and dst are contiguous, up to tiny_tree_max_rows rows
    // an output; a NaN (16-bit: a negative NaN) leaves the call to the
    // other paths. Clobbers every vector register, rax and r8-r11.
    bool tiny_rows_fit() const;
    void tiny_rows();
    // AVX2 f32 rows of 2-4 and 16-bit rows of 3 (tiny_rows() hands them
    // on): in-lane shuffles (gen_inner_tiny_lanes.cpp).
    void tiny_rows_in_lanes();
    // AVX2 bf16/f16 rows of 4-16 (tiny_rows() hands them on): 16 rows'
    // words transposed into columns (gen_inner_tiny_words.cpp).
    void tiny_rows_words();
    // bf16/f16 rows of 2-3 (AVX2: 2; tiny_rows() hands them on): each
    // row's elements as floats in dwords' high halves, maxed by vmaxps
    // (gen_inner_tiny_dwords.cpp).
    void tiny_rows_dwords();
    // AVX-512 f32 rows of 9-13, one row an output (tiny_rows() runs it
    // before its trees, which take the calls it leaves): each row's first
    // and last 8 elements as two ymm, 16 rows' partials folded by lane
    // shuffles (gen_inner_tiny_halves.cpp).
    bool tiny_rows_halves_fit() const;
    void tiny_rows_halves();

    // AVX2, rows of block_n elements past whole vectors: the row's
    // last vector, ending at its end, given the address of its partial
    // vector (the elements before it are taken twice: a max is
    // idempotent, and so are the NaN checks).
    Xbyak::Address last_vector(const Xbyak::Address &partial) const {
        return ptr[partial.getRegExp() - (vlen() - cfg_.block_n % vlen()) * int(ssz())];
    }

    // From the caches the fast blocks find NaN by the invalid flag
    // (jit_generator::fp_env_enter), in any dtype.
    bool blocks_by_flags() const { return cfg_.block_n > 0 && !cfg_.prefetch; }

private:
    // tiny_rows' and tiny_rows_in_lanes' entry checks and way out (gen_inner_tiny.cpp).
    void tiny_rows_enter(int lanes, Xbyak::Label &l_skip, int max_rows = 1);
    void tiny_rows_leave(bool clear_flags, Xbyak::Label &l_skip);
    void tiny_rows_store_and_next(const Xbyak::Xmm &out, const Xbyak::Xmm &tmp, bool words,
            int lanes, Xbyak::Label &again);
    // Outputs of several rows (up to tiny_tree_max_rows): row r at byte
    // off of the group is reg_src + r * row_stride, by r8 (the stride),
    // r9 and r10 (3 and 5 times it), which tiny_row_strides() sets.
    void tiny_row_strides();
    Xbyak::Address tiny_row_address(int r, int off) const;
    // exact: the NaN-aware max; words: the signed 16-bit max; else vmaxps.
    void fold(bool exact, bool words = false);
    bool raw_pairs() const;
    // bf16 in raw_pairs(): a dword of -inf or +inf beside a nonzero low
    // element is a NaN float, so masked scores redo every block. After
    // such a redo the pairs go clean (their raw dwords' low halves
    // cleared) for the rest of the call (blk_mode 2): see blocks().
    bool bf16_pairs() const { return raw_pairs() && !f16_bits(); }
    bool clean_pairs_ = false;  // the pair code being emitted is the clean one
    Xbyak::Xmm high_mask() const { return vmm(is512() ? 23 : 12); }  // 0xffff0000 per dword
    // The clean pairs' masked dwords (AVX-512 24, 25, 27, 28, around
    // c_neg_inf(); AVX2 11, 13-15, which the fold takes only after the rows).
    Xbyak::Xmm clean_temp(int i) const {
        static const int avx512[] = {24, 25, 27, 28}, avx2[] = {11, 13, 14, 15};
        return vmm(is512() ? avx512[i % 4] : avx2[i % 4]);
    }
    // bf16/f16 rows of 32-64 elements (AVX2: 17-64): the raw bits'
    // signed 16-bit max per output, beside unsigned max chains for
    // negative NaNs (see the definition). Blocks take them first (blk_mode 0).
    bool word_blocks() const;
    // Whether the word blocks' calls of several rows an output take their
    // rows in ymm halves (see the definition).
    bool word_halves() const;
    // The chains: AVX-512 four, AVX2 two (ymm11 and 15, free until the
    // fold; its chains are tested before it).
    int word_chains() const { return is512() ? 4 : 2; }
    Xbyak::Xmm word_chain(int c) const {
        static const int avx512[] = {21, 29, 30, 31}, avx2[] = {11, 15};
        return is512() ? vmm(avx512[c % 4]) : vmm(avx2[c % 2]);
    }
    // A load's register in block_words: AVX-512 zmm16-19, AVX2 ymm8-9
    // (blocks()' x and t).
    Xbyak::Xmm word_temp(int c) const { return is512() ? vmm(16 + c % 4) : vmm(8 + c % 2); }
    void block_words(const std::function<Xbyak::Address(int, int)> &addr_bytes,
            const std::function<Xbyak::Xmm(int)> &acc_of, bool one_row);
    void word_block(const std::function<Xbyak::Address(int, int)> &addr_bytes,
            const std::function<Xbyak::Xmm(int)> &acc_of, Xbyak::Label &l_folded,
            Xbyak::Label &l_redo);
    // AVX-512: 0x8000 per word, the signed max's floor (block_words over
    // rows; AVX2 broadcasts it there, by blk_tmp: eax is blk_os).
    Xbyak::Xmm word_floor() const { return vmm(22); }
    // f16 in raw_pairs(): the accumulators hold the order of its bits.
    bool f16_bits() const { return cfg_.src_dt == data_type::f16; }
    // AVX-512: the unsigned max of an f16 block's raw bits.
    Xbyak::Xmm chain16() const { return vmm(21); }
    int pair_steps() const;
    bool masked_last_pair() const;
    void pair_step(const Xbyak::Xmm &m, const std::function<Xbyak::Address(int)> &vec, int st,
            bool first, const Xbyak::Xmm &x, const Xbyak::Xmm &y);
    // The dwords of a row's last, masked pair (k1-k4: the ordered chains,
    // k6-k7: jit_generator's).
    const Xbyak::Opmask k_pair_ = Xbyak::Opmask(5);
    void pair_max(const Xbyak::Xmm &m, const Xbyak::Address &a, const Xbyak::Xmm &x,
            const Xbyak::Xmm &y, bool first);
    void clear_low_halves(const Xbyak::Xmm &v);
    // A call's rows after the first (rows > 1), blk_pa and blk_pb moved
    // a row down before each: body() for each (blk_rows counts them).
    void later_rows(const std::function<void()> &body);
    // more: the accumulators hold earlier rows' maxes (f32 from the
    // caches: a later row of each output, in memory order).
    void block_fast(const std::function<Xbyak::Address(int, int)> &addr,
            const std::function<Xbyak::Xmm(int)> &acc_of, int nfull, bool tail,
            bool more = false);
    // AVX-512, rows of block_n elements that split lines (NCHW reducing W
    // of 56x56 maps), one row an output: f32 from the caches
    // (block_fast), 16-bit in the word blocks. A block whose rows are
    // dense and start on a line reads its 16 rows' lines whole, each into
    // the accumulators of the rows it holds, under masks where a row ends
    // inside it (gen_inner_block_lines.cpp); `more` (a later row of the
    // outputs): off a line too, by lines shifted out of the aligned ones.
    // Else `plain`.
    bool block_lines_fit() const;
    void block_lines(const std::function<Xbyak::Xmm(int)> &acc_of,
            const std::function<void()> &plain, bool more = false);
};

} // namespace crest::impl::jit
