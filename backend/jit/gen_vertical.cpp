// The `vertical` family (gen_vertical.hpp): tiles, passes, the lanes'
// modes and the walk along a tile's columns. The straight groups' bodies
// are in gen_vertical_straight.cpp, the skewed blocks in
// gen_vertical_skew.cpp.
#include "backend/jit/gen_vertical.hpp"

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "backend/jit/generators.hpp"

namespace crest::impl::jit {

using namespace Xbyak;

#define ARG(field) qword[reg_args + offsetof(vert_call, field)]

void vertical_generator::generate() {
    push(rbx); push(rbp); push(r12); push(r13); push(r14); push(r15);
    if (nan_by_flags()) fp_env_enter();
    mov(reg_rs, ARG(row_stride));
    mov(reg_src, ARG(src));
    mov(reg_dst, ARG(dst));
    mov(reg_outer, ARG(n_outer));
    if (raw16()) bcast16_constants();
    if (raw16() && is512()) {
        kxord(k_neg_mode, k_neg_mode, k_neg_mode);
        kxord(k_mixed_mode, k_mixed_mode, k_mixed_mode);
        kxord(k_slow_before, k_slow_before, k_slow_before);
        mov(eax, 1);
        kmovd(k_one, eax);
        lane_modes(true);
    }
    Label l_outer;
    L(l_outer);
    {
        mov(reg_tsrc, reg_src);
        mov(reg_tdst, reg_dst);
        mov(reg_left, ARG(ncols));
        Label l_tile;
        L(l_tile);
        {
            mov(reg_tcols, vertical_tile_cols(cfg_));
            cmp(reg_left, reg_tcols);
            cmovl(reg_tcols, reg_left);
            push(reg_outer); push(reg_left); push(reg_tsrc);
            push(reg_src); push(reg_dst);
            tile();
            pop(reg_dst); pop(reg_src);
            pop(reg_tsrc); pop(reg_left); pop(reg_outer);
            add(reg_tsrc, vertical_tile_cols(cfg_) * ssz());
            add(reg_tdst, vertical_tile_cols(cfg_) * dsz());
            sub(reg_left, vertical_tile_cols(cfg_));
            jg(l_tile, T_NEAR);
        }
        add(reg_src, ARG(outer_src_stride));
        add(reg_dst, ARG(outer_dst_stride));
        dec(reg_outer);
        jnz(l_outer, T_NEAR);
    }
    if (raw16() && is512()) lane_modes(false);
    if (cfg_.stream_dst) sfence();  // the streamed lines before the join
    vzeroupper();
    if (nan_by_flags()) fp_env_leave();
    pop(r15); pop(r14); pop(r13); pop(r12); pop(rbp); pop(rbx);
    ret();
    if (skews()) {
        L(l_skewed_);
        skewed_blocks(false, skew_rows());
        ret();
        if (skews8()) {
            L(l_skewed8_);
            skewed_blocks(false, 8);
            ret();
        }
        if (raw16()) {
            L(l_skewed_neg_);
            skewed_blocks(true, skew_rows());
            ret();
            exact_column16();
        }
    }
}

void vertical_generator::tile() {
    if (is512()) {
        // The tail mask is the same for every row of the tile.
        mov(reg_cnt, reg_tcols);
        and_(reg_cnt, step() - 1);
        set_tail_mask(reg_cnt, step());
    }
    mov(reg_p0, reg_tsrc);
    // The scratch tile sits 2 KiB past the tile's src column in the 4
    // KiB pattern of L1 sets: far from the sets of the lines being read
    // and prefetched. A dst one line ahead of src (a malloc'd dst next
    // to page-aligned src) cost the tiles a third of their speed there.
    mov(rax, ARG(scratch));
    mov(reg_scr, reg_tdst);
    test(rax, rax);
    Label l_no_scratch;
    jz(l_no_scratch, T_NEAR);
    lea(reg_scr, ptr[reg_p0 + 2048]);
    and_(reg_scr, 4096 - 64);
    add(reg_scr, rax);
    L(l_no_scratch);
    mov(reg_from, reg_tdst);
    if (is512()) lea(rax, ptr[reg_rs + reg_rs * 2]);
    mov(reg_rows, ARG(rows));
    Label l_rest;
    cmp(ARG(accumulate), 0);
    jne(l_rest, T_NEAR);
    // Passes of max_group() rows, then of rest_from() rows, then one of
    // the rows left (fewer than rest_from()): at most two passes past the
    // full ones, each one round trip through the running max. Rows far
    // enough apart in L1's sets take the rows left in one pass
    // (straight_rest()).
    auto passes_below = [&](int from, bool fresh, Label &done) {
        for (int g = from; g >= 1; --g) {
            Label l_other;
            cmp(reg_rows, g);
            jne(l_other, T_NEAR);
            last_pass(g, fresh);
            jmp(done, T_NEAR);
            L(l_other);
        }
    };
    auto straight_rest_if_apart = [&](bool fresh, Label &done) {
        if (!straight_rest()) return;
        // Up to 8 rows fit an L1 set's ways wherever they fall (AVX2's
        // 5-7); more go straight only where their lines spread out.
        Label l_same_sets;
        if (max_group() - 1 > 8) {
            test(reg_rs, 2048 - 64);  // a multiple of 2 KiB, give or take a line
            jz(l_same_sets, T_NEAR);
        }
        passes_below(max_group() - 1, fresh, done);
        L(l_same_sets);
    };
    {
        Label l_fresh_done;
        std::vector<int> sizes {max_group()};
        if (rest_from() < max_group()) sizes.push_back(rest_from());
        for (int g : sizes) {
            if (g < max_group()) straight_rest_if_apart(true, l_fresh_done);
            Label l_smaller;
            cmp(reg_rows, g);
            jl(l_smaller, T_NEAR);
            if (cfg_.stream_dst) {
                // Exactly g rows: this pass ends the tile.
                Label l_more;
                jne(l_more, T_NEAR);
                last_pass(g, true);
                jmp(l_fresh_done, T_NEAR);
                L(l_more);
            }
            pass(g, true);
            jmp(l_fresh_done, T_NEAR);
            L(l_smaller);
        }
        passes_below(rest_from() - 1, true, l_fresh_done);
        L(l_fresh_done);
    }
    L(l_rest);
    Label l_full_groups, l_tail_groups, l_done;
    L(l_full_groups);
    cmp(reg_rows, max_group());
    jl(l_tail_groups, T_NEAR);
    pass(max_group(), false);
    jmp(l_full_groups, T_NEAR);
    L(l_tail_groups);
    if (rest_from() < max_group()) {
        straight_rest_if_apart(false, l_done);
        Label l_smaller;
        cmp(reg_rows, rest_from());
        jl(l_smaller, T_NEAR);
        pass(rest_from(), false);
        L(l_smaller);
    }
    passes_below(rest_from() - 1, false, l_done);
    L(l_done);
}

void vertical_generator::last_pass(int g, bool fresh) {
    if (!cfg_.stream_dst) return pass(g, fresh);
    Label l_plain, l_done;
    test(reg_tdst, step() * dsz() - 1);
    jnz(l_plain, T_NEAR);
    streaming_ = true;
    pass(g, fresh);
    streaming_ = false;
    jmp(l_done, T_NEAR);
    L(l_plain);
    pass(g, fresh);
    L(l_done);
}

void vertical_generator::unstreamed(const std::function<void()> &f) {
    const bool streaming = streaming_;
    streaming_ = false;
    f();
    streaming_ = streaming;
}

void vertical_generator::pass(int g, bool fresh) {
    mov(reg_to, reg_scr);
    cmp(reg_rows, g);
    cmove(reg_to, reg_tdst);
    const bool skewed = skews() && (g == skew_rows() || (g == 8 && skews8()));
    // The skewed blocks always join a running max: a fresh pass gives
    // them row 0 for it (its max with the rows is theirs), so that
    // one copy of the blocks serves every pass.
    if (skewed && fresh) mov(reg_from, reg_p0);
    sub(reg_to, reg_from);
    const int nb = (g + half() - 1) / half();
    for (int b = 1; b < nb; ++b) lea(base(b), ptr[base(b - 1) + reg_rs * half()]);
    const bool chains16 = skewed && raw16();
    // 16-bit: a pass's rows, two straight groups of 8 with all three
    // statistics (exact).
    auto exact_pass16 = [&] {
        columns([&](mode m) {
            unstreamed([&] { group_body_raw(m, 8, fresh); });
            group_body_raw(m, 8, false, true);
        }, nb, nullptr);
    };
    Label l_pass_done;
    if (chains16) {
        Label l_skewed;
        kortestd(k_mixed_mode, k_mixed_mode);
        jz(l_skewed, T_NEAR);
        exact_pass16();
        jmp(l_pass_done, T_NEAR);
        L(l_skewed);
        for (int c = 0; c < 4; ++c) zero16(umax_chain(c));
        kxord(k_slow_seen, k_slow_seen, k_slow_seen);
    }
    if (next_pass_straight()) {
        push(reg_next);
        mov(reg_next, reg_p0);
        past_rows(reg_next, g);
    }
    columns([&](mode m) { group_body(m, g, fresh); }, nb,
            skewed ? std::function<void()>([&] { call_skewed(g); }) : nullptr);
    if (next_pass_straight()) pop(reg_next);
    if (chains16) {
        // A negative NaN in the skewed blocks' rows: the pass again, exactly
        // (the rows are unchanged, and a running max the pass wrote over
        // lacks at most their NaNs; a negative NaN running max went to
        // exact_column16).
        Label l_clean;
        test_negative_nan_chains(umax_chain(0), umax_chain(1), umax_chain(2), umax_chain(3));
        jz(l_clean, T_NEAR);
        exact_pass16();
        L(l_clean);
        next_lane_mode();
    }
    L(l_pass_done);
    if (nan_by_flags()) {
        // A NaN in the pass's rows (or its running max): the pass again,
        // exactly. It reads the same running max (or, where it wrote over
        // it, a max that only lacks the rows' NaNs), so the redo is exact
        // either way. The flags are clear again for the next pass.
        Label l_clean;
        test_invalid_flag();
        jz(l_clean, T_NEAR);
        columns([&](mode m) { group_body_f32(m, g, fresh, true); }, nb, nullptr);
        clear_fp_flags();
        L(l_clean);
    }
    past_rows(reg_p0, g);
    sub(reg_rows, g);
    mov(reg_from, reg_scr);
}

void vertical_generator::past_rows(const Reg64 &p, int n) {
    int left = n;  // by lea's scales (8, 4, 2, 1)
    for (; left >= 8; left -= 8) lea(p, ptr[p + reg_rs * 8]);
    for (int step : {4, 2, 1})
        if (left >= step) {
            lea(p, ptr[p + reg_rs * step]);
            left -= step;
        }
}

void vertical_generator::lane_modes(bool load) {
    Label l_none;
    mov(rax, ARG(modes));
    test(rax, rax);
    jz(l_none, T_NEAR);
    const std::pair<Opmask, size_t> fields[] = {{k_neg_mode, offsetof(lane_modes16, neg)},
            {k_mixed_mode, offsetof(lane_modes16, mixed)},
            {k_slow_before, offsetof(lane_modes16, slow_before)}};
    for (const auto &[k, off] : fields) {
        if (load) kmovd(k, dword[rax + off]);
        else kmovd(dword[rax + off], k);
    }
    L(l_none);
}

void vertical_generator::next_lane_mode() {
    // reg_p2 and reg_p3 are free here: the next pass sets them.
    Label l_keep, l_first, l_decided;
    const int block_cols = skew_rows() * step();
    kmovd(reg_p2.cvt32(), k_slow_seen);
    mov(reg_p3, reg_tcols);
    shr(reg_p3, __builtin_ctz(block_cols));
    shl(reg_p3, __builtin_ctz(skew_rows() / 2));  // half the skewed columns
    cmp(reg_p2, reg_p3);
    jbe(l_keep, T_NEAR);
    kortestd(k_slow_before, k_slow_before);
    jz(l_first, T_NEAR);
    kxnord(k_mixed_mode, k_mixed_mode, k_mixed_mode);
    L(l_first);
    knotd(k_neg_mode, k_neg_mode);
    kxnord(k_slow_before, k_slow_before, k_slow_before);
    jmp(l_decided, T_NEAR);
    L(l_keep);
    kxord(k_slow_before, k_slow_before, k_slow_before);
    L(l_decided);
}

void vertical_generator::columns(const std::function<void(mode)> &body, int nb,
        const std::function<void()> &skewed) {
    for (int b = 0; b < nb; ++b) push(base(b));
    mov(reg_pd, reg_from);
    mov(reg_cnt, reg_tcols);
    if (skewed) skewed();
    Label l_full, l_tail, l_done;
    L(l_full);
    {
        cmp(reg_cnt, step());
        jl(l_tail, T_NEAR);
        body(mode::full);
        advance(nb, step());
        jmp(l_full, T_NEAR);
    }
    L(l_tail);
    test(reg_cnt, reg_cnt);
    jz(l_done, T_NEAR);
    if (is512()) {
        body(mode::tail);
    } else {
        // AVX2 (no masks): a tile of a vector or more takes the vector
        // that ends at its end, over columns the last full step took
        // already (a max is idempotent: they get the same values again);
        // narrower tiles one column at a time, as every tile did. Capped
        // to AVX2 on Zen 4, ab_builds, % of the roofline: bf16 2000x300
        // axis 0 39-44 -> 51-64, NCHW 32x512x14x14 axes 1,3 42-51 ->
        // 47-56.
        Label l_scalar;
        cmp(reg_tcols, step());
        jl(l_scalar, T_NEAR);
        sub(reg_cnt, step());  // minus the columns to step back
        for (int b = 0; b < nb; ++b) lea(base(b), ptr[base(b) + reg_cnt * ssz()]);
        lea(reg_pd, ptr[reg_pd + reg_cnt * dsz()]);
        const bool streaming = streaming_;
        streaming_ = false;  // the vector is off the alignment of the others
        body(mode::full);
        streaming_ = streaming;
        jmp(l_done, T_NEAR);
        L(l_scalar);
        {
            body(mode::scalar);
            advance(nb, 1);
            jnz(l_scalar, T_NEAR);
        }
    }
    L(l_done);
    for (int b = nb - 1; b >= 0; --b) pop(base(b));
}

void vertical_generator::advance(int nb, int n) {
    for (int b = 0; b < nb; ++b) add(base(b), n * ssz());
    add(reg_pd, n * dsz());
    sub(reg_cnt, n);
}

#undef ARG

jit_fn generate_vertical(const kernel_config &cfg, code_buffer &buf) {
    if (cfg.family == family_t::vert_reg) return generate_vertical_reg(cfg, buf);
    return generate_with<vertical_generator>(cfg, buf);
}

} // namespace crest::impl::jit
