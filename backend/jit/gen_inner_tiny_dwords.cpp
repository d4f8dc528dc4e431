// bf16/f16 tiny rows of 2-3 on AVX-512, of 2 on AVX2 (gen_inner_blocks.hpp,
// tiny_rows_dwords(), which tiny_rows() hands them): each row's elements
// go into the high halves of dwords, low halves zero, where vmaxps orders
// them as the values (bf16: the dword is the element as a float; f16: the
// float orders like the f16 bits, as the raw pairs of
// gen_inner_blocks16.cpp). A NaN raises the invalid flag, except f16
// negative NaNs whose bits make no float NaN: the unsigned-max chains of
// the raw words show those. Either leaves the call to the exact paths.
// AVX-512 takes outputs of up to tiny_tree_max_rows rows (an outer
// reduced dim row_stride apart: NCHW reducing N and W of 3x3 maps): each
// raw vector the group reads is maxed over the output's rows first, as
// two vectors of dwords (the odd words, and the even ones shifted up,
// each in high halves: vmaxps orders them as above), merged back into
// words. Zen 4, bg_runs.sh, % of the roofline, the blocks -> this, NCHW
// 2x728177x3x3 reducing N and W (26 MB): bf16 14-17 -> 72-84, f16
// 11-13 -> 81-86; 3x485451x3x3 bf16 16 -> 79-98, f16 9-13 -> 72-92.
// The words' signed maxes that tiny_rows() keeps are the answer only for
// rows that saw a value >= +0; with random signs nearly every group of 32
// rows of 2-3 has a row of negatives only and took keys (two
// instructions a loaded vector, one of them at one a cycle on Zen 4).
// Rows of 3: three zero-masked permutes and two maxes a window of 16
// rows, one permute packs two windows' high halves; rows of 2 are
// already a dword a row (the high half masked, the low one shifted up).
// Zen 4, ab_runs.sh with two copies of each build, % of the roofline,
// keys -> dwords: rows of 3 with random signs, channels-last
// 64x3x224x224 reducing C (19 MB) bf16 51-53 -> 59-63, f16 52-54 ->
// 68-71; 349525x3 bf16 (2 MB) 44-46 -> 65; positive data tied (the
// signed maxes: 47-69 either way). Rows of 2: 524288x2 bf16 random
// 61-63 -> 63-64; at 25 MB both 38-41 (bound by writing dst, half of
// src's size). AVX2 (session 26) packs the high words of two windows
// by vpackusdw and vpermq, where it widened each row's elements (in-lane
// shuffles): capped, ab_runs.sh with two copies of each build, % of the
// roofline, 400000x2 from L2 bf16 24 -> 52-62 (all negative 24 -> 62-64),
// f16 36-37 -> 49-61; 6553600x2 (25 MiB) bf16 31-35 -> 40-52, f16
// 34-50 -> 38-67. AVX2's rows of 3 keep the in-lane shuffles: it has no
// word permutes.
#include "backend/jit/gen_inner_blocks.hpp"
#include "backend/jit/generators.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace crest::impl::jit {

using namespace Xbyak;

#define ARG(field) qword[reg_args + offsetof(inner_call, field)]

