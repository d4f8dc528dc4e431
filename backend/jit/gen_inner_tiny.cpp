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

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace crest::impl::jit {

using namespace Xbyak;

#define ARG(field) qword[reg_args + offsetof(inner_call, field)]

// Rows one after another, one row per output (of block_n elements), dst
// contiguous, and at least `lanes` outputs; else the other paths take the
// call (to l_skip). Up to max_rows rows an output (an outer reduced dim,
// each output's rows row_stride apart), 1 but for the permute trees. A
// NaN (f32) or negative NaN (16-bit) anywhere sends the whole call to
// the exact paths, from its start: keep where it began.
void inner_blocks_generator::tiny_rows_enter(int lanes, Label &l_skip, int max_rows) {
    mov(rax, ARG(rows));
    dec(rax);
    cmp(rax, max_rows - 1);  // unsigned: no rows at all skip too
    ja(l_skip, T_NEAR);
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

void inner_blocks_generator::tiny_row_strides() {
    mov(r8, ARG(row_stride));
    lea(r9, ptr[r8 + r8 * 2]);
    lea(r10, ptr[r8 + r8 * 4]);
}

Address inner_blocks_generator::tiny_row_address(int r, int off) const {
    static_assert(tiny_tree_max_rows <= 7, "tiny_row_address: rows 0-6");
    static const std::pair<int, int> at[] = {{8, 1}, {8, 2}, {9, 1}, {8, 4}, {10, 1}, {9, 2}};
    if (r == 0) return ptr[reg_src + off];
    return ptr[reg_src + Reg64(at[r - 1].first) * at[r - 1].second + off];
}

bool inner_blocks_generator::tiny_rows_fit() const {
    return inner_tiny_rows(cfg_.isa, cfg_.src_dt, cfg_.block_n);
}

void inner_blocks_generator::tiny_rows() {
    // AVX2: f32 rows of 2-4 and 16-bit rows of 3 by in-lane shuffles,
    // 16-bit rows of 4-16 by transposes, f32 rows of 5-7 below; 16-bit
    // rows of 2 as dwords, as AVX-512's rows of 2-3.
    if (raw16() && cfg_.block_n == 2) return tiny_rows_dwords();
    // f32 rows of 9-13 of one row an output as two halves; other calls
    // go on to the trees.
    if (tiny_rows_halves_fit()) tiny_rows_halves();
    if (!is512() && (cfg_.block_n <= 3 || (cfg_.block_n == 4 && !raw16())))
        return tiny_rows_in_lanes();
    if (!is512() && raw16()) return tiny_rows_words();
    if (raw16() && cfg_.block_n <= 3) return tiny_rows_dwords();
    // AVX-512 bf16/f16 permute and max the raw words (words).
    const bool words = raw16() && is512();
    const tiny_shape s(cfg_.block_n, words ? vlen16() : vlen());
    const int lanes = s.lanes, n = s.n, esz = ssz(), tab_esz = words ? 2 : 4;
    // Index tables: the first step's even and odd partials, then per merge
    // (p partials a row -> p / 2) its even and odd ones. A row's elements
    // past its end repeat its last one (a max is idempotent).
    std::vector<std::vector<uint32_t>> tables;
    std::vector<uint32_t> e0(lanes), o0(lanes);
    for (int r = 0; r < s.r0; ++r)
        for (int q = 0; q < s.p0; ++q) {
            const int last = r * n + n - 1;
            e0[r * s.p0 + q] = s.index_of(std::min(r * n + 2 * q, last));
            o0[r * s.p0 + q] = s.index_of(std::min(r * n + 2 * q + 1, last));
        }
    tables.push_back(e0);
    tables.push_back(o0);
    for (int p = s.p0; p > 1; p /= 2) {
        const int rows = lanes / p;  // rows a merged operand holds
        std::vector<uint32_t> e(lanes), o(lanes);
        for (int r = 0; r < 2 * rows; ++r)
            for (int q = 0; q < p / 2; ++q) {
                const int from = (r < rows ? 0 : lanes) + (r % rows) * p + 2 * q;
                e[r * (p / 2) + q] = from;
                o[r * (p / 2) + q] = from + 1;
            }
        tables.push_back(e);
        tables.push_back(o);
    }
    // At most 10 (16-bit rows of 17-31): zmm24-31, then zmm15 down. AVX2
    // (f32 rows of 2-7, at most 6): ymm15 down to ymm10.
    const int ntab = static_cast<int>(tables.size());
    auto table_reg = [&](int t) {
        if (!is512()) return vmm(15 - t);
        return t < 8 ? vmm(31 - t) : vmm(15 - (t - 8));
    };
    const Xmm a = vmm(is512() ? 16 : 7), b = vmm(is512() ? 17 : 8), t = vmm(is512() ? 18 : 9);
    // bf16/f16: the maxes compare to_key16 keys (signed order = value
    // order; positive NaNs above +inf); negative NaNs, which sort low
    // there, show in unsigned-max chains of the raw bits.
    const Xmm abs_mask = vmm(23), chain0 = vmm(21), chain1 = vmm(22);
    const Xmm a2 = vmm(19), b2 = vmm(20);  // 16-bit: a later row's loads
    // The lines form's ring of a group's aligned lines (a window reads
    // from at most three, the next starts in its last or after it) and
    // a later row's line.
    const Xmm ring[4] = {vmm(8), vmm(9), vmm(10), vmm(11)}, row_line = vmm(12);
    auto permute = [&](const Xmm &x, int tab, const Xmm &y) {
        if (words) return vpermt2w(x, table_reg(tab), y);
        if (is512()) return vpermt2ps(x, table_reg(tab), y);
        // AVX2 has one-source permutes only: each source by the table's
        // low bits, then the lanes whose index points past the first
        // source from the second (t is free in f32).
        int from_y = 0;
        for (int i = 0; i < lanes; ++i)
            if (tables[size_t(tab)][size_t(i)] >= uint32_t(lanes)) from_y |= 1 << i;
        const Ymm idx(table_reg(tab).getIdx()), xy(x.getIdx()), ty(t.getIdx());
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

    Label l_tables, l_skip, l_code;
    jmp(l_code, T_NEAR);
    align(64);
    L(l_tables);
    for (const auto &tab : tables)
        for (int i = 0; i < lanes; ++i) {
            if (words) dw(tab[size_t(i)]);
            else dd(tab[size_t(i)]);
        }
    L(l_code);
    tiny_rows_enter(lanes, l_skip, tiny_tree_max_rows);
    for (int i = 0; i < ntab; ++i) {
        const Address tab = ptr[rip + l_tables + i * lanes * tab_esz];
        if (is512()) vmovdqu32(table_reg(i), tab);
        else vmovups(table_reg(i), tab);
    }
    if (words) {
        bcast16(abs_mask, 0x7fff);
        zero16(chain0);
        zero16(chain1);
    }
    const int window_bytes = s.r0 * n * esz;
    // Row r of an output's rows: tiny_row_address, its strides set at
    // the dispatch below. The rows are unrolled: a loop over them, its
    // stride a memory operand, cost calls of 4-6 rows half their speed.
    // A later row's vector at byte off into x, maxed into acc (16-bit: the
    // raw bits, or keys, beside chain's unsigned max).
    auto max_row_in = [&](const Xmm &acc, const Xmm &x, const Xmm &chain, int r, int off,
                              bool keys) {
        if (!words) return vmaxps(acc, acc, tiny_row_address(r, off));
        vmovdqu16(x, tiny_row_address(r, off));
        vpmaxuw(chain, chain, x);
        if (keys) to_key16(x, t, abs_mask);
        vpmaxsw(acc, acc, x);
    };
    // The split form: window w's two vectors loaded where they lie, over
    // the output's rows, into a and b.
    auto window_loads = [&](int w, bool keys, int rows) {
        const int first = w * window_bytes, second = first + s.second_at() * esz;
        // One load of each (most windows split lines: f32's second
        // read of each, as a permute's memory operand, was its limit
        // at 4.2 cycles per 64 bytes).
        if (is512()) {
            vmovdqu32(a, tiny_row_address(0, first));
            vmovdqu32(b, tiny_row_address(0, second));
        } else {
            load(a, tiny_row_address(0, first), cfg_.src_dt);
            load(b, tiny_row_address(0, second), cfg_.src_dt);
        }
        if (words) {
            vpmaxuw(chain0, chain0, a);
            vpmaxuw(chain1, chain1, b);
            if (keys) {
                to_key16(a, t, abs_mask);
                to_key16(b, t, abs_mask);
            }
        }
        // The output's other rows: the same window of each, maxed
        // lane by lane into the first row's (the tree below then
        // takes all rows' elements of a row position at once).
        for (int r = 1; r < rows; ++r) {
            max_row_in(a, a2, chain0, r, first, keys);
            max_row_in(b, b2, chain1, r, second, keys);
        }
    };
    // One vector of outputs from reg_src into the returned register:
    // f32 values, 16-bit raw bits' signed maxes (keys false: the answer
    // unless a row saw only negatives) or keys' maxes back to bits.
    // rows: the call's rows an output (a form for each count).
    // lines: the group's n lines (it starts on one: n lines of lanes
    // elements), each loaded once and maxed over the output's rows, then
    // each window's vectors shifted out of two of them by valignd, where
    // the other form's loads split lines (most windows' for n not a power
    // of 2). See the note at the call's dispatch below.
    auto group = [&](bool keys, int rows, bool lines) {
        // Operands on a stack, each with its level (merges it took): a
        // first-step operand joins the one below it while they share a
        // level, so that few stay live (at most 5, for p0 = 16), in
        // zmm0-7.
        std::vector<std::pair<Xmm, int>> stack;
        std::vector<int> free_regs {7, 6, 5, 4, 3, 2, 1, 0};
        if (!is512()) free_regs.erase(free_regs.begin());  // AVX2: ymm7 is a
        int held[4] = {-1, -1, -1, -1};  // the line each ring register holds
        auto line = [&](int k) {
            const Xmm ln = ring[k % 4];
            if (held[k % 4] == k) return ln;
            held[k % 4] = k;
            vmovdqu32(ln, ptr[reg_src + k * 64]);
            if (words) {
                vpmaxuw(chain0, chain0, ln);
                if (keys) to_key16(ln, t, abs_mask);
            }
            for (int r = 1; r < rows; ++r) max_row_in(ln, row_line, chain1, r, k * 64, keys);
            return ln;
        };
        // The vector at the group's element e, into x.
        auto vector_at = [&](const Xmm &x, int e) {
            const int k = e / lanes, shift = e % lanes;
            if (shift == 0) return copy(x, line(k));
            const Xmm lo = line(k), hi = line(k + 1);
            valignd(x, hi, lo, uint8_t(words ? shift / 2 : shift));  // shift even: r0 >= 2
        };
        for (int w = 0; w < s.p0; ++w) {
            // First step: the window's first vector and the vector that
            // ends it, paired into p0 partials a row.
            const Xmm acc = vmm(free_regs.back());
            free_regs.pop_back();
            if (lines) {
                vector_at(a, w * s.r0 * n);
                vector_at(b, w * s.r0 * n + s.second_at());
            } else {
                window_loads(w, keys, rows);
            }
            copy(acc, a);
            permute(acc, 0, b);
            permute(a, 1, b);
            max(acc, a);
            stack.push_back({acc, 0});
            // Merges: two operands of rows x p partials into one of
            // 2 rows x p / 2.
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
        if (keys) to_key16(out, t, abs_mask);  // keys back to bits
        return out;
    };
    auto store_and_next = [&](const Xmm &out, Label &again) {
        tiny_rows_store_and_next(out, t, words, lanes, again);
    };
    Label l_done, l_leave;
    // The groups of a call, each output of `rows` rows.
    auto groups = [&](int rows, bool lines) {
        Label l_group;
        if (!words) {
            L(l_group);
            store_and_next(group(false, rows, lines), l_group);
            jmp(l_done, T_NEAR);
            return;
        }
        // The raw bits' signed max first (four instructions a window
        // fewer than keys: bf16 65536x7 from L2 13.2 us against 18.8); a
        // group with a row of negatives only is redone with keys, and
        // after two such groups running the call's later groups take
        // keys from the start (rows of 2 with random signs: most groups).
        // r11 counts the groups redone in a row, 2 for keys only.
        const Reg64 redone = r11;
        Label l_keys, l_keys_only;
        xor_(redone, redone);
        L(l_group);
        cmp(redone, 2);
        jae(l_keys_only, T_NEAR);
        const Xmm raw = group(false, rows, lines);
        vpmovw2m(k_ord_, raw);
        kortestd(k_ord_, k_ord_);
        jnz(l_keys, T_NEAR);
        xor_(redone, redone);
        store_and_next(raw, l_group);
        jmp(l_done, T_NEAR);
        L(l_keys);
        inc(redone);
        L(l_keys_only);
        store_and_next(group(true, rows, lines), l_group);
        jmp(l_done, T_NEAR);
    };
    // A form for each count of rows an output. AVX-512 rows of n not a
    // power of 2 take the lines form where src is on a line (then every
    // group starts on one) but for calls of one row under
    // tiny_lines_min_bytes; where src is not on a line, calls of one row
    // take the split form and others the other paths (a form for each
    // count of rows in each form outgrew the code buffer: bf16 rows of 31).
    tiny_row_strides();
    const bool by_lines = is512() && (n & (n - 1)) != 0;
    Label l_lines;
    if (by_lines) {
        Label l_split;
        test(reg_src, 63);
        jnz(l_split, T_NEAR);
        cmp(ARG(rows), 1);
        jne(l_lines, T_NEAR);
        cmp(reg_nout, int32_t(tiny_lines_min_bytes / (n * esz)));
        jge(l_lines, T_NEAR);
        L(l_split);
        cmp(ARG(rows), 1);
        jne(l_leave, T_NEAR);
        groups(1, false);
    }
    L(l_lines);
    for (int rows = 1; rows <= tiny_tree_max_rows; ++rows) {
        Label l_next;
        cmp(ARG(rows), rows);
        jne(l_next, T_NEAR);
        groups(rows, by_lines);
        L(l_next);
    }
    L(l_done);
    if (words) {
        bcast16(c_neg_inf(), neg_inf16());
        test_negative_nan_chains(chain0, chain1, chain0, chain1);
    } else {
        test_invalid_flag();
    }
    L(l_leave);  // with ZF clear: to the other paths
    tiny_rows_leave(!words, l_skip);
}

#undef ARG

} // namespace crest::impl::jit
