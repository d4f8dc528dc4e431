// Small base for crest's Xbyak generators: vector register choice per ISA,
// widening loads and narrowing stores for f32/bf16/f16, and the NaN-aware
// max every kernel uses. Kept deliberately short; families add their loops.
#pragma once

#include <algorithm>
#include <cstdint>
#include <new>

#include <xbyak/xbyak.h>

#include "backend/jit/code_buffer.hpp"
#include "backend/jit/jit_config.hpp"

namespace crest::impl::jit {

// The lanes of 64-byte line `line` (of `lanes` elements) that hold
// elements [begin, end), counted from the first line's first lane: the
// mask a line read whole is maxed in under (gen_*lines.cpp).
inline uint64_t line_lanes(int begin, int end, int line, int lanes) {
    const int lo = std::max(begin - line * lanes, 0);
    const int hi = std::min(end - line * lanes, lanes);
    if (lo >= hi) return 0;
    return ((uint64_t(1) << hi) - 1) & ~((uint64_t(1) << lo) - 1);
}

class jit_generator : public Xbyak::CodeGenerator {
public:
    // Writes into code (at most code_bytes, read+write).
    jit_generator(const kernel_config &cfg, void *code, size_t code_bytes)
        : Xbyak::CodeGenerator(code_bytes, code)
        , cfg_(cfg) {}

    // Generates and resolves the jumps; the caller makes the code
    // executable once this object is gone (generate_with).
    jit_fn finalize() {
        generate();
        ready();
        return getCode<jit_fn>();
    }

protected:
    // The Xbyak names the generators use most.
    using Reg64 = Xbyak::Reg64;
    using Label = Xbyak::Label;
    using Xmm = Xbyak::Xmm;
    using Address = Xbyak::Address;

    // vcmpps predicates (quiet: no exception on a quiet NaN).
    static constexpr uint8_t cmp_unord_q = 3;
    static constexpr uint8_t cmp_ord_q = 7;
    virtual void generate() = 0;

    bool is512() const { return cfg_.isa == isa_t::avx512_core; }
    // kernel_config::prefetch: how far ahead of a stream's loads its lines
    // are prefetched into L2 (prefetcht1). A tile's rows are prefetched
    // within the tile, so the first stretch of each row in a pass goes
    // without and the last stretch's prefetches fall into lines being read
    // anyway: a quarter of the lines for 8 KiB tiles at 2 KiB. 1 KiB read
    // 1.5-4 points faster there (f16 4096x4096 axis 2 on Zen 4), 1-2 with
    // 64 KiB tiles (f32 64x256x56x56 axis 0, from memory); 512 bytes was
    // too short to hide the latency, and the inner rows read the same.
    static constexpr int prefetch_ahead_bytes = 1024;
    // kernel_config::prefetch_bytes when set (vert_tile).
    int prefetch_ahead() const {
        return cfg_.prefetch_bytes ? cfg_.prefetch_bytes : prefetch_ahead_bytes;
    }
    // f32 lanes per vector register.
    int vlen() const { return is512() ? 16 : 8; }
    Xbyak::Xmm vmm(int i) const {
        if (is512()) return Xbyak::Zmm(i);
        return Xbyak::Ymm(i);
    }
    int ssz() const { return static_cast<int>(dt_size(cfg_.src_dt)); }
    int dsz() const { return static_cast<int>(dt_size(cfg_.dst_dt)); }

