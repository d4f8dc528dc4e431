// The `inner` family's tiny rows (gen_inner_blocks.hpp, tiny_rows()):
// AVX-512 rows of 2-16 f32 or 2-31 bf16/f16 elements, AVX2 rows of 2-7
// (bf16/f16: 2-16), one row per output, the rows and dst contiguous. A
// block of 16 outputs would hold one short row per register and fold 16
// of them; here the rows stay in memory order instead, and two-source
// permutes pair up elements of the same row, halving the lanes per row at
// each step, until one vector holds a vector of outputs (16 f32, 32
// bf16/f16). AVX2's rows of 2-4 take in-lane shuffles instead
// (gen_inner_tiny_lanes.cpp), but its 16-bit rows of 4-16 transposes
// (gen_inner_tiny_words.cpp); 16-bit rows of 2-3 on AVX-512, of 2 on
// AVX2, float maxes of dwords (gen_inner_tiny_dwords.cpp).
#include "backend/jit/gen_inner_blocks.hpp"
#include "backend/jit/generators.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace crest::impl::jit {

using namespace Xbyak;

#define ARG(field) qword[reg_args + offsetof(inner_call, field)]

// Rows one after another, one row per output (of block_n elements), dst
// contiguous, and at least `lanes` outputs; else the other paths take the
// call (to l_skip). A NaN (f32) or negative NaN (16-bit) anywhere sends
// the whole call to the exact paths, from its start: keep where it began.
void inner_blocks_generator::tiny_rows_enter(int lanes, Label &l_skip) {
    cmp(ARG(rows), 1);
    jne(l_skip, T_NEAR);
    cmp(ARG(out_src_stride), cfg_.block_n * ssz());
    jne(l_skip, T_NEAR);
    cmp(ARG(out_dst_stride), ssz());
    jne(l_skip, T_NEAR);
    cmp(ARG(accumulate), 0);
    jne(l_skip, T_NEAR);
    cmp(reg_nout, lanes);
    jl(l_skip, T_NEAR);
    push(reg_src);
    push(reg_dst);
    push(reg_nout);
}

// With ZF clear (a NaN seen), back to where the call began for the other
// paths (clearing the invalid flag where the check read it); else on
// with the outputs left.
void inner_blocks_generator::tiny_rows_leave(bool clear_flags, Label &l_skip) {
    Label l_clean;
    if (cfg_.stream_dst) sfence();  // the streamed lines before any later store or the join
    jz(l_clean, T_NEAR);
    pop(reg_nout);
    pop(reg_dst);
    pop(reg_src);
    if (clear_flags) clear_fp_flags();
    jmp(l_skip, T_NEAR);
    L(l_clean);
    add(rsp, 3 * 8);
    L(l_skip);
}

// A vector of `lanes` outputs (16-bit words: raw bits) to reg_dst, exact:
// each max is an input; then on to the next group (to `again`) while a
// whole one is left. With stream_dst, non-temporal where reg_dst is
// aligned to the store (then every store of the call is: outputs advance
// by it).
void inner_blocks_generator::tiny_rows_store_and_next(const Xmm &out, const Xmm &tmp,
        bool words, int lanes, Label &again) {
    auto plain = [&] {
        if (words && is512()) vmovdqu16(ptr[reg_dst], out);
        else if (words) vmovdqu(ptr[reg_dst], out);
        else store(ptr[reg_dst], out, cfg_.src_dt, tmp);
    };
    Label l_plain, l_stored;
    if (cfg_.stream_dst) {
        test(reg_dst, (words ? vlen16() : vlen()) * ssz() - 1);
        jnz(l_plain, T_NEAR);
        if (words) vmovntdq(ptr[reg_dst], out);
        else store_stream(ptr[reg_dst], out, cfg_.src_dt, tmp);
        jmp(l_stored, T_NEAR);
    }
    L(l_plain);
    plain();
    L(l_stored);
    add(reg_src, lanes * cfg_.block_n * ssz());
    add(reg_dst, lanes * ssz());
    sub(reg_nout, lanes);
    cmp(reg_nout, lanes);
    jge(again, T_NEAR);
}

