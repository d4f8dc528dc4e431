// make_plan's second half (plan.hpp, choose_kernels): with the plan's
// loops set, which generated kernels run them. The thresholds come from
// same-run A/Bs on the machines the comments name.
#include "backend/jit/plan.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <tuple>

#include "backend/jit/generators.hpp"
#include "backend/jit/isa.hpp"
#include "backend/jit/plan_prefetch.hpp"

namespace crest::impl::jit {

namespace {

// The widest rows (columns) that plan::chunk_code takes.
constexpr int64_t chunk_cols_max = 511;

// Whether the register columns unroll the plan's slices
// (kernel_config::block_rows): few rows of at most 512 bytes, each row's
// vectors ending inside the next row (which the fixed blocks' 16-bit rows
// read whole). Zen 4, same-run A/Bs, % of the roofline, NCHW reducing
// H: 64x2048x7x7 f32 70-72 -> 89-100, bf16 23-36 -> 75-85, f16 23-39 ->
// 56-87; 256x256x9x9 f32 50-52 -> 71-109, bf16 30-45 -> 57-75, f16 28-46
// -> 55-57; 64x1024x10x5 f32 28 -> 63, 16-bit 15 -> 34.
// AVX2's f32 masked vector takes vmaskmovps; its 16-bit one has no masked
// load and reads the vector that ends at the row's end, which needs the
// vector at most twice the columns' bytes (4 columns or more).
bool fixed_block(const plan &P, isa_t isa, int64_t max_bytes = 512) {
    const int64_t bytes = P.jd.n * P.esz;
    const bool avx2_16_whole = (bytes <= 16 ? 16 : 32) <= 2 * bytes;
    return (isa == isa_t::avx512_core || P.dt == data_type::f32 || avx2_16_whole)
            && P.rows.n >= 2 && P.rows.n <= 16 && bytes <= max_bytes && P.rows.ss >= bytes;
}

// Slices of dense rows that split lines (NCHW reducing H of 56x56 maps):
// read as lines folded into a period (kernel_config::fold_cols). Zen 5,
// 2 threads, bg_runs.sh, % of the roofline, 3 rounds: bf16 64x64x56x56
// axis 2 52-57 -> 88-97, f16 axes 0,2 51-64 -> 97-119, f32 32x64x56x56
// axis 2 77-90 -> 99-111, f32 64x64x28x28 axis 2 58-67 -> 113-117.
// Since session 44 also slices that are no whole number of lines (split
// loads, a part vector last): Zen 4, ab_builds, bf16 [N x 100 x 3]
// reducing the 100 18 -> 69, x 5 30 -> 77, x 7 43 -> 79, f32 x 3 37 ->
// 85, [N x 50 x 7] 67 -> 85; the sweep's 36 cases that changed plan
// (NCHW 3x3 to 28x28 maps reducing C and H, or H) tied.
bool fold_lines(const plan &P, isa_t isa) {
    if (isa != isa_t::avx512_core || P.njsub != 1 || P.jd.ss != P.esz || P.nouter < 1) return false;
    const int64_t row = P.jd.n * P.esz, slice = P.rows.n * row;
    return P.rows.ss == row && P.outer[P.nouter - 1].ss == slice
            && fold_fits(static_cast<int>(P.jd.n), P.dt);
}

// Fixed blocks of rows of 8-16 bytes whose calls take several slices:
// a slice a 16-byte lane (kernel_config::block_row_stride), with the
// plan's strides fixed in the code, prefetching from half the L3 on.
void pack_slices(const plan &P, kernel_config &c) {
    const int64_t bytes = c.block_cols * P.esz;
    if (bytes < 8 || bytes > 16 || P.nouter < 1 || P.outer[P.nouter - 1].n < 2) return;
    const int64_t rs = P.rows.ss, oss = P.outer[P.nouter - 1].ss;
    constexpr int64_t max_stride = int64_t(1) << 24;  // 4 slices' offsets stay in a disp32
    if (rs <= 0 || oss <= 0 || rs > max_stride || oss > max_stride) return;
    c.block_row_stride = static_cast<int>(rs);
    c.block_slice_stride = static_cast<int>(oss);
    c.prefetch = prefetch_src(P.src_bytes, streams::many_16bit_far);
}

// Whether output o of the flat order (flat_output_dims) sits at o
// elements from dst's start.
bool dst_dense_in_flat_order(const plan &P) {
    loop_dim dims[2 * max_dims];
    int64_t want = P.esz;
    for (int k = flat_output_dims(P, dims) - 1; k >= 0; --k) {
        if (dims[k].n != 1 && dims[k].ds != want) return false;
        want *= dims[k].n;
    }
    return true;
}

// A vertical tile kernel of the plan's ISA and dtype.
kernel_config tile_config(isa_t isa, data_type dt, bool prefetch, bool fused16 = false) {
    kernel_config c;
    c.isa = isa;
    c.family = family_t::vert_tile;
    c.src_dt = c.dst_dt = dt;
    c.unroll = 1;
    c.prefetch = prefetch;
    c.fused16 = fused16;
    return c;
}

// 16-bit tiles over slices of 2-16 rows (channels-last reducing H or W of
// small maps) below half the L3's size: plan::fixed_code, the fixed
// blocks in groups of 8 vectors, one load and three statistics a row and
// no running max between passes. Zen 4, same-run A/Bs, tiles -> fixed,
// channels-last at 12.8 MB, us: 7x7x2048 reducing H f16 305-318 ->
// 128-213, reducing W bf16 216-313 -> 157-297; 14x14x512 reducing H bf16
// 249-288 -> 171-191, reducing W 379-394 -> 321-366. From half the L3 on
// (25.7 MB), where src partly streams from memory and the tiles prefetch,
// the tiles read 1.2-1.9x faster, prefetching fixed blocks or not. f32
// tiles (one memory operand a row already) did as well or better:
// 14x14x512 reducing W 63-72% of the roofline against 30-63%.
void plan_fixed_tiles(plan &P, isa_t isa, const kernel_config &tile) {
    // AVX2's 16-bit tiles read NCHW 7x7 maps reducing H at 5-6%: its
    // fixed blocks at any size, slices of up to 512 bytes.
    const bool avx512 = isa == isa_t::avx512_core;
    if (P.dt == data_type::f32 || tile.family != family_t::vert_tile || P.njsub != 1
            || P.jd.ss != P.esz || !fixed_block(P, isa, avx512 ? INT64_MAX : 512)
            || (avx512 && prefetch_src(P.src_bytes, streams::many_16bit_far)))
        return;
    kernel_config w;
    w.isa = isa;
    w.family = family_t::vert_reg;
    w.src_dt = w.dst_dt = P.dt;
    w.unroll = avx512 ? 16 : 8;  // its general loop is never called: whole fresh slices only
    w.block_rows = static_cast<int>(P.rows.n);
    w.block_cols = static_cast<int>(P.jd.n);
    pack_slices(P, w);
    P.fixed_code = get_code(w);
}

// How many rows of row_bytes a tile's period takes (at most
// max_period_bytes): first a period of whole lines, so that no pass splits
// its loads; then few rows left over (at most 1/64 of them), which the
// plan's own kernel folds one by one; then the most. Zen 4, same-run
// A/Bs, 25 MiB, 128 rows of 784 columns: 10 rows a period (8 left over)
// read f16 at 236 us, 4 or 8 rows at 171 us; bf16 608-632 -> 477-519 us
// (4 rows), 330 us (8). Over many rows the widest period reads best,
// where none left over had picked the first that divided best (session
// 36, Zen 4, benchgraph, % of the roofline, [3 x 174762 x 25] bf16
// reducing the middle: periods of 32 rows 49-51, 64 rows 79-84, 320 rows
// 96-97; 3 alternate rounds of NCHW 5x5 to 14x14 maps reducing N and C,
// 25 MiB: bf16 79-92 -> 88-98, f16 83-93 -> 90-101, f32 tied).
// Rows of over 1 KiB (plan_period's rows of 513-1023 16-bit columns)
// take at most wide_period_rows a period (max_rows): Zen 4, ab_builds,
// 4 buffers, 30 rounds, % of the roofline, [N x 512 x W] at 25 MiB (periods of 9-14
// rows, most leaving 8 over -> 8 rows, none over): bf16 W=528-896 72-85
// -> 83-88, f16 76-85 -> 84-92; [57 x 384 x 600] (12 rows -> 8, none
// left over either way) bf16 76 -> 80, f16 75 -> 79. Preferring none
// left over to the 1/64 allowed took 2 rows a period over 16718 rows
// (NCHW 2x8359x28x28 reducing N and C), and over 500 rows 4 against 8
// gained 2 points only.
constexpr int64_t wide_period_rows = 8;
int64_t rows_a_period(int64_t rows, int64_t row_bytes,
        int64_t max_rows = std::numeric_limits<int64_t>::max()) {
    int64_t best = 2;
    auto score = [&](int64_t k) {
        const int64_t left = rows % k;
        return std::make_tuple((k * row_bytes) % 64 == 0, left * 64 <= rows ? 0 : -left, k);
    };
    for (int64_t k = 3; k * row_bytes <= max_period_bytes && k <= max_rows; ++k)
        if (score(k) > score(best)) best = k;
    return best;
}

// A tile kernel over P's rows k at a time (periods of k rows, one after
// another). 16-bit ones prefetch and fuse their loads as a tile over such
// rows would (choose_tile_prefetch: the next pass's rows); f32 ones lost
// 3-10 points with it. Zen 4, benchgraph, 3 alternate rounds, % of the
// roofline, plain -> prefetching, NCHW reducing N and C of 5x5 to 14x14
// maps at 25 MiB (2-3 x C): bf16 59-67 -> 84-93, f16 55-66 -> 84-93;
// the first stage of reducing C and W alike (61-66 -> 86-94).
std::shared_ptr<const generated_code> period_tile(const plan &P, isa_t isa, int64_t k) {
    if (P.dt == data_type::f32) return get_code(tile_config(isa, P.dt, false));
    plan view = P;
    view.jd.n = k * P.jd.n;
    view.rows = {P.rows.n / k, view.jd.n * P.esz, 0};
    const bool from_memory = prefetch_src(P.src_bytes, streams::many);
    kernel_config t = tile_config(isa, P.dt, from_memory,
            !from_memory && fused_loads16(view, isa, view.rows.n, view.rows.ss));
    choose_tile_prefetch(view, isa, from_memory, t);
    return get_code(t);
}

// The fewest rows of row_bytes, one after another, that make whole lines.
int64_t rows_to_whole_lines(int64_t row_bytes) {
    return 64 / std::gcd(row_bytes, int64_t {64});
}

// The rows a period of f32 rows of 2 KiB and more off the lines' grid
// takes (plan_period): the fewest that make whole lines, at most
// wide_period_rows and max_line_period_bytes; else, from 4 KiB, half as
// many (periods of half lines: every other one on a line, run_periodic
// starting the first such one on a line); else none. Zen 4, ab_builds,
// 1 buffer, 16 rounds, % of the roofline, [N x W] axis 0, none -> half
// lines: W=1089 (16 rows make lines) 70 -> 85, 1225 76 -> 86, 1369 87
// -> 94, 2025 77 -> 79, 3250 (8 rows of 13000 bytes pass 72 KiB) 79 ->
// 85; below 4 KiB W=625, 729, 841, 961 read 80-92 either way; quarter
// lines (W=3025, 4 rows of 12100 bytes) tie. 16 rows read 66-69 at
// W=1089 (74 without a period), as bf16 rows of 2500 bytes did (77-79
// against 81-82).
int64_t rows_a_line_period(int64_t row_bytes) {
    const int64_t whole = rows_to_whole_lines(row_bytes);
    auto fits = [&](int64_t k) {
        return k <= wide_period_rows && k * row_bytes <= max_line_period_bytes;
    };
    if (fits(whole)) return whole;
    return whole >= 4 && row_bytes >= 4096 && fits(whole / 2) ? whole / 2 : 0;
}

// The rows a period of 16-bit rows of 2-8 KiB off the lines' grid takes
// (plan_period): the fewest that make whole lines where they are 4 or 8
// within 32 KiB, else rows_a_period's (within 16 KiB; whole lines of 2
// rows take 4-8 there). Zen 4, ab_builds, 1 buffer, 16-20 rounds, three
// runs, % of the roofline, [N x W] axis 0 at 25 MiB, rows_a_period ->
// whole lines: bf16 W=1100-1700 (8 rows) 64-83 -> 79-90, 3000 (4 rows)
// 62-75 -> 75-87; f16 1100-1700 73-83 -> 84-91, 3000 77 -> 88. Past 32
// KiB not taken: 8 rows of 4600 bytes +4 in one run and -7 in another,
// of 5400 bytes a tie, of 7000 bytes 2-3 points lower.
constexpr int64_t max_line_period16_bytes = 32 * 1024;
int64_t rows_a_period16(int64_t rows, int64_t row_bytes) {
    const int64_t whole = rows_to_whole_lines(row_bytes);
    if (whole >= 4 && whole <= wide_period_rows && whole * row_bytes <= max_line_period16_bytes)
        return whole;
    return rows_a_period(rows, row_bytes, wide_period_rows);
}

// Rows of under 64 bytes, or not a whole number of vectors, one after
// another: the columns repeat every lcm(jd.n, vector) elements, so a
// register-column kernel over rows of that many (at least 4 vectors
// where it can) reads whole vectors, and a fold of the period's rows
// gives the columns. Where the lcm passes 16 vectors, AVX-512 takes as
// many whole rows as 16 vectors hold, the last vector masked. Zen 4,
// 25 MiB: bf16 819200x16 axis 0 267 -> 172 us (a row then 4 vectors of
// 16 columns, not one); 17 columns f32 1.2-1.3x, bf16 1.2-1.8x; 33-100
// columns +2 to +7%.
// Which rows of 2 KiB and more off the lines' grid plan_period gives a
// tile's period: none, those whose period is whole (f32: or half) lines,
// or those and the rest of rows_a_period16's picks.
enum class wide_periods { none, lines, any };

void plan_period(plan &P, isa_t isa, int64_t c, const std::shared_ptr<const generated_code> &tile,
        wide_periods wide = wide_periods::none) {
    const int64_t vl = isa == isa_t::avx512_core ? 16 : 8;
    const int64_t max_vecs = isa == isa_t::avx512_core ? 16 : 8;
    const bool narrow_is_reg = !tile;
    const bool few = c * P.esz < 64 || (c % vl != 0 && c <= max_vecs * vl);
    if (P.rows.ss != c * P.esz) return;
    if (!few) {
        // Rows of 512 columns to 2 KiB, and where `wide` asks (the
        // vertical tile, the slabs) wider ones off the lines' grid, for a tile
        // kernel: several whole rows a period, so that its passes take
        // wide rows. A 16-bit tile of under 32 vectors barely fills its
        // skewed blocks (Zen 4, 25 MiB, bf16 N x 128 x 784 axis 1:
        // 812-887 -> 540-589 us); at 1568 columns, and for f32, no gain.
        // Wider rows: 16-bit ones of up to 8 KiB as rows_a_period16 says,
        // f32 ones as rows_a_line_period says: periods of whole lines
        // (or half lines), so that no load (or every other period's)
        // splits a line. f32, Zen 4, 25 MiB, ab_builds, 1 buffer, 20
        // rounds, % of the roofline, [N x W] axis 0, none -> whole
        // lines: W=1250 76 -> 90, 2500 81 -> 92, 1450 79 -> 92, 2200 85
        // -> 89, 900 88 -> 90, 1000 83 -> 87; the most rows up to 8
        // instead, 32000 bytes for W=1000, read 77-81 there; NCHW
        // 3x1024x50x45 axis 1, rows of 9000 bytes, 81 -> 87 once the
        // period's running max moved to run_periodic's buffer, which let
        // periods grow from 48 to 72 KiB.
        const int64_t row = c * P.esz;
        if (!tile || isa != isa_t::avx512_core || c <= chunk_cols_max) return;
        int64_t k = 0;
        if (row < 2048)
            k = rows_a_period(P.rows.n, row, wide_period_rows);
        else if (wide != wide_periods::none && row % 64 != 0)
            k = P.dt == data_type::f32 ? rows_a_line_period(row)
                    : row < 8192     ? rows_a_period16(P.rows.n, row)
                                     : 0;
        if (row >= 2048 && wide == wide_periods::lines && k * row % 32 != 0) k = 0;
        if (k == 0 || P.rows.n < 4 * k) return;
        P.period = k * c;
        P.period_code = tile;
        // Rows off the lines' grid whose period is whole lines: the
        // period's tile fuses its loads where a tile over such rows
        // would (fused_loads16). Zen 4, 25 MiB, ab_runs.sh, % of the
        // roofline: bf16 128x128x28x28 axis 1 (periods of 8 rows of 1568
        // bytes) 59-71 -> 69-77, f16 67-70 -> 79.
        if (!tile->cfg.fused16 && !tile->cfg.prefetch
                && fused_loads16(P, isa, P.rows.n / k, k * c * P.esz)) {
            kernel_config fused = tile->cfg;
            fused.fused16 = true;
            P.period_code = get_code(fused);
        }
        return;
    }
    int64_t period = std::lcm(c, vl);
    if (period > max_vecs * vl) {
        if (isa != isa_t::avx512_core) return;  // AVX2's register columns: whole vectors
        // A tile over periods of whole lines where 4 of them fit
        // (rows_a_period: 80 rows of 49 f32 columns, 128 NCHW 7x7 maps of
        // bf16), so that no load splits a line. Zen 5, 25 MB, bg_runs.sh,
        // % of the roofline, masked period of whole rows -> lines: NCHW
        // reducing C and W of 7x7 maps f32 70-77 -> 94-98, bf16 56-59 ->
        // 78-84, of 14x14 maps f32 67-80 -> 95-101; N x 17 f32 60-61 ->
        // 99-103, f16 N x 33 57-60 -> 78-80, f32 N x 49 55-65 -> 61-76.
        const int64_t k = rows_a_period(P.rows.n, c * P.esz);
        if (k * c * P.esz % 64 == 0 && P.rows.n >= 4 * k) {
            P.period = k * c;
            P.period_code = tile ? tile : period_tile(P, isa, k);
            return;
        }
        period = max_vecs * vl / c * c;  // a masked last vector
        // One row a period: only worth it where the plan's kernel is not
        // a register-column one already (the two-stage plans' tiles).
        if (period == c && narrow_is_reg) return;
    }
    while (period / vl < 4 && 2 * period <= max_vecs * vl) period *= 2;
    // Each outer (or extra reduced) index costs the periodic path two
    // kernel calls and a copy (run_periodic), while a register-column
    // kernel loops over the outer slices itself: where a slice holds few
    // periods, that kernel alone is faster. Zen 4, same-run A/Bs, % of the
    // roofline, NCHW axis 2 of 28x28 maps (7 periods a channel): f32 58 ->
    // 87, bf16 66 -> 80, f16 68 -> 74; 56x56 f32 92 -> 103, bf16 91 -> 95;
    // 40x40 f32 80 -> 91.
    const bool sliced = P.nouter > 0 || P.nextra > 0;
    if (P.rows.n * c < (narrow_is_reg && sliced ? 64 : 4) * period) return;
    kernel_config w;
    w.isa = isa;
    w.family = family_t::vert_reg;
    w.src_dt = w.dst_dt = P.dt;
    w.unroll = static_cast<int>((period + vl - 1) / vl);
    w.fused16 = fused_columns16(P, isa, period * P.esz);
    P.period = period;
    P.period_code = get_code(w);
}

// Whether a two-stage plan whose slab is the kept dim's whole block
// should give each thread whole blocks (plan::out_align = jd.n): a thread
// that gets part of a block reads part of each of its rows, off the
// period, through the slab tile. Where the blocks do not share out
// evenly, a block more or less is a small part of a thread's work only
// from 4 blocks a thread.
bool whole_blocks_split(const plan &P) {
    const int64_t blocks = P.n_out / P.jd.n;
    return P.nchunks > 1 && (blocks % P.nchunks == 0 || blocks >= 4 * P.nchunks);
}

// Fixed blocks that stage dst write whole lines from a stage only where a
// call's dst starts on a line: each thread's chunk starts on one (dst
// dense: outputs lcm(a slice's dst bytes, 64) apart, whole slices), where
// whole slices left the second thread's dst off a line whenever the
// slices did not share out in lines, and its every slice then wrote a
// few bytes of a line as it went. Zen 4, batch_ab.sh, 3-4 rounds, % of
// the roofline, NCHW at 25 MiB reducing H: f32 3x87381x5x5 (262143
// slices) 56 -> 84, 7x7 81-83 -> 92-93, bf16/f16 3x3 56-62 -> 82-92, 5x5
// 57-61 -> 72-74, 9x9 61-67 -> 66-78; reducing N and H, 3x3 63-67 ->
// 82-87, the others alike.
int64_t staged_out_align(const plan &P) {
    if (!dst_dense_in_flat_order(P)) return P.jd.n;
    return staged_dst_bytes(P.jd.n * P.esz) / P.esz;
}

} // namespace

void choose_kernels(plan &P, isa_t isa) {
    kernel_config cfg;
    cfg.isa = isa;
    cfg.family = P.kind == plan_kind::inner ? family_t::inner : family_t::vert_tile;
    cfg.src_dt = cfg.dst_dt = P.dt;
    if (P.kind == plan_kind::vertical) {
        const int vl = isa == isa_t::avx512_core ? 16 : 8;
        const int max_vecs = isa == isa_t::avx512_core ? 16 : 8;
        // AVX2 f32 also takes columns past whole vectors, up to 7 vectors
        // (the last one's mask in the eighth accumulator's register),
        // where a slice went a tile call each, its last vector's columns
        // one at a time. Capped to AVX2 on Zen 4, NCHW reducing H, %
        // of the roofline: 14x14 maps 33 -> 78, 28x28 58 -> 79; 7x7 12 ->
        // 15 (the general loop's cost a slice), 64-66 with AVX2's f32
        // fixed blocks (fixed_block).
        // AVX2 16-bit: columns of 4 or more, not a whole number of 8;
        // the kernel is made for the plan's column count (the last
        // vector's bytes in the code, gen_vertical_reg.hpp, partial16),
        // where a tile took them. Capped to AVX2 on Zen 4, benchgraph,
        // % of the roofline, bf16/f16: 771011x17 axis 0 40-43 -> 64-72,
        // 100000x60 17-23 -> 73-92, NCHW axis 2 of 28x28 maps 41-61 ->
        // 74-79; rows of 5 tied.
        const bool avx2_partial = vl == 8 && P.jd.n % vl != 0
                && (P.dt == data_type::f32 ? P.jd.n < 7 * vl : P.jd.n >= 4);
        if (P.jd.n <= max_vecs * vl && (vl == 16 || P.jd.n % vl == 0 || avx2_partial)) {
            cfg.family = family_t::vert_reg;
            cfg.unroll = static_cast<int>((P.jd.n + vl - 1) / vl);
            cfg.partial_last = avx2_partial;
            if (avx2_partial && P.dt != data_type::f32) cfg.block_cols = static_cast<int>(P.jd.n);
            cfg.fused16 = fused_columns16(P, isa, P.rows.ss);
            P.out_align = P.jd.n;  // the kernel takes whole column groups
            if (fixed_block(P, isa)) {
                cfg.block_rows = static_cast<int>(P.rows.n);
                cfg.block_cols = static_cast<int>(P.jd.n);
                pack_slices(P, cfg);
                cfg.stream_dst = stream_dst(P, isa, cfg);
                if (cfg.stream_dst) P.out_align = staged_out_align(P);
                // An extra reduced dim (NCHW reducing N and H) inside the
                // calls, where the blocks accumulate.
                cfg.block_batch = P.nextra > 0 && fixed_blocks_accumulate(cfg);
            } else if (fold_lines(P, isa)) {
                cfg.fold_cols = static_cast<int>(P.jd.n);
            }
        }
    }
    const bool far_rows_16bit = P.dt != data_type::f32 && isa == isa_t::avx512_core
            && P.kind == plan_kind::vertical && P.rows.n >= 16
            && P.rows.ss >= vertical_tile_bytes;
    const bool from_memory = prefetch_src(P.src_bytes,
            far_rows_16bit ? streams::many_16bit_far : streams::many);
    // The prefetching tiles fuse their loads anyway: one config for both.
    const bool fused16 = !from_memory && fused_loads16(P, isa, P.rows.n, P.rows.ss);
    if (P.kind == plan_kind::inner) {
        // Enough accumulators to hide latency, few enough that folding them
        // stays cheap next to a short row.
        const int vl = isa == isa_t::avx512_core ? 16 : 8;
        const int max_unroll = isa == isa_t::avx512_core ? 8 : 4;
        const int64_t vecs = P.n / vl;
        cfg.unroll = 2;
        while (cfg.unroll < max_unroll && vecs >= 4 * cfg.unroll) cfg.unroll *= 2;
        // AVX2 takes rows of 2-7 (16-bit 2-16) as tiny rows (gen_inner_tiny.cpp) and
        // longer ones as blocks (a partial last vector overlapping the one
        // before); rows of one element one output at a time.
        const bool long_words = isa == isa_t::avx512_core && intel_cpu();
        if (inner_blocks_take(P.dt, P.n, long_words) && (isa == isa_t::avx512_core || P.n >= 2))
            cfg.block_n = static_cast<int>(P.n);
        cfg.prefetch = prefetch_src(P.src_bytes, streams::one);
        // The long rows (no blocks) and AVX-512's word blocks (rows of 32
        // or more) take fused16; other blocks have no use for it.
        cfg.fused16 = (cfg.block_n == 0 || cfg.block_n >= 32)
                && fused_rows16(P, isa, cfg.block_n == 0);
        cfg.stream_dst = stream_dst(P, isa, cfg);
    } else if (cfg.family != family_t::vert_reg) {
        cfg = tile_config(isa, P.dt, from_memory, fused16);
        choose_tile_prefetch(P, isa, from_memory, cfg);
        cfg.stream_dst = stream_dst(P, isa, cfg);
    }
    P.code = get_code(cfg);
    if (P.kind == plan_kind::vertical) plan_fixed_tiles(P, isa, cfg);
    // 16-bit rows of 2-8 KiB off the lines' grid read split loads in a
    // tile, without fused loads; a period of 2-6 of them reads wide rows,
    // whole lines where 2 rows make them (fused again). Zen 4, ab_builds,
    // 10 rounds, 2 buffers, % of the roofline, [N x W] axis 0 at 25 MiB,
    // none -> a period: bf16 W=2000 72 -> 91, 1250 66 -> 78, f16 2000 82
    // -> 84, 1250 77 -> 79; rows on the grid alike (bf16 W=1600, 3200,
    // 4000) or worse (NCHW 64x64x56x56 axis 1, 6272 B, bf16 88 -> 84, f16
    // 89 -> 85; channels-last axis 2, 7168 B, bf16 82 -> 72): not taken.
    // f32 rows take the fewest that make whole lines (plan_period); the
    // most up to 8 had lost 2-6 points at W=1000-2000.
    if (P.kind == plan_kind::vertical && P.njsub == 1 && P.jd.ss == P.esz)
        plan_period(P, isa, P.jd.n, cfg.family == family_t::vert_tile ? P.code : nullptr,
                wide_periods::any);
    // Rows of 256-511 columns one after another: a 16-bit tile of under
    // 512 columns has no skewed block (16 vectors), and its straight
    // passes keep three statistics and a running max per pass; register
    // columns 256 at a time do better (Zen 4, 25 MiB, N x 128 x 300 axis
    // 1: bf16 648 -> 330 us, f32 717-913 -> 488-506 us; from 512 columns
    // on they lost, 1568: 316 -> 630 us). Slices of under 16 rows at any
    // width gained as much for 16-bit while the tiles took such rows in
    // passes of halves; in one pass of the rest (tile()) the tiles read
    // them as well.
    const bool rows_follow = P.kind == plan_kind::vertical && cfg.family == family_t::vert_tile
            && isa == isa_t::avx512_core && P.njsub == 1 && P.jd.ss == P.esz
            && P.rows.ss == P.jd.n * P.esz;
    kernel_config w = cfg;
    w.family = family_t::vert_reg;
    w.prefetch = w.fused16 = w.prefetch_pass = false;  // tiles' only
    w.prefetch_bytes = w.prefetch_l1_bytes = 0;
    if (rows_follow && P.jd.n <= chunk_cols_max) {
        w.unroll = static_cast<int>(max_period / 16);
        P.chunk_code = get_code(w);
    }
    // Up to 512 columns a whole row in registers, the rows read in
    // memory order, where the chunks read each row's first 256
    // columns, then its rest, a pass each. Zen 4, batch_ab.sh, 2 rounds,
    // % of the roofline, [N x 512 x W] reducing the 512 at 25 MiB, chunks
    // -> wide: f32 W=280-400 88-90 -> 98-100; bf16/f16 76-81 -> 97-98; f16
    // NCHW 64x1024x20x20 reducing C (52 MB) 36 -> 75; f32 W=464-512
    // (chunks to 511, tiles at 512) 50-84 -> 94-99, at 100 MiB 55-90 ->
    // 104-118; bf16/f16 W=464-500 (4 rounds) 74-78 -> 86-93, 100 MiB
    // W=480 45 -> 91-93; W=512 (which took periods of whole rows) 74-84
    // -> 86, 99-107 -> 103-117 (run_range.cpp, run_wide).
    // f32 past 512 columns spills the vectors past 30 to the stack: W=600
    // and 784 79-85 -> 95, NCHW reducing C of 24x24 maps 85-88 -> 97-107
    // (25 and 100 MiB), of 28x28 85 -> 92 and 100 -> 99; wider lost
    // from memory (NCHW 32x32 and 40x40 at 100 MiB 106-109 -> 75-80)
    // and gained 2-6 points in the L3. 16-bit spilling two statistics
    // lost to the tiles (W=600-784 75-81 -> 74-78, 1568-2048 84 -> 75-79).
    if (rows_follow && P.jd.n <= wide_max_cols(P.dt)) {
        w.unroll = static_cast<int>((P.jd.n + 15) / 16);
        // f32 from memory prefetches 4 KiB ahead (same A/B, 3 rounds,
        // 61-100 MB: [N x 512 x W] W=280-448 96-102 -> 111-116, NCHW
        // 20x20 reducing C 98 -> 112); 16-bit lost with it (bf16 N x 512
        // x 300 102 -> 80, f16 20x20 78-95 -> 65-85).
        w.prefetch = P.dt == data_type::f32 && prefetch_src(P.src_bytes, streams::one);
        P.wide_code = get_code(w);
    }
    // Batches go to the fixed blocks only: none of these kernels take them.
    if (P.code->cfg.block_batch && (P.period_code || P.chunk_code || P.fixed_code)) {
        kernel_config plain = P.code->cfg;
        plain.block_batch = false;
        P.code = get_code(plain);
    }
    // Short inner rows whose rows dim is far apart (more than a block of 16
    // outputs): one block would read 16-output pieces of every row, as many
    // streams as rows. Two stages read src in memory order instead. Below
    // 8 rows tiny rows take the trees (tiny_tree_max_rows), other short
    // rows the blocks.
    const int64_t row_bytes = P.n * P.esz;
    // Rows that follow the whole kept dim's block of short rows (NCHW
    // reducing C and W of 7x7 maps: src is then one [C x H*W] block per
    // N) go in two stages too, the first over that block's few columns
    // by a period (plan_period).
    const bool rows_after_block = P.rows.ss == P.jd.n * row_bytes;
    if (P.kind == plan_kind::inner && !P.two_level && P.nextra == 0 && P.rows.n >= 8
            && row_bytes * 16 <= slab_bytes && P.jd.ss == row_bytes
            && (P.rows.ss >= 16 * row_bytes || rows_after_block)) {
        const bool period = rows_after_block && P.jd.n * row_bytes <= slab_bytes;
        kernel_config slab = tile_config(isa, P.dt, from_memory, fused16);
        if (!period && wide_slabs(P, isa)) {
            P.slab_width = wide_slab_bytes;
            slab.prefetch = true;
            slab.prefetch_bytes = 4096;
        }
        P.slab_code = get_code(slab);
        if (rows_after_block && whole_blocks_split(P)) P.out_align = P.jd.n;
        // A block of rows of 2 KiB and more off the lines' grid: periods
        // of lines only. Zen 4, ab_builds, 1 buffer, 16 rounds, % of the
        // roofline, NCHW reducing C and W, none -> a period: f32 33x33
        // maps (8 rows of 4356 bytes, half lines) 60-62 -> 78-88, 35x35
        // 54-64 -> 65-72, 45x45 69-71 -> 70-85; bf16 38x38 (8 rows of
        // 2888 bytes, whole lines) 75 -> 96; but rows_a_period's other
        // picks, bf16 33x33 (7 rows of 2178 bytes) 78 -> 65, f16 75 ->
        // 80, 45x45 alike.
        if (period) plan_period(P, isa, P.jd.n * P.n, P.slab_code, wide_periods::lines);
        if (period && !P.period_code) {
            // The slab is the kept dim's whole block, its rows one after
            // another: prefetch as a tile over such rows does
            // (choose_tile_prefetch). From memory, the next pass's rows
            // instead of each row 1 KiB ahead: Zen 4, benchgraph,
            // alternate runs, % of the roofline, f32 64x64x64x64 axes 1,3
            // (64 MiB) 84-85 -> 95-96, 128x64x56x56 (98 MiB) 99-103 ->
            // 110-116, bf16 128x64x64x64 88-99 -> 95-101, f16 97-98 ->
            // 98-101. From half the L3 (16-bit, next_pass_from_l3) they
            // read 72-86% in every run, where without it they read 68-75%
            // in some minutes and 79-90% in others (NCHW 64x64x56x56 axes
            // 1,3, 6 runs each: means f16 78.5 against 77.8, bf16 79.4
            // against 79.8).
            plan block = P;
            block.jd.n = P.jd.n * P.n;
            choose_tile_prefetch(block, isa, from_memory, slab);
            P.slab_code = get_code(slab);
        }
    }
    // A period's tile keeps its running max in run_periodic's buffer.
    const bool tiles = (P.kind == plan_kind::vertical && cfg.family == family_t::vert_tile)
            || P.slab_code;
    if (tiles && P.rows.n > 4) {
        const int64_t widest = P.slab_code ? P.slab_width : P.jd.n * P.esz;
        P.tile_scratch_bytes = std::min<int64_t>(widest, vertical_tile_bytes) + 4096;
    }
    if (P.two_level && dst_dense_in_flat_order(P))
        P.combine_code = get_code(tile_config(isa, P.dt, false));
    // Transposed outputs stream their dst lines (where aligned; else they
    // prefetch the next chunk's) from half the L3's size on; below it the
    // prefetches cost more than the misses they save, and streaming would
    // push dst out of the caches (transpose.hpp). Zen 4, channels-last src
    // reducing N into NCHW, prefetching, ab_builds
    // with two copies of each build, per-round medians of the ratio to the
    // roofline, with -> without: f32 2x128x56x56 (3.2 MB) 35-38 -> 39-40%,
    // 4x64x28x28 50-52 -> 55%, f16 16x64x32x32 66-69 -> 69-70%; f32
    // 32x64x56x56 (25.7 MB) 76-81 -> 72-81%, 3 runs (session 20).
    P.stream_transposed = P.kind == plan_kind::vertical && P.njsub > 1
            && prefetch_src(P.src_bytes, streams::many_16bit_far);
}

void keep_dst_cached(plan &P) {
    for (auto *code : {&P.code, &P.slab_code, &P.combine_code, &P.period_code, &P.chunk_code,
                 &P.wide_code, &P.fixed_code}) {
        if (!*code || !(*code)->cfg.stream_dst) continue;
        kernel_config cfg = (*code)->cfg;
        cfg.stream_dst = false;
        *code = get_code(cfg);
    }
    P.stream_transposed = false;
}

} // namespace crest::impl::jit