    // All lanes of v = -inf. Clobbers eax.
    void bcast_neg_inf(const Xbyak::Xmm &v);
    // v = vlen elements of dt at a, widened to f32.
    void load(const Xbyak::Xmm &v, const Xbyak::Address &a, data_type dt);
    // AVX-512 only: as load, lanes outside k_tail_ are zero and nothing
    // outside them is read.
    void load_tail(const Xbyak::Xmm &v, const Xbyak::Address &a,
            data_type dt);
    // Every lane of v = the one element of dt at a. Clobbers eax, xmm tmp.
    void load_bcast(const Xbyak::Xmm &v, const Xbyak::Address &a,
            data_type dt, const Xbyak::Xmm &tmp);
    // Stores vlen lanes of v narrowed to dt; tmp is clobbered.
    void store(const Xbyak::Address &a, const Xbyak::Xmm &v, data_type dt,
            const Xbyak::Xmm &tmp);
    // As store, with a non-temporal write of the vlen lanes (a full
    // vector's bytes of dt, which a must be aligned to); v kept, tmp clobbered.
    void store_stream(const Xbyak::Address &a, const Xbyak::Xmm &v, data_type dt,
            const Xbyak::Xmm &tmp);
    // bf16/f16: v's lanes narrowed into tmp's low half (returned), exact.
    Xbyak::Xmm narrow16(const Xbyak::Xmm &v, data_type dt, const Xbyak::Xmm &tmp);
    // AVX2 (no masked word loads or stores): the first `bytes` (up to 32,
    // even) of v to `at`, in pieces of 16, 8, 4 and 2 (its masked stores
    // are dword-wide and slow on Zen), and back into v (zeros above them);
    // t is clobbered past 16 bytes.
    void store_bytes(const Xbyak::RegExp &at, const Xbyak::Xmm &v, int bytes,
            const Xbyak::Xmm &t);
    void load_bytes(const Xbyak::Xmm &v, const Xbyak::RegExp &at, int bytes,
            const Xbyak::Xmm &t);
    // AVX-512 only: stores the lanes in k_tail_.
    void store_tail(const Xbyak::Address &a, const Xbyak::Xmm &v,
            data_type dt, const Xbyak::Xmm &tmp);
    // Stores lane 0 of v narrowed to dt. Clobbers eax and tmp.
    void store_scalar(const Xbyak::Address &a, const Xbyak::Xmm &v,
            data_type dt, const Xbyak::Xmm &tmp);
    // a = max(a, b) lane-wise, NaN if either is NaN. tmp used on AVX2.
    void nanmax(const Xbyak::Xmm &a, const Xbyak::Xmm &b,
            const Xbyak::Xmm &tmp);
    // ZF clear (jnz taken) when any f32 lane of v is NaN, as the sum
    // checks test their sums. Clobbers k_ord_ (AVX-512) or tmp (AVX2).
    void test_nan(const Xbyak::Xmm &v, const Xbyak::Xmm &tmp);
    // AVX-512, f32 lanes, where the invalid flag below is not used (long
    // inner rows, blocks from memory): NaN found by masked compares beside
    // the max's chain, one instruction per vector. k_seen_ord(c), c < ord_chains,
    // keeps the lanes ordered in every vector taken so far on chain c
    // (several chains: a compare waits on its chain's last one).
    // reset_ordered() sets every chain to all lanes ...
    static constexpr int ord_chains = 4;
    Xbyak::Opmask k_seen_ord(int c) const { return Xbyak::Opmask(1 + c % ord_chains); }
    void reset_ordered() {
        for (int c = 0; c < ord_chains; ++c) kxnorw(k_seen_ord(c), k_seen_ord(c), k_seen_ord(c));
    }
    // ... track_ordered(c, x) takes x's lanes on chain c ...
    void track_ordered(int c, const Xbyak::Xmm &x) {
        vcmpps(k_seen_ord(c) | k_seen_ord(c), x, x, cmp_ord_q);
    }
    // ... and test_ordered_nan() leaves ZF clear (jnz taken) when a lane of
    // any chain saw a NaN. Clobbers the chains.
    void test_ordered_nan() {
        kandw(k_seen_ord(0), k_seen_ord(0), k_seen_ord(1));
        kandw(k_seen_ord(2), k_seen_ord(2), k_seen_ord(3));
        kandw(k_seen_ord(0), k_seen_ord(0), k_seen_ord(2));
        knotw(k_seen_ord(0), k_seen_ord(0));
        kortestw(k_seen_ord(0), k_seen_ord(0));
    }
    // f32: (V)MAXPS raises the invalid-operation flag (MXCSR.IE) when
    // either operand is a NaN, quiet or signalling, so a run of plain
    // maxes with memory operands tells afterwards whether it met one, at
    // no cost per vector. fp_env_enter() (at entry: it pushes 8 bytes)
    // keeps the caller's MXCSR and runs with every exception masked (no
    // SIGFPE where the caller unmasked one) and the flags clear;
    // fp_env_leave() restores the caller's, flags included, so a kernel
    // leaves no trace in the caller's floating-point environment.
    // fp_env_enter() clobbers eax.
    void fp_env_enter();
    void fp_env_leave();
    // ZF clear (jnz taken) when a max met a NaN since the flags were last
    // cleared; clear_fp_flags() clears them. Both use the red zone.
    void test_invalid_flag();
    void clear_fp_flags();
    // AVX-512 only: as nanmax on the lanes of k_tail_, others untouched.
    void nanmax_tail(const Xbyak::Xmm &a, const Xbyak::Xmm &b);
    // k_tail_ (or k) = the low `count` lanes (count in a 64-bit reg) of 16
    // (f32) or 32 (16-bit) lanes. Clobbers eax.
    void set_tail_mask(const Xbyak::Reg64 &count, int lanes = 16) {
        set_tail_mask(k_tail_, count, lanes);
    }
    void set_tail_mask(const Xbyak::Opmask &k, const Xbyak::Reg64 &count, int lanes);