bool inner_blocks_generator::tiny_rows_fit() const {
    return inner_tiny_rows(cfg_.isa, cfg_.src_dt, cfg_.block_n);
}

void inner_blocks_generator::tiny_rows() {
    // AVX2: f32 rows of 2-4 and 16-bit rows of 3 by in-lane shuffles,
    // 16-bit rows of 4-16 by transposes, f32 rows of 5-7 below; 16-bit
    // rows of 2 as dwords, as AVX-512's rows of 2-3.
    if (raw16() && cfg_.block_n == 2) return tiny_rows_dwords();
    if (!is512() && (cfg_.block_n <= 3 || (cfg_.block_n == 4 && !raw16())))
        return tiny_rows_in_lanes();
    if (!is512() && raw16()) return tiny_rows_words();
    if (raw16() && cfg_.block_n <= 3) return tiny_rows_dwords();
    // AVX-512 bf16/f16 permute and max the raw words (words).
    const bool words = raw16() && is512();
    const permute_tree s = permute_tree::rows(cfg_.block_n, words ? vlen16() : vlen());
    const int lanes = s.lanes, tab_esz = words ? 2 : 4;
    const std::vector<std::vector<uint32_t>> tables = s.tables();
    // At most 10 (16-bit rows of 17-31): zmm24-31, then zmm15 down. AVX2
    // (f32 rows of 2-7, at most 6): ymm15 down to ymm10.
    const int ntab = static_cast<int>(tables.size());
    auto table_reg = [this](int t) {
        if (!is512()) return vmm(15 - t);
        return t < 8 ? vmm(31 - t) : vmm(15 - (t - 8));
    };
    // bf16/f16: the maxes compare to_key16 keys (signed order = value
    // order; positive NaNs above +inf); negative NaNs, which sort low
    // there, show in unsigned-max chains of the raw bits. Operands in
    // zmm0-7 (AVX2: ymm0-6, ymm7 is a).
    permute_tree_regs regs {vmm(is512() ? 16 : 7), vmm(is512() ? 17 : 8), vmm(is512() ? 18 : 9),
            vmm(21), vmm(22), vmm(23), table_reg, {7, 6, 5, 4, 3, 2, 1, 0}};
    if (!is512()) regs.operands.erase(regs.operands.begin());

    Label l_tables, l_skip, l_group, l_code;
    jmp(l_code, T_NEAR);
    align(64);
    L(l_tables);
    for (const auto &tab : tables)
        for (int i = 0; i < lanes; ++i) {
            if (words) dw(tab[size_t(i)]);
            else dd(tab[size_t(i)]);
        }
    L(l_code);
    tiny_rows_enter(lanes, l_skip);
    for (int i = 0; i < ntab; ++i) {
        const Address tab = ptr[rip + l_tables + i * lanes * tab_esz];
        if (is512()) vmovdqu32(table_reg(i), tab);
        else vmovups(table_reg(i), tab);
    }
    if (words) {
        bcast16(regs.abs_mask, 0x7fff);
        zero16(regs.chain0);
        zero16(regs.chain1);
    }
    const int window_bytes = s.r0 * s.n * ssz();
    auto group = [&](bool keys) {
        return permute_tree_group(s, tables, regs, reg_src, window_bytes, words, keys);
    };
    auto store_and_next = [&](const Xmm &out, Label &again) {
        tiny_rows_store_and_next(out, regs.t, words, lanes, again);
    };
    if (!words) {
        L(l_group);
        store_and_next(group(false), l_group);
    } else {
        permute_tree_words(group, r11, store_and_next);
    }
    if (words) {
        bcast16(c_neg_inf(), neg_inf16());
        test_negative_nan_chains(regs.chain0, regs.chain1, regs.chain0, regs.chain1);
    } else {
        test_invalid_flag();
    }
    tiny_rows_leave(!words, l_skip);
}

#undef ARG

} // namespace crest::impl::jit