void inner_blocks_generator::tiny_rows_dwords() {
    const int n = cfg_.block_n, lanes = vlen16(), half = lanes / 2;
    // A window of 16 rows: rows of 3 in the vector at its start and the
    // one that ends it (16 words on), as the permutes' first step takes
    // them (tiny_shape: 16 rows of 3 a window); rows of 2 in one vector.
    const tiny_shape s(n, lanes);
    const int window_bytes = half * n * 2, second_at = n == 3 ? s.second_at() : 0;
    // Tables: per element k of a row (rows of 3), word 2r + 1 takes row
    // r's element k from (first, second); then the pack, word i the high
    // half of dword i % 16 of window i / 16.
    std::vector<std::vector<uint16_t>> tables;
    if (n == 3) {
        for (int k = 0; k < 3; ++k) {
            std::vector<uint16_t> t(size_t(lanes), 0);
            for (int r = 0; r < half; ++r) t[size_t(2 * r + 1)] = uint16_t(s.index_of(r * n + k));
            tables.push_back(t);
        }
    }
    std::vector<uint16_t> pack(static_cast<size_t>(lanes));
    for (int i = 0; i < lanes; ++i)
        pack[size_t(i)] = uint16_t((i / half) * lanes + 2 * (i % half) + 1);
    tables.push_back(pack);
    auto table_reg = [&](int t) { return vmm(31 - t); };
    const bool avx512 = is512();  // AVX2: rows of 2 only
    const Xmm pack_reg = avx512 ? table_reg(static_cast<int>(tables.size()) - 1) : vmm(7);
    const Xmm a = vmm(avx512 ? 16 : 2), b = vmm(17), x = vmm(avx512 ? 18 : 3), y = vmm(19);
    const Xmm high_mask = vmm(avx512 ? 20 : 4);
    const Xmm chain0 = vmm(avx512 ? 21 : 5), chain1 = vmm(avx512 ? 22 : 6);
    const Opmask k_high = Opmask(1);  // the dwords' high words
    const bool chains = f16_bits();

    Label l_tables, l_code, l_skip, l_tested;
    if (avx512) {  // AVX2 packs by vpackusdw and vpermq: no tables
        jmp(l_code, T_NEAR);
        align(64);
        L(l_tables);
        for (const auto &t : tables)
            for (uint16_t w : t) dw(w);
        L(l_code);
    }
    const int max_rows = avx512 ? tiny_tree_max_rows : 1;
    tiny_rows_enter(lanes, l_skip, max_rows);
    if (max_rows > 1) tiny_row_strides();
    if (avx512) {
        for (size_t i = 0; i < tables.size(); ++i)
            vmovdqu32(table_reg(int(i)), ptr[rip + l_tables + int(i) * lanes * 2]);
        mov(eax, 0xaaaaaaaa);
        kmovd(k_high, eax);
    }
    bcast16(high_mask, 0xffff);  // 0xffffffff: then the low words cleared
    vpslld(high_mask, high_mask, 16);
    if (chains) {
        zero16(chain0);
        zero16(chain1);
    }
    // v, row 0's raw words at byte off of the group, maxed word by word
    // over the output's other rows (AVX-512): the odd words and the even
    // ones shifted up, each in dwords' high halves, by vmaxps; then merged.
    const Xmm odd = vmm(2), even = vmm(3), t = vmm(4), t2 = vmm(5);
    auto max_rows_in = [&](const Xmm &v, int off, int rows, const Xmm &chain) {
        if (rows == 1) return;
        vpandd(odd, v, high_mask);
        vpslld(even, v, 16);
        for (int r = 1; r < rows; ++r) {
            vmovdqu32(t, tiny_row_address(r, off));
            if (chains) vpmaxuw(chain, chain, t);
            vpandd(t2, t, high_mask);
            vmaxps(odd, odd, t2);
            vpslld(t, t, 16);
            vmaxps(even, even, t);
        }
        vpsrld(even, even, 16);
        vpord(v, odd, even);
    };
    // lines (AVX-512 rows of 3, src on a line, calls of one row from 1
    // MiB, of several rows always): a group of 32 rows is 3 lines, each
    // loaded once; the windows' vectors that split a line (the first
    // window's second, the second's first) are `valignd` of two lines, as
    // the trees do (gen_inner_tiny.cpp). rows: the call's rows an output
    // (a form for each count).
    auto group = [&](bool lines, int rows, Label &again) {
        const Xmm ln[3] = {vmm(24), vmm(25), vmm(26)}, shifted = vmm(27);
        if (lines) {
            for (int k = 0; k < 3; ++k) {
                const Xmm &chain = k == 1 ? chain1 : chain0;
                vmovdqu32(ln[k], ptr[reg_src + k * 64]);
                if (chains) vpmaxuw(chain, chain, ln[k]);
                max_rows_in(ln[k], k * 64, rows, chain);
            }
        }
        for (int w = 0; w < 2; ++w) {
            const Xmm out = vmm(w);
            Xmm first = a, second = b;
            if (lines) {
                valignd(shifted, ln[w + 1], ln[w], 8);  // 16 words on
                first = w == 0 ? ln[0] : shifted;
                second = w == 0 ? shifted : ln[2];
            } else {
                load_raw(a, ptr[reg_src + w * window_bytes]);
                if (n == 3) vmovdqu32(b, ptr[reg_src + w * window_bytes + second_at * 2]);
                if (chains) {
                    vpmaxuw(chain0, chain0, a);
                    if (n == 3) vpmaxuw(chain1, chain1, b);
                }
                max_rows_in(a, w * window_bytes, rows, chain0);
                if (n == 3) max_rows_in(b, w * window_bytes + second_at * 2, rows, chain1);
            }
            if (n == 2) {
                if (avx512) vpandd(x, a, high_mask);
                else vpand(x, a, high_mask);
                vpslld(out, a, 16);
                vmaxps(out, out, x);
                continue;
            }
            // Element k of each row, as a float: a copy of the first vector
            // permuted with the second, its low words zeroed.
            auto element = [&](const Xmm &to, int k) {
                vmovdqa32(to, first);
                vpermt2w(to | k_high | T_z, table_reg(k), second);
            };
            element(x, 0);
            element(y, 1);
            vmaxps(x, x, y);
            element(y, 2);
            vmaxps(out, x, y);
        }
        if (avx512) {
            vpermt2w(vmm(0), pack_reg, vmm(1));
        } else {
            // The high words down, packed in-lane (0-3 | 8-11 | 4-7 | 12-15
            // in qwords), then the qwords in order.
            vpsrld(vmm(0), vmm(0), 16);
            vpsrld(vmm(1), vmm(1), 16);
            vpackusdw(vmm(0), vmm(0), vmm(1));
            vpermq(Ymm(0), Ymm(0), 0xd8);
        }
        tiny_rows_store_and_next(vmm(0), x, true, lanes, again);
    };
    Label l_lines, l_done;
    // A form for each count of rows in each of the two forms.
    auto forms = [&](bool lines) {
        for (int rows = 1; rows <= max_rows; ++rows) {
            Label l_next, l_again;
            if (max_rows > 1) {
                cmp(ARG(rows), rows);
                jne(l_next, T_NEAR);
            }
            L(l_again);
            group(lines, rows, l_again);
            jmp(l_done, T_NEAR);
            L(l_next);
        }
    };
    const bool by_lines = avx512 && n == 3;
    if (by_lines) {
        Label l_split;
        test(reg_src, 63);
        jnz(l_split, T_NEAR);
        cmp(ARG(rows), 1);
        jne(l_lines, T_NEAR);
        cmp(reg_nout, int32_t(tiny_lines_min_bytes / (n * 2)));
        jge(l_lines, T_NEAR);
        L(l_split);
    }
    forms(false);
    if (by_lines) {
        L(l_lines);
        forms(true);
    }
    L(l_done);
    if (chains) {
        if (avx512) {
            bcast16(c_neg_inf(), neg_inf16());
            test_negative_nan_chains(chain0, chain1, chain0, chain1);
        } else {
            bcast16(pack_reg, neg_inf16());
            test_negative_nan_chains_avx2(chain0, chain1, pack_reg, x);
        }
        jnz(l_tested, T_NEAR);  // a negative NaN: ZF clear
    }
    test_invalid_flag();
    L(l_tested);
    tiny_rows_leave(true, l_skip);
}

#undef ARG

} // namespace crest::impl::jit