    // --- bf16/f16: 16-bit lanes (32 per zmm, 16 per ymm) ---
    // No widening: the kernels keep a signed max, an unsigned min and an
    // unsigned max of the raw bits, and the inner rows fold lanes on
    // to_key16 keys (design.md). Every kernel kind, both ISAs.
    bool raw16() const { return ssz() == 2; }
    // 16-bit lanes per vector register.
    int vlen16() const { return 2 * vlen(); }
    // A whole vector of raw bits from memory (any lanes).
    void load_raw(const Xbyak::Xmm &to, const Xbyak::Address &from) {
        if (is512()) vmovdqu32(to, from);
        else vmovdqu(to, from);
    }
    // Integer register copy and zeroing, EVEX on AVX-512 (any register),
    // VEX on AVX2.
    void copy16(const Xbyak::Xmm &to, const Xbyak::Xmm &from) {
        if (is512()) vmovdqa32(to, from);
        else vmovdqa(to, from);
    }
    void zero16(const Xbyak::Xmm &v) {
        if (is512()) vpxord(v, v, v);
        else vpxor(v, v, v);
    }
    // |bits| above this is NaN; the quiet NaN written; -inf.
    uint16_t nan_above() const;
    uint16_t quiet_nan() const;
    uint16_t neg_inf16() const;
    // All 16-bit lanes of v = bits (any ISA). Clobbers tmp.
    void bcast16(const Xbyak::Xmm &v, uint16_t bits,
            const Xbyak::Reg32 &tmp = Xbyak::Reg32(Xbyak::Operand::EAX));
    // The column kernels' 16-bit constants, in fixed registers: -inf
    // (zmm26; AVX2 ymm12) and the quiet NaN (zmm28; ymm13).
    // bcast16_constants() fills both; clobbers eax.
    Xbyak::Xmm c_neg_inf() const { return vmm(is512() ? 26 : 12); }
    Xbyak::Xmm c_qnan() const { return vmm(is512() ? 28 : 13); }
    void bcast16_constants() {
        bcast16(c_neg_inf(), neg_inf16());
        bcast16(c_qnan(), quiet_nan());
    }
    // AVX-512: k = the 16-bit lanes of x (a zmm or 64 bytes of memory)
    // whose bits lie above -inf's as unsigned: the negative NaNs.
    void negative_nan_lanes(const Xbyak::Opmask &k, const Xbyak::Operand &x) {
        vpcmpuw(k, c_neg_inf(), x, 1);  // less than: -inf below x
    }
    // AVX-512: four unsigned-max chains of raw 16-bit bits joined into c0,
    // then ZF clear (jnz taken) where they saw a negative NaN. Clobbers
    // k_ord_.
    void test_negative_nan_chains(const Xbyak::Xmm &c0, const Xbyak::Xmm &c1,
            const Xbyak::Xmm &c2, const Xbyak::Xmm &c3) {
        vpmaxuw(c0, c0, c1);
        vpmaxuw(c2, c2, c3);
        vpmaxuw(c0, c0, c2);
        negative_nan_lanes(k_ord_, c0);
        kortestd(k_ord_, k_ord_);
    }
    // AVX2: ZF clear (jnz taken) where a lane of an unsigned-max chain
    // lies above -inf's bits (ninf): a negative NaN. t is clobbered.
    void test_negative_nan_avx2(const Xbyak::Xmm &chain, const Xbyak::Xmm &ninf,
            const Xbyak::Xmm &t) {
        vpsubusw(t, chain, ninf);  // saturating: nonzero where above
        vptest(t, t);
    }
    // AVX2: two such chains joined into c0, then tested.
    void test_negative_nan_chains_avx2(const Xbyak::Xmm &c0, const Xbyak::Xmm &c1,
            const Xbyak::Xmm &ninf, const Xbyak::Xmm &t) {
        vpmaxuw(c0, c0, c1);
        test_negative_nan_avx2(c0, ninf, t);
    }
    // The column kernels' answer from a vector's statistics, in smax: per
    // lane the signed max, or the unsigned min where the signed max is
    // negative (the lane saw only negatives), or the quiet NaN where the
    // unsigned max is above -inf's bits (a negative NaN). Uses c_neg_inf()
    // and c_qnan() at smax's width. Clobbers k_ord_ (AVX-512) or t (AVX2).
    void select16(const Xbyak::Xmm &smax, const Xbyak::Xmm &umin,
            const Xbyak::Xmm &umax, const Xbyak::Xmm &t);
    // x = key(x) = x ^ (sign ? 0x7fff : 0) per 16-bit lane: bf16/f16 bits
    // that order like the values as signed 16-bit integers, positive NaNs
    // above +inf (negative NaNs sort low: see an unsigned max of the raw
    // bits). Its own inverse, any ISA. abs_mask holds 0x7fff lanes; t is
    // clobbered.
    void to_key16(const Xbyak::Xmm &x, const Xbyak::Xmm &t,
            const Xbyak::Xmm &abs_mask);

    const kernel_config cfg_;
    // Opmasks: k1-k4 are the ordered-lane chains (k_seen_ord).
    const Xbyak::Opmask k_tail_ = Xbyak::Opmask(7);
    const Xbyak::Opmask k_ord_ = Xbyak::Opmask(6);
};

// Generates a G (a jit_generator) for cfg into buf; the generator is gone
// when this returns, the code stays in buf, read+execute. The generator
// object takes the first bytes of buf while it works (code_buffer.hpp).
template <typename G>
jit_fn generate_with(const kernel_config &cfg, code_buffer &buf) {
    constexpr size_t object_bytes = (sizeof(G) + 63) / 64 * 64;
    static_assert(object_bytes <= 4096, "the generator fits in the buffer's first page");
    auto *base = static_cast<unsigned char *>(buf.map());
    G *g = new (base) G(cfg, base + object_bytes, code_buffer::capacity - object_bytes);
    jit_fn fn = nullptr;
    try {
        fn = g->finalize();
    } catch (...) {
        g->~G();
        throw;
    }
    g->~G();
    buf.seal();
    return fn;
}

} // namespace crest::impl::jit
