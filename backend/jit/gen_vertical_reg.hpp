// The `vert_reg` family's generator (gen_vertical_reg.cpp, its fixed
// blocks in gen_vertical_fixed*.cpp): few columns (at most 16 vectors), the
// whole column block in registers while every row streams past, so no dst
// round trip per row. ncols must be in ((unroll - 1) * vlen, unroll *
// vlen]; AVX2 also needs a whole number of 8-lane vectors, but with
// kernel_config::partial_last (f32: its last vector by vmaskmovps;
// 16-bit: partial16 below).
#pragma once

#include <functional>
#include <numeric>

#include "backend/jit/jit_generator.hpp"

namespace crest::impl::jit {

// Slices read as lines (gen_vertical_fixed_lines.cpp,
// gen_vertical_lines.cpp): rows of `cols` elements repeat their lanes
// every lcm(cols, a line's lanes) elements, a period.
struct line_period {
    int lanes;   // of a line (64 bytes)
    int plines;  // lines of a period
    int rows;    // rows of a period
    int nvec;    // vectors of a row
};
inline line_period period_of(int cols, int esz) {
    const int lanes = 64 / esz, period = std::lcm(cols, lanes);
    return {lanes, period / lanes, period / cols, (cols + lanes - 1) / lanes};
}

class vertical_reg_generator : public jit_generator {
public:
    using jit_generator::jit_generator;

private:
    const Reg64 reg_args = rdi;
    const Reg64 reg_src = rsi;
    const Reg64 reg_dst = rdx;
    const Reg64 reg_outer = rcx;
    const Reg64 reg_row = r8;
    const Reg64 reg_rows = r9;
    const Reg64 reg_rs = r10;
    const Reg64 reg_rs3 = r11;   // 3 * row stride (first the tail count)

    void generate() override;
    // The arguments into their registers; the fixed blocks, when the
    // config has them, take the calls they can and jump to l_end; then
    // the general loop's tail mask (the columns past full_cols, in lanes
    // of a vector) and reg_rs3.
    void enter(const Label &l_end, int full_cols, int lanes);
    // AVX2 partial_last or fixed blocks: the rows their masks load from
    // (8 lanes of ones, 8 of zeros), emitted after the code.
    Label l_avx2_mask_;
    void avx2_mask_table();
    bool avx2_masks() const { return !is512() && !raw16() && (cfg_.partial_last || fixed()); }

    int nv() const { return cfg_.unroll; }
    // Accumulator sets: consecutive rows go to different sets, so that the
    // max chain of one set (in the exact path a compare into a mask, then a
    // masked max) overlaps the next row's. On AVX-512 up to 4 sets fit in
    // zmm0-15.
    int sets() const {
        if (!is512()) return 1;
        int s = 1;
        while (s < 4 && 2 * s * nv() <= 16) s *= 2;
        return s;
    }
    Xmm acc(int i, int set = 0) const { return vmm(set * nv() + i); }
    Xmm x(int i) const { return is512() ? vmm(16 + i) : vmm(8 + i % 4); }
    Xmm tmp(int i) const { return is512() ? vmm(16 + i) : vmm(12 + i % 4); }
    bool masked(int i) const { return (is512() || cfg_.partial_last) && i == nv() - 1; }
    // AVX2 with partial_last: the last vector's lanes (all ones in the
    // columns it holds), past the accumulators (nv() < 8, plan_kernels.cpp).
    Xmm avx2_mask() const { return vmm(7); }

    void ld(int i, const Xmm &v, const Address &a, data_type dt) {
        if (!masked(i)) load(v, a, dt);
        else if (is512()) load_tail(v, a, dt);
        else vmaskmovps(v, avx2_mask(), a);  // f32; lanes past the columns 0, unread
    }

    // Vector i of row `set` past reg_row (reg_rs3 holds 3 * row stride).
    Address row(int set, int i) const;
    void one_row(int set);

