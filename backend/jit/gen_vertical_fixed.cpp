// `vert_reg` fixed blocks (gen_vertical_reg.hpp, "Fixed blocks"; their
// two slices a ymm and staged dst in gen_vertical_fixed_slices.cpp): slices
// of few rows, NCHW reducing H of 7x7 or 14x14 maps (where the general
// loop spends more instructions on its row loop, sets and tail than on
// the rows) and, for 16-bit tiles, channels-last reducing W or H.
#include <cstddef>

#include "backend/jit/gen_vertical_reg.hpp"
#include "backend/jit/generators.hpp"

namespace crest::impl::jit {

using namespace Xbyak;

#define ARG(field) qword[reg_args + offsetof(vert_call, field)]

int vertical_reg_generator::fixed_width() const {
    const int bytes = cfg_.block_cols * ssz();
    return bytes <= 16 ? 16 : bytes <= 32 || !is512() ? 32 : 64;
}

int vertical_reg_generator::fixed_vectors() const {
    const int w = fixed_width();
    return (cfg_.block_cols * ssz() + w - 1) / w;
}

bool vertical_reg_generator::fixed_masked(int i) const {
    return i == fixed_vectors() - 1 && cfg_.block_cols * ssz() % fixed_width() != 0;
}

Xbyak::Xmm vertical_reg_generator::fw(int idx) const {
    switch (fixed_width()) {
        case 16: return Xmm(idx);
        case 32: return Ymm(idx);
        default: return Zmm(idx);
    }
}

Address vertical_reg_generator::fixed_row(int r, int disp) const {
    const Reg64 bases[] = {reg_src, r8, r9, rax};
    const Reg64 base = bases[r / 4];
    switch (r % 4) {
        case 0: return ptr[base + disp];
        case 1: return ptr[base + reg_rs + disp];
        case 2: return ptr[base + reg_rs * 2 + disp];
        default: return ptr[base + r11 + disp];
    }
}

bool fixed_blocks_accumulate(const kernel_config &cfg) {
    return cfg.isa == isa_t::avx512_core
            || (cfg.block_row_stride == 0 && cfg.src_dt == data_type::f32);
}

int64_t fixed_batch_most(const kernel_config &cfg) {
    return fixed_keyed_fits(cfg) || (cfg.block_batch && fixed_runs_fits(cfg))
            ? fixed_copy_max_batch : 4;
}

bool vertical_reg_generator::fixed_accumulates() const {
    return fixed_blocks_accumulate(cfg_);
}

void vertical_reg_generator::fixed_when_accumulating(const std::function<void()> &body) {
    if (!fixed_accumulates() || fresh_slices_) return;
    Label l_fresh;
    cmp(ARG(accumulate), 0);
    je(l_fresh, T_NEAR);
    body();
    L(l_fresh);
}

void vertical_reg_generator::fixed_entry(const Label &general) {
    const int R = cfg_.block_rows;
    // Calls of another block go to `other`.
    auto this_block = [&](const Label &other) {
        cmp(ARG(rows), R);
        jne(other, T_NEAR);
        cmp(ARG(ncols), cfg_.block_cols);
        jne(other, T_NEAR);
    };
    if (batched()) {
        Label l_one;
        cmp(ARG(batch), 1);
        jle(l_one, T_NEAR);
        this_block(l_refuse_);
        L(l_one);
    }
    if (!fixed_accumulates()) {
        cmp(ARG(accumulate), 0);
        jne(general, T_NEAR);
    }
    this_block(general);
    const int lanes = fixed_width() / ssz();
    const int tail = cfg_.block_cols - (fixed_vectors() - 1) * lanes;
    if (is512()) {
        mov(eax, tail >= 32 ? -1 : static_cast<int>((1u << tail) - 1));
        kmovd(k_tail_, eax);
    } else if (!raw16()) {
        vmovups(fixed_mask(), ptr[rip + l_avx2_mask_ + (8 - tail) * 4]);
    }
    Label l_slice, l_slices_done, l_done;
    lea(r11, ptr[reg_rs + reg_rs * 2]);
    // Groups of up to fixed_group_max vectors: the full ones in a loop
    // (reg_fixed_cnt), then the rest, which holds the masked vector if any.
    const int nvec = fixed_vectors();
    int groups = nvec / fixed_group_max(), rest = nvec % fixed_group_max();
    if (rest == 0) {
        --groups;
        rest = fixed_group_max();
    }
    const int group_bytes = fixed_group_max() * fixed_width();
    auto group = [&](int n, bool masked_last) {
        if (raw16()) fixed_group16(n, masked_last);
        else fixed_group_f32(n, masked_last);
    };
    // One slice at reg_src into reg_dst, both then moved to the next.
    auto one_slice = [&] {
        if (groups > 0) {
            Label l_group;
            mov(reg_fixed_cnt, groups);
            L(l_group);
            group(fixed_group_max(), false);
            add(reg_src, group_bytes);
            add(reg_dst, group_bytes);
            dec(reg_fixed_cnt);
            jnz(l_group, T_NEAR);
        }
        group(rest, fixed_masked(nvec - 1));
        if (groups > 0) {
            sub(reg_src, groups * group_bytes);
            sub(reg_dst, groups * group_bytes);
        }
        add(reg_src, ARG(outer_src_stride));
        add(reg_dst, ARG(outer_dst_stride));
    };
    // The reg_outer (at least 1) slices left, written at reg_dst.
    auto slices = [&] {
        Label l_slice, l_all;
        if (packed_slices() > 1) {
            fixed_packed();
            test(reg_outer, reg_outer);
            jz(l_all, T_NEAR);
        }
        if (fixed_lines()) fixed_lines_entry(one_slice, l_slice, l_all);  // nvec 1
        if (groups > 0) push(reg_fixed_cnt);
        L(l_slice);
        one_slice();
        dec(reg_outer);
        jnz(l_slice, T_NEAR);
        if (groups > 0) pop(reg_fixed_cnt);
        L(l_all);
    };
    if (batched()) {
        push(reg_batch);
        push(reg_batch_src);
    }
    if (fixed_runs_fit()) fixed_runs();
    if (fixed_keyed_fit()) fixed_keyed();
    if (fixed_streams() || fixed_joins_staged()) {
        // A streamed stage holds no dst to accumulate into: such calls
        // join theirs, or store as they go.
        Label l_unstaged, l_join;
        if (fixed_accumulates()) {
            cmp(ARG(accumulate), 0);
            jne(l_join, T_NEAR);
        }
        if (fixed_streams()) {
            fixed_staged(slices, false);
            test(reg_outer, reg_outer);
            jz(l_slices_done, T_NEAR);
        }
        jmp(l_unstaged, T_NEAR);
        L(l_join);
        if (fixed_joins_staged()) {
            fresh_slices_ = true;
            fixed_staged(slices, true);
            fresh_slices_ = false;
            test(reg_outer, reg_outer);
            jz(l_slices_done, T_NEAR);
        }
        L(l_unstaged);
    }
    slices();
    L(l_slices_done);
    if (batched()) {
        pop(reg_batch_src);
        pop(reg_batch);
    }
    if (!raw16()) {
        redo_after_nan(general, l_done);
    }
    L(l_done);
}

void vertical_reg_generator::dense_enter() {
    push(reg_src);
    push(reg_dst);
    push(reg_outer);
}

void vertical_reg_generator::dense_leave(const Xmm &chain0, const Xmm &chain1, bool chains) {
    Label l_nan, l_done;
    if (chains) {
        test_negative_nan_chains(chain0, chain1, chain0, chain1);
        jnz(l_nan, T_NEAR);
    }
    add(rsp, 3 * 8);
    jmp(l_done, T_NEAR);
    L(l_nan);
    pop(reg_outer);
    pop(reg_dst);
    pop(reg_src);
    L(l_done);
}

void vertical_reg_generator::redo_after_nan(const Label &general, const Label &done) {
    // A NaN somewhere: the general loop redoes the call from the start.
    // Fresh, dst holds nothing it needs; accumulating, each output
    // written is the max of its old value (a NaN kept: vmaxps returns
    // its memory operand) and some of its rows, and a max is
    // idempotent.
    test_invalid_flag();
    jz(done, T_NEAR);
    clear_fp_flags();
    mov(reg_src, ARG(src));
    mov(reg_dst, ARG(dst));
    mov(reg_outer, ARG(n_outer));
    general_or_refuse(general);
}

void vertical_reg_generator::general_or_refuse(const Label &general) {
    if (batched()) {
        cmp(ARG(batch), 1);
        jg(l_refuse_, T_NEAR);
    }
    jmp(general, T_NEAR);
}

void vertical_reg_generator::over_batch(const std::function<void(bool)> &rows) {
    rows(true);
    if (!batched()) return;
    Label l_next, l_done;
    mov(reg_batch, ARG(batch));
    sub(reg_batch, 1);
    jle(l_done, T_NEAR);
    mov(reg_batch_src, reg_src);
    L(l_next);
    add(reg_src, ARG(batch_stride));
    rows(false);
    dec(reg_batch);
    jnz(l_next, T_NEAR);
    mov(reg_src, reg_batch_src);
    L(l_done);
}

void vertical_reg_generator::status_exit() {
    if (!batched()) return;
    Label l_exit;
    xor_(eax, eax);
    jmp(l_exit, T_NEAR);
    L(l_refuse_);
    mov(eax, 1);
    L(l_exit);
}

void vertical_reg_generator::fixed_bases() {
    const int R = cfg_.block_rows;
    if (R > 4) lea(r8, ptr[reg_src + reg_rs * 4]);
    if (R > 8) lea(r9, ptr[r8 + reg_rs * 4]);
    if (R > 12) lea(rax, ptr[r9 + reg_rs * 4]);
}

void vertical_reg_generator::fixed_group_f32(int nvec, bool masked_last) {
    const int w = fixed_width();
    const int last = cfg_.block_rows - 1;
    // A row before the last is read whole where that ends inside the next
    // row, as the 16-bit blocks do (fixed_group16): a NaN in its junk
    // lanes only sends the call to the general loop. The other rows take
    // vmaskmovps (AVX2, slow on Zen 4) or a masked operand (AVX-512,
    // several loads' cost on AMD).
    const bool whole = w <= 2 * cfg_.block_cols * ssz();
    auto tail_vec = [&](int i, int r = 0) {
        return masked_last && i == nvec - 1 && (r == last || !whole);
    };
    auto a = [&](int r, int i) { return fw((r % 2) * nvec + i); };
    over_batch([&](bool first) {
        fixed_bases();
        for (int r = 0; r < cfg_.block_rows; ++r) {
            const bool sets = first && r < 2;  // the row starts its set
            for (int i = 0; i < nvec; ++i) {
                const Address src = fixed_row(r, i * w);
                const Xmm v = a(r, i);
                if (!tail_vec(i, r)) {
                    if (sets) vmovups(v, src);
                    else vmaxps(v, v, src);
                } else if (is512()) {
                    if (sets) vmovups(v | k_tail_ | T_z, src);
                    else vmaxps(v | k_tail_, v, src);
                } else if (sets) {
                    vmaskmovps(v, fixed_mask(), src);  // lanes past the columns 0, unread
                } else {
                    vmaskmovps(fixed_temp(), fixed_mask(), src);
                    vmaxps(v, v, fixed_temp());
                }
            }
        }
    });
    // Junk lanes (zero, or the next row's) are never stored.
    for (int i = 0; i < nvec; ++i) vmaxps(a(0, i), a(0, i), a(1, i));
    // dst's outputs last, as memory operands: a NaN there is what vmaxps
    // returns.
    fixed_when_accumulating([&] {
        for (int i = 0; i < nvec; ++i) {
            const Address d = ptr[reg_dst + i * w];
            if (!tail_vec(i, last)) {
                vmaxps(a(0, i), a(0, i), d);
            } else if (is512()) {
                vmaxps(a(0, i) | k_tail_, a(0, i), d);
            } else {
                vmaskmovps(fixed_temp(), fixed_mask(), d);
                vmaxps(a(0, i), a(0, i), fixed_temp());
            }
        }
    });
    for (int i = 0; i < nvec; ++i) {
        const Address d = ptr[reg_dst + i * w];
        if (!tail_vec(i, last)) vmovups(d, a(0, i));
        else if (is512()) vmovups(d | k_tail_, a(0, i));
        else vmaskmovps(d, fixed_mask(), a(0, i));
    }
}

void vertical_reg_generator::fixed_group16(int nvec, bool masked_last) {
    const int w = fixed_width(), last = cfg_.block_rows - 1;
    auto tail_vec = [&](int i) { return masked_last && i == nvec - 1; };
    // AVX-512: statistics of up to 8 vectors in zmm0-23; AVX2: of up to 4
    // in ymm0-11 (its constants in 12-13).
    const int n = fixed_group_max();
    auto s = [&](int i) { return fw(i); };
    auto u = [&](int i) { return fw(n + i); };
    auto m = [&](int i) { return fw(2 * n + i); };
    const Xmm t = fw(is512() ? 29 : 15);
    // A row's whole vector ends inside the next row only where it is at
    // most twice the columns' bytes (rows at least their columns apart):
    // narrower blocks (3 columns or fewer in an xmm) mask every row on
    // AVX-512 and take no fixed blocks on AVX2 (plan_kernels.cpp).
    const bool whole = w <= 2 * cfg_.block_cols * ssz();
    over_batch([&](bool first) {
        fixed_bases();
        if (first) {
            for (int i = 0; i < nvec; ++i) {
                if (tail_vec(i) && !whole) vmovdqu16(s(i) | k_tail_ | T_z, fixed_row(0, i * w));
                else load_raw(s(i), fixed_row(0, i * w));
                copy16(u(i), s(i));
                copy16(m(i), s(i));
            }
        }
        for (int r = first ? 1 : 0; r <= last; ++r) {
            for (int i = 0; i < nvec; ++i) {
                const Address src = fixed_row(r, i * w);
                // One load a row: three memory operands were three L1 reads.
                const Xmm x = fw(is512() ? row_temp((r % 2) * 2 + i % 2) : 14);
                if ((r == last || !whole) && tail_vec(i)) {
                    if (is512()) vmovdqu16(x | k_tail_ | T_z, src);
                    else fixed_tail_avx2(x, r, i * w, t);
                } else {
                    load_raw(x, src);
                }
                vpmaxsw(s(i), s(i), x);
                vpmaxuw(u(i), u(i), x);
                vpminuw(m(i), m(i), x);
            }
        }
    });
    // dst's outputs as one more row (AVX-512 only: its masked load).
    fixed_when_accumulating([&] {
        for (int i = 0; i < nvec; ++i) {
            const Address d = ptr[reg_dst + i * w];
            const Xmm x = fw(row_temp(i % 2));
            if (tail_vec(i)) vmovdqu16(x | k_tail_ | T_z, d);
            else load_raw(x, d);
            vpmaxsw(s(i), s(i), x);
            vpmaxuw(u(i), u(i), x);
            vpminuw(m(i), m(i), x);
        }
    });
    for (int i = 0; i < nvec; ++i) {
        select16(s(i), m(i), u(i), t);
        const Address d = ptr[reg_dst + i * w];
        if (is512()) store16(d, s(i), tail_vec(i));
        else if (!tail_vec(i)) vmovdqu(d, s(i));
        else store_bytes(reg_dst + i * w, s(i), fixed_tail_bytes(), t);
    }
}

int vertical_reg_generator::fixed_tail_bytes() const {
    return cfg_.block_cols * ssz() - (fixed_vectors() - 1) * fixed_width();
}

void vertical_reg_generator::fixed_tail_avx2(const Xmm &x, int r, int disp, const Xmm &t) {
    // The vector that ends at the row's end, shifted down to the columns'
    // lanes: the bytes before it are this row's or the row before's
    // (block_rows >= 2, rows at least their columns apart), never past
    // the slice. Lanes above the columns come in as zeros, never stored.
    const int tb = fixed_tail_bytes();
    if (tb <= 16) {
        const Xmm h(x.getIdx());  // a VEX xmm load clears the upper half
        vmovdqu(h, fixed_row(r, disp + tb - 16));
        if (tb < 16) vpsrldq(h, h, 16 - tb);
        return;
    }
    const Ymm y(x.getIdx()), ty(t.getIdx());
    vmovdqu(y, fixed_row(r, disp + tb - 32));
    if (tb == 32) return;
    vperm2i128(ty, y, y, 0x81);  // high half down, zeros above
    vpalignr(y, ty, y, 32 - tb);  // both halves shifted down as one
}

#undef ARG

} // namespace crest::impl::jit