    // Every row of the outer slice at reg_src (rows at the row stride) into
    // the sets, starting from dst when accumulating, else from -inf; then
    // `take(set, grouped)` for each row (grouped: one of a group of sets()
    // rows, taken in set order) and `join(a, b)` to merge the sets into
    // set 0.
    void rows(const std::function<void(int, bool)> &take,
            const std::function<void(const Xmm &, const Xmm &)> &join,
            const std::function<void(const Xmm &)> &from_dst);

    // The NaN-aware max throughout.
    void rows_exact();

    // The rows straight from memory into plain maxes (AVX-512: the last
    // vector's under the tail mask, junk lanes neither read nor NaN); a
    // NaN read, or in dst when accumulating (set 0 starts from dst, an
    // operand of the first row's max), raises the invalid flag
    // (jit_generator::fp_env_enter), tested once per slice: ZF clear (jnz
    // taken) when it fired, and the slice is then redone exactly. The
    // masked compares this replaced (one per two rows' vectors, as the
    // tiles had) held channels-last 32x64x56x56 axes 2,3 on Zen 4 at
    // 85-88% of the roofline, 99% without (from memory, 196 MiB, they
    // were 2-3 points ahead: 102% against 99-100%). AVX2 had the NaN-aware
    // max itself; with partial_last its last vector goes through a
    // vmaskmovps load (unread lanes 0) before the max.
    void rows_flagged();

    // --- bf16/f16 (jit_generator::raw16()): raw 16-bit bits ---
    // Each vector of columns (AVX-512: 32, AVX2: 16) keeps the signed max,
    // the unsigned min and the unsigned max of its raw bits, as the tiles
    // do (design.md): 3 ops per row, no compare into a mask, which was the
    // bottleneck of the widening path, and no key conversions.
    int npv() const { return (cfg_.unroll + 1) / 2; }  // unroll counts f32 vectors
    int vbytes() const { return 2 * vlen16(); }
    // Vector i's register idx: on AVX2 a last vector of 8 columns (tail_)
    // is an xmm.
    Xmm sized(int i, int idx) const {
        if (!is512() && pmasked(i) && tail_bytes16() <= 16) return Xbyak::Xmm(idx);
        return vmm(idx);
    }
    // AVX2 with partial_last: block_cols columns (the plan's, every call),
    // the last vector's past the columns read whole from every row but a
    // slice's last, which reads exactly its bytes (load_bytes), as the
    // stores write (store_bytes). Columns of 4 or more (plan_kernels.cpp):
    // a whole vector then ends inside the next row.
    bool partial16() const { return !is512() && raw16() && cfg_.partial_last; }
    // The last vector's bytes when tail_ (AVX2: 16 for a last xmm of 8
    // columns).
    int tail_bytes16() const {
        return partial16() ? cfg_.block_cols * 2 - (npv() - 1) * vbytes() : 16;
    }
    Xmm smax(int i) const { return sized(i, i); }
    Xmm umax(int i) const { return sized(i, is512() ? 8 + i : 4 + i); }
    Xmm umin(int i) const { return sized(i, is512() ? 16 + i : 8 + i); }
    Xmm px(int i) const { return sized(i, is512() ? 29 : 14); }
    // AVX-512: the register row k of a group of 4 loads into (px's and
    // three more around the constants); the fixed blocks' rows too.
    static int row_temp(int k) {
        const int regs[] = {29, 30, 31, 24};
        return regs[k % 4];
    }
    Xmm neg_inf16(int i) const { return sized(i, c_neg_inf().getIdx()); }
    // The last vector takes a 16-bit masked load (AVX2: a half-width one)
    // only when the columns end inside it: such a load costs several times
    // a plain one here, so a column count that fills its vectors runs a
    // copy of the loop without.
    bool tail_ = true;
    bool pmasked(int i) const { return tail_ && i == npv() - 1; }

    // exact: partial16()'s last vector reads only its bytes.
    void ld16(int i, const Xmm &v, const Address &a, bool exact = false);
    // x's 16-bit lanes to a (AVX-512: the lanes of k_tail_ when masked).
    void store16(const Address &a, const Xmm &x, bool masked);
    // Vector i's answer (select16) into smax(i), stored.
    void select_store16(int i);
    void generate_keys();
    // The slice at reg_src from a fresh or accumulated start, every row
    // into the signed and unsigned maxes and, with_umin, the unsigned min.
    void slice_keys(bool with_umin);
    // Every outer slice, stored. AVX-512 starts checked: two statistics
    // a row (the signed max is the answer unless a lane saw only
    // negatives; the unsigned max shows negative NaNs); after a slice
    // with a lane of negatives only, that slice and the rest of the call
    // keep all three (AVX2 always).
    void outer_loop_keys();

    // --- Fixed blocks (cfg_.block_rows, gen_vertical_fixed.cpp and
    // gen_vertical_fixed_slices.cpp) ---
    // A fresh call (no accumulate) of exactly block_rows x block_cols per
    // slice runs each slice straight-line, every row a max with a memory
    // operand (16-bit: a load and the three statistics), in vectors as
    // wide as the columns need (16, 32 or 64 bytes: a 7-column slice of
    // 16-bit elements is one xmm, where the general loop keeps a masked
    // zmm and loops over the rows), wider slices in groups of up to
    // fixed_group_max vectors. Other calls jump to `general` with the
    // registers as on entry.
    // f32 blocks fit the general loop, which redoes a call that met a NaN.
    // AVX2: vectors of up to 32 bytes; f32 in groups of up to 6, the last
    // vector by vmaskmovps under fixed_mask(); 16-bit in groups of up to
    // 4 (three statistics each), the last vector by fixed_tail_avx2 and
    // store_bytes.
    bool fixed() const {
        return cfg_.block_rows > 1 && cfg_.block_cols > 0 && cfg_.src_dt == cfg_.dst_dt
                && (raw16() || cfg_.block_cols <= nv() * vlen());
    }
    int fixed_group_max() const { return is512() ? 8 : raw16() ? 4 : 6; }
    // AVX2: the masked vector's lanes, and a register to load it into.
    Xmm fixed_mask() const { return fw(15); }
    Xmm fixed_temp() const { return fw(14); }
    const Reg64 reg_fixed_cnt = rbx;  // groups left in the slice (saved)
    void fixed_entry(const Label &general);
    // f32 after straight-line slices: to `done`, or, when the invalid
    // flag tells of a NaN, to `general` (flags cleared, the registers as
    // on entry) to redo the call.
    void redo_after_nan(const Label &general, const Label &done);
    // cfg_.stream_dst (a stage of at most 1 KiB): the calls
    // with a dense, line-aligned dst take their slices a stage at a
    // time (fixed_staged: slices() writes them at reg_dst, as many as
    // reg_outer holds), the stage's whole lines then non-temporal to
    // dst; the slices left over go on as before.
    bool fixed_streams() const;
    // f32 accumulating calls with such a dst take their slices a stage at
    // a time too, fresh, the stage's lines then maxed into dst's
    // (fixed_staged with join): slices joining dst one by one stored a
    // few bytes of a line each and loaded the next slice's bytes of it.
    bool fixed_joins_staged() const;
    // fixed_blocks_accumulate (generators.hpp) for this kernel.
    bool fixed_accumulates() const;
    // body's code, run only by accumulating calls (none without
    // fixed_accumulates(), nor while fresh_slices_).
    void fixed_when_accumulating(const std::function<void()> &body);
    int fixed_stage_bytes() const;  // lcm(a slice's dst bytes, 64)
    void fixed_staged(const std::function<void()> &slices, bool join);
    // A stage's `bytes` (whole vectors) at `from` to `to`: stored
    // non-temporal (`to` aligned to a vector) or not, or maxed into `to`
    // (join, f32: a NaN at `to` stays, one in the stage raises the
    // invalid flag as the slices' own maxes do); vector registers 0-3.
    enum class stage_store { plain, nt, join };
    void stage_to_dst(const Xbyak::Address &from, const Xbyak::Address &to, int bytes,
            stage_store how);
    // Set while generating slices that never read dst (a join's stage).
    bool fresh_slices_ = false;
    // The block's vectors: their width in bytes and count; whether vector
    // i is the last and short of a full vector (masked).
    int fixed_width() const;
    int fixed_vectors() const;
    bool fixed_masked(int i) const;
    Xmm fw(int idx) const;  // register idx at fixed_width()
    // Row r of the slice at reg_src, byte offset disp: rows 4k .. 4k + 3
    // from base k (reg_src, r8, r9, rax), rows of reg_rs apart.
    Address fixed_row(int r, int disp) const;
    void fixed_bases();  // r8, r9 and rax for fixed_row
    // nvec vectors of every row from reg_src (every batch index's) into
    // dst at reg_dst, the last masked when masked_last.
    // f32: rows alternate between two accumulator sets, joined at the end;
    // a NaN raises the invalid flag, tested once a call (the call is then
    // redone by the general loop, which finds and fixes the slices).
    void fixed_group_f32(int nvec, bool masked_last);
    // 16-bit: a row before the last reads its vectors whole (junk lanes
    // past the columns, inside the next row, are never stored), the last
    // row under the tail mask (past the slice may lie past src).
    void fixed_group16(int nvec, bool masked_last);

    // --- Batches (kernel_config::block_batch) ---
    // A call of vert_call::batch > 1 maxes each slice's rows over its
    // batch indices in registers, then stores once. As a call a batch
    // index, the later ones accumulating, each later index read the
    // slice's dst back and wrote it again, and such calls ran at 60-84%
    // of the roofline (NCHW reducing N and H, doc/performance.md).
    bool batched() const { return cfg_.block_batch; }
    // Saved at the fixed blocks' entry: the later indices left, and the
    // slice's src at its first index.
    const Reg64 reg_batch = r15;
    const Reg64 reg_batch_src = rbp;
    // rows(true) reads the rows at reg_src, rows(false) each later batch
    // index's (reg_src moved on, then put back).
    void over_batch(const std::function<void(bool first)> &rows);
    // A batched call the fixed blocks refuse returns 1 (jit_status_fn);
    // status_exit(), at the kernel's end, makes every other return 0.
    Label l_refuse_;
    void status_exit();
    // To `general` when the call is not batched, else to l_refuse_.
    void general_or_refuse(const Label &general);
    // The bytes of the columns in the last vector.
    int fixed_tail_bytes() const;
    // AVX2 16-bit, the masked vector at byte disp of row r into x (t is
    // clobbered): the vector that ends at the row's end, shifted down (a
    // load and one or two shuffles a slice, where load_bytes takes up to
    // five instructions).
    void fixed_tail_avx2(const Xmm &x, int r, int disp, const Xmm &t);
    // cfg_.block_row_stride set: slices two at a time, a slice a 16-byte
    // lane of a ymm, while the call's strides are the config's and two
    // slices are left (the others go on one at a time). With
    // cfg_.prefetch, 4 KiB ahead.
    int packed_slices() const { return cfg_.block_row_stride ? 2 : 1; }
    void fixed_packed();
    // AVX-512, 16-bit slices of up to 5 rows of under 8 bytes and of up
    // to 64 bytes (NCHW reducing H, with N or not, of 3x3 maps;
    // gen_vertical_fixed_runs.cpp): fresh calls of up to 3 batch indices
    // whose slices and dst are dense take whole periods of slices as one
    // run (a period and a vector's bytes left at least), reg_src, reg_dst
    // and reg_outer moved past them; the rest go on as before (after a
    // negative NaN: every slice).
    bool fixed_runs_fit() const;
    void fixed_runs();
    // AVX-512, batched slices of 16-bit rows of 8-12 bytes or f32 rows of
    // 12-20 (NCHW reducing N and H of 4x4 to 6x6 maps, f32 3x3 to 5x5;
    // gen_vertical_fixed_keyed.cpp): fresh calls of 2-3 batch indices
    // whose slices and dst are dense take whole groups of slices (a line's
    // lanes / gcd(columns, lanes)) through a keyed copy in L1, while more
    // than a group is left, reg_src, reg_dst and reg_outer moved past
    // them; the rest go on as before (after a negative NaN: every slice;
    // f32 after any NaN: the general loop, as the other blocks).
    bool fixed_keyed_fit() const;
    void fixed_keyed();
    // The runs' and the keyed copy's way in and out: reg_src, reg_dst and
    // reg_outer saved; then, where chains (unsigned-max chains of the raw
    // words) saw a negative NaN, which keys lose, restored, so that the
    // one-slice blocks take the call from its start; else dropped, the
    // registers past the slices taken.
    void dense_enter();
    void dense_leave(const Xbyak::Xmm &chain0, const Xbyak::Xmm &chain1, bool chains);
    // f32 on AVX-512, slices of 9-15 columns and enough rows that
    // follow one another (gen_vertical_fixed_lines.cpp): calls whose rows
    // and slices are dense take groups of fixed_lines_group() slices from
    // src on a line, each read as aligned lines folded into one period of
    // its rows; the others, and the slices before and after the groups,
    // go one at a time (plain_slice, or the loop at l_plain; l_all: none
    // left).
    bool fixed_lines() const;
    int fixed_lines_group() const;
    // The slice whose first element is lane `phase` of the line
    // first_line lines past reg_src (every batch index's), into reg_dst.
    void fixed_lines_slice(int phase, int first_line);
    void fixed_lines_entry(const std::function<void()> &plain_slice, const Label &l_plain,
            const Label &l_all);

    // --- Wide columns (wide_columns and wide_max_cols, generators.hpp;
    // gen_vertical_reg_wide.cpp) ---
    // The general loop alone, a slice at a time: f32 a max with a memory
    // operand a vector (zmm0-31, past 32 vectors zmm0-29 and spill
    // slots; with cfg_.prefetch each row's lines 4 KiB ahead, the rows
    // one after another), a NaN met (the invalid flag, tested once a
    // slice) returning the slices left; 16-bit the checked statistics
    // alone (the signed max in zmm0-15, the unsigned max in wide_umax),
    // a lane of negatives only returning them; up to 14 vectors that
    // slice and the rest of the call keep the signed max and the
    // unsigned min instead, a negative NaN returning them.
    bool wide() const;
    int wide_vectors() const;  // of a row (16-bit: 32 columns each)
    int wide_regs() const;     // of those, the ones in registers
    Xmm wide_umax(int i) const;
    // f32 past 32 vectors: the rest in spill slots on the stack (rsp
    // aligned to 64 bytes), each a load, a max and a store a row.
    Address wide_slot(int i) const;
    Label l_consts16_;  // 32 words of -inf, then 32 of the quiet NaN
    // A vector of words at a, the last one's lanes past the columns
    // (k_tail_) zeros.
    void wide_load16(const Xmm &v, const Address &a, bool last);
    // row() for each row of the slice at reg_src (at reg_row); slice()
    // for each of the call's slices, reg_src and reg_dst moved on after.
    void wide_rows(const std::function<void()> &row);
    void wide_slices(const std::function<void()> &slice);
    void wide_start();  // the statistics from dst or fresh
    void wide_row();    // the row at reg_row into them
    void wide_finish16(const Label &l_refuse);  // checked, fixed up, stored
    bool wide_negatives() const;
    void wide_slice_negatives();
    void wide_finish_negatives(const Label &l_refuse);
    void generate_wide();

    // --- Folded lines (kernel_config::fold_cols, gen_vertical_lines.cpp) ---
    bool folds() const;
    // The calls it takes, every slice; then `done`, or `general` with the
    // registers as on entry (other calls, or a NaN met: f32 redoes the
    // call).
    void fold_entry(const Label &general, const Label &done);
};

} // namespace crest::impl::jit
