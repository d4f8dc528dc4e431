// make_plan's second half (plan.hpp, choose_kernels): with the plan's
// loops set, which generated kernels run them. The thresholds come from
// same-run A/Bs on the machines the comments name.
#include "backend/jit/plan.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <tuple>

#include "backend/jit/generators.hpp"
#include "backend/jit/isa.hpp"

namespace crest::impl::jit {

namespace {

// The widest rows (columns) that plan::chunk_code takes.
constexpr int64_t chunk_cols_max = 511;

// How a plan's kernels read src: one stream a thread (long inner rows) or
// many (vertical tiles, one per row of a pass); for the last, AVX-512's
// 16-bit tiles whose passes take 16 rows, each at least a tile's width
// from the next.
enum class streams { one, many, many_16bit_far };

// Whether the kernels should prefetch src, as when it streams from memory:
// too big to stay in the L3 from one call to the next (which other data
// shares). There software prefetching helps, from the L3 it costs
// (gen_vertical.cpp, gen_inner.cpp). At exactly the L3's size it still
// helped the vertical tiles, many streams a thread (f16 4096x4096 axis 2
// on Zen 4: 57% -> 60%, session 12 68-71% -> 78-79%), and cost the inner
// rows, one stream a thread (bf16 4096x4096 axis 3: 72-86% without, 63-78%
// with): those take it only past the L3's size (past twice it, session
// 19, read no better in either state of the 64 MiB inner rows).
// AVX-512's 16-bit tiles over rows far apart take it from half the L3's
// size: there their two statistics per load, which wait on it, kept too
// few loads in flight (session 13, % of the roofline without -> with:
// bf16 and f16 channels-last 48x64x56x56 and 64x64x56x56 axis 0, 18-25
// MiB, 51-70 -> 71-84; f16 1x96x400x256 and 1x48x512x384 axis 1 67-75 ->
// 79-83), while at 12.5 MiB it still cost 12 points. Rows close together
// or few (bf16 2048x4096 axis 0, 4x2048x1024 axis 0), the two-stage inner
// plans and the f32 tiles lost or gained nothing there, and AVX2's 16-bit
// tiles (passes of 4 rows, not skewed) lost 5-7 points. Small problems
// never ask for the L3's size (a file read, once per process).
bool prefetch_src(int64_t src_bytes, streams kind) {
    constexpr int64_t unknown_l3 = 32 << 20;
    if (src_bytes <= (1 << 20)) return false;
    const int64_t l3_bytes = l3_cache_bytes();
    const int64_t l3 = l3_bytes > 0 ? l3_bytes : unknown_l3;
    switch (kind) {
        case streams::one: return src_bytes > l3;
        case streams::many: return src_bytes >= l3;
        case streams::many_16bit_far: return src_bytes >= l3 / 2;
    }
    return false;
}

// AVX-512's 16-bit register columns (vert_reg, kernel_config::fused16):
// from half the L3's size on, where rows start on lines, the checked
// slices' two statistics read each row from memory instead of a load and
// two maxes. Zen 4, ab_builds with two copies of each build (one child
// per copy: a child's memory alone moved identical builds by 10% at 32
// MiB), per-round medians of the ratio to the roofline: f16 64x64x64x64
// axes 0,2 (32 MiB) 87-93% -> 100-103% in two runs. From the L2 (bf16
// 16x32x32x64 axes 0,2, 2 MiB) it cost 24.0 -> 25.3 us in one A/B. The
// exact slices (three statistics, after a lane of negatives only) read
// equal either way (negative data) and keep the load.
bool fused_columns16(const plan &P, isa_t isa) {
    return P.dt != data_type::f32 && isa == isa_t::avx512_core && P.rows.ss % 64 == 0
            && prefetch_src(P.src_bytes, streams::many_16bit_far);
}

// AVX-512's 16-bit tiles in passes of 16 rows (kernel_config::fused16),
// by fused_columns16's rule: from half the L3's size on, where the rows
// lie a multiple of 64 bytes apart, the skewed loads go straight into both statistics, as the
// prefetching tiles' do. Zen 4, same-run A/Bs, % of the roofline,
// register -> fused: bf16 64x64x56x56 axis 1 (rows 6272 B apart) 56-73 ->
// 79-92, f16 66 -> 77; f16 16x64x112x112 axis 1 68-71 -> 78-84; bf16
// 2600x4800 axis 0 73-76 -> 84-85; bf16 3072x4096 axis 0 (8 KiB) 69-70 ->
// 80, f16 70 -> 80; channels-last axis 2 (7168 B) bf16 67 -> 73-75, f16
// 69-73 -> 74-76; f16 48x64x64x64 axis 1 67-68 -> 67-70. From the L3 (f16
// 1x128x160x160 axis 1, 6 MiB) it cost 90 -> 86, and over rows not
// 64-byte aligned (bf16 1x128x150x150 axis 1) 86 -> 61: each second
// read splits a line there.
bool fused_loads16(const plan &P, isa_t isa) {
    return P.rows.n >= 16 && fused_columns16(P, isa);
}

// Whether a prefetching vertical tile should run its prefetches
// 4 KiB ahead (kernel_config::prefetch_bytes): 16-bit tiles of
// rows at least 32 KiB wide, where 1 KiB ahead came too late. Zen 4,
// same-run A/Bs, % of the roofline, 1 KiB -> 4 KiB ahead for every tile:
// channels-last 64x64x56x56 axis 0 (64 KiB tiles) bf16 78 -> 82, f16 78
// -> 83; f16 1x96x400x256 axis 1 70 -> 76; but 8-10 KiB tiles lost (f16
// 4096x4096 axis 2 80 -> 75, bf16 2600x4800 axis 0 61 -> 57: half the
// prefetches of a pass land in rows it reads anyway), and f32 (from
// memory only) gained nothing (64x256x56x56 axis 0 100 -> 99).
bool far_prefetch(const plan &P) {
    return P.dt != data_type::f32 && std::min<int64_t>(P.jd.n * P.esz, vertical_tile_bytes) >= 32 * 1024;
}

// Whether tiles over rows one after another, from half the L3's size to
// the prefetching tiles' size, prefetch the next pass's rows
// (kernel_config::prefetch_pass): rows of at most 4 KiB, and 16-bit rows
// of up to 16 KiB but for powers of two. The 16-bit passes have two
// statistics wait on each load, so fewer loads stay in flight than f32's
// one. Zen 4, ab_builds with two copies of each build, % of the roofline
// per run, none -> next pass's rows: bf16 64x64x56x56 axis 1 (rows of
// 6272 B) 66-76 -> 76-82, f16 70-74 -> 77-78; bf16 32x128x56x56 axis 1
// 75-77 -> 78-79; f16 4300x3000 axis 0 63-69 (one run 91) -> 67-80; bf16 2600x5000
// axis 0 57-73 -> 65-75; bf16 2100x6144 axis 0 77-82 -> 83-86; f16
// 1800x7000 axis 0 71-74 -> 75-79; bf16 1700x7680 axis 0 77-80 -> 80-85;
// channels-last axis 2 (7168 B) bf16 71-73 -> 74-77, f16 70-72 -> 72-74.
// Rows of 8 KiB lost (bf16 2048x4096 axis 0 82-89 -> 78-79, f16 85-91 ->
// 80-84), 16 KiB tied (f16 1600x8192 77-80 either way), 25 KB lost (f16
// 16x64x112x112 axis 1 78-87 -> 72-73); f32 rows of 6272 B gained about
// 2 points, of 12544 B none.
bool next_pass_from_l3(const plan &P, int64_t row_bytes) {
    const bool pow2 = (row_bytes & (row_bytes - 1)) == 0;
    return row_bytes <= 4096 || (P.dt != data_type::f32 && row_bytes <= 16 * 1024 && !pow2);
}

// How a vertical tile (cfg, from tile_config) prefetches: the first rule
// that fits. Rows that follow one another with a tile as wide as a row
// read a pass's rows as one contiguous block, which the next pass follows.
void choose_tile_prefetch(const plan &P, isa_t isa, bool from_memory, kernel_config &cfg) {
    const int64_t row_bytes = P.jd.n * P.esz;
    const bool rows_follow = isa == isa_t::avx512_core && P.rows.ss == row_bytes;
    const bool half_l3 = prefetch_src(P.src_bytes, streams::many_16bit_far);
    if (rows_follow && P.rows.n < 16 && row_bytes <= vertical_tile_bytes && half_l3) {
        // Slices of under 16 rows (channels-last reducing H or W of small
        // maps), from half the L3's size: each slice is a few short
        // streams, then the next slice; the rows prefetch 16 KiB ahead, a
        // slice or so. Zen 4, same-run A/Bs, % of the roofline: bf16
        // 14x14x512 reducing W 25 -> 44-48 (59 -> 86 in a faster hour),
        // f32 44 -> 49-64, f16 7x7x2048 48 -> 50-64 (8, 16 and 32 KiB
        // ahead), f32 7x7x2048 reducing H 50 -> 59.
        cfg.prefetch = true;
        cfg.prefetch_bytes = 16 * 1024;
    } else if (rows_follow && from_memory && row_bytes <= 16 * 1024) {
        // From memory, passes of rows up to 16 KiB take the next pass's
        // rows instead of each row's line 1 KiB ahead (which, at the row's
        // end, falls into rows the pass reads): 4096x4096 axis 2 f16 87 ->
        // 90, bf16 86-89 -> 94, f32 113 -> 114; 64x64x64x64 axis 1 bf16 82
        // -> 89, f32 109 -> 114; 2x2048x4096 axis 1 f32 110 -> 117.
        cfg.prefetch = false;
        cfg.fused16 = P.dt != data_type::f32 && P.rows.ss % 64 == 0;  // as the prefetching tiles
        cfg.prefetch_pass = true;
    } else if (rows_follow && !from_memory && half_l3 && next_pass_from_l3(P, row_bytes)) {
        // Short rows (a pass reads 16 of them, streams too short for the
        // hardware prefetchers; next_pass_from_l3) from half the L3's
        // size: the next pass's rows, in memory order. f32 channels-last
        // 14x14x512 and 7x7x512 reducing H and W 50-53 -> 65-68, NCHW
        // 28x28 reducing C f32 62-69 -> 73, bf16 52-68 -> 61-70; f32 rows
        // of 8 KiB and more (1300x4800 85 -> 79 in one hour, 59 -> 71 and
        // 80 -> 87 in another) and 8 MiB (f32 8x64x64x64 axis 1 92 -> 74)
        // did not gain.
        cfg.prefetch_pass = true;
    } else if (from_memory && far_prefetch(P)) {
        cfg.prefetch_bytes = 4096;
    } else if (isa == isa_t::avx2 && P.dt != data_type::f32 && !from_memory && half_l3) {
        // AVX2's 16-bit passes (8 rows, not skewed, two statistics
        // waiting on each load) from half the L3's size: each row's line
        // 512 bytes ahead into L1. Capped to AVX2 on Zen 4, ab_runs.sh
        // with two copies of each build, random signs, % of the roofline:
        // bf16 channels-last 64x64x56x56 axis 0 57-60 -> 68-72 (128 B
        // ahead 63-68, 256 B 64-67, 1 and 2 KiB 62-66; prefetcht1 at 1 or 4
        // KiB 58-70), f16 NCHW 64x64x56x56 axis 1 49-52 -> 53-54, bf16
        // 44-48 -> 46-55, f16 channels-last axis 2 (7168 B rows) 48-55 ->
        // 53-60; at 12.8 MB bf16 channels-last axis 0 65-70 -> 68-79. It
        // lost at 6.4 MB (f16 NCHW 16x64x56x56 axis 1 78-80 -> 75) and 2
        // MiB (bf16 16x64x32x32 axis 1 60-66 -> 50-59), and from memory
        // beside the tiles' prefetch (f16 4096x4096 axis 0 62-66 -> 57-62);
        // f32 (one max a load) tied.
        cfg.prefetch_l1_bytes = 512;
    }
}

// Whether the register columns unroll the plan's slices
// (kernel_config::block_rows): few rows of at most 512 bytes, each row's
// vectors ending inside the next row (which the fixed blocks' 16-bit rows
// read whole). Zen 4, same-run A/Bs, % of the roofline, NCHW reducing
// H: 64x2048x7x7 f32 70-72 -> 89-100, bf16 23-36 -> 75-85, f16 23-39 ->
// 56-87; 256x256x9x9 f32 50-52 -> 71-109, bf16 30-45 -> 57-75, f16 28-46
// -> 55-57; 64x1024x10x5 f32 28 -> 63, 16-bit 15 -> 34.
bool fixed_block(const plan &P, isa_t isa, int64_t max_bytes = 512) {
    return isa == isa_t::avx512_core && P.rows.n >= 2 && P.rows.n <= 16
            && P.jd.n * P.esz <= max_bytes && P.rows.ss >= P.jd.n * P.esz;
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
    if (P.dt == data_type::f32 || tile.family != family_t::vert_tile || P.njsub != 1
            || P.jd.ss != P.esz || !fixed_block(P, isa, INT64_MAX)
            || prefetch_src(P.src_bytes, streams::many_16bit_far))
        return;
    kernel_config w;
    w.isa = isa;
    w.family = family_t::vert_reg;
    w.src_dt = w.dst_dt = P.dt;
    w.unroll = 16;  // its general loop is never called: whole fresh slices only
    w.block_rows = static_cast<int>(P.rows.n);
    w.block_cols = static_cast<int>(P.jd.n);
    P.fixed_code = get_code(w);
}

// How many rows of row_bytes a tile's period takes (at most
// max_period_bytes): first a period of whole lines, so that no pass splits
// its loads; then no rows left over, which the plan's own kernel would
// fold one by one; then the most. Zen 4, same-run A/Bs, 25 MiB, 128 rows
// of 784 columns: 10 rows a period (8 left over) read f16 at 236 us, 4
// or 8 rows at 171 us; bf16 608-632 -> 477-519 us (4 rows), 330 us (8).
int64_t rows_a_period(int64_t rows, int64_t row_bytes) {
    int64_t best = 2;
    auto score = [&](int64_t k) {
        return std::make_tuple((k * row_bytes) % 64 == 0, -(rows % k), k);
    };
    for (int64_t k = 3; k * row_bytes <= max_period_bytes; ++k)
        if (score(k) > score(best)) best = k;
    return best;
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
void plan_period(plan &P, isa_t isa, int64_t c, const std::shared_ptr<const generated_code> &tile) {
    const int64_t vl = isa == isa_t::avx512_core ? 16 : 8;
    const int64_t max_vecs = isa == isa_t::avx512_core ? 16 : 8;
    const bool narrow_is_reg = !tile;
    const bool few = c * P.esz < 64 || (c % vl != 0 && c <= max_vecs * vl);
    if (P.rows.ss != c * P.esz) return;
    if (!few) {
        // Rows of 512 columns to 2 KiB, for a tile kernel: several whole
        // rows a period (rows_a_period), so that its passes take wide
        // rows. A 16-bit tile of under 32 vectors barely fills its
        // skewed blocks (Zen 4, 25 MiB, bf16 N x 128 x 784 axis 1: 812-887
        // -> 540-589 us); at 1568 columns, and for f32, no gain.
        if (!tile || isa != isa_t::avx512_core || c <= chunk_cols_max || c * P.esz >= 2048)
            return;
        const int64_t k = rows_a_period(P.rows.n, c * P.esz);
        if (P.rows.n < 4 * k) return;
        P.period = k * c;
        P.period_code = tile;
        return;
    }
    int64_t period = std::lcm(c, vl);
    if (period > max_vecs * vl) {
        if (isa != isa_t::avx512_core) return;  // AVX2's register columns: whole vectors
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
    P.period = period;
    P.period_code = get_code(w);
}

} // namespace

void choose_kernels(plan &P, isa_t isa) {
    kernel_config cfg;
    cfg.isa = isa;
    cfg.family = P.kind == plan_kind::inner ? family_t::inner : family_t::vert_tile;
    if (P.kind == plan_kind::vertical) {
        const int vl = isa == isa_t::avx512_core ? 16 : 8;
        const int max_vecs = isa == isa_t::avx512_core ? 16 : 8;
        if (P.jd.n <= max_vecs * vl && (vl == 16 || P.jd.n % vl == 0)) {
            cfg.family = family_t::vert_reg;
            cfg.unroll = static_cast<int>((P.jd.n + vl - 1) / vl);
            cfg.fused16 = fused_columns16(P, isa);
            P.out_align = P.jd.n;  // the kernel takes whole column groups
            if (fixed_block(P, isa)) {
                cfg.block_rows = static_cast<int>(P.rows.n);
                cfg.block_cols = static_cast<int>(P.jd.n);
            }
        }
    }
    cfg.src_dt = cfg.dst_dt = P.dt;
    const bool far_rows_16bit = P.dt != data_type::f32 && isa == isa_t::avx512_core
            && P.kind == plan_kind::vertical && P.rows.n >= 16
            && P.rows.ss >= vertical_tile_bytes;
    const bool from_memory = prefetch_src(P.src_bytes,
            far_rows_16bit ? streams::many_16bit_far : streams::many);
    // The prefetching tiles fuse their loads anyway: one config for both.
    const bool fused16 = !from_memory && fused_loads16(P, isa);
    if (P.kind == plan_kind::inner) {
        // Enough accumulators to hide latency, few enough that folding them
        // stays cheap next to a short row.
        const int vl = isa == isa_t::avx512_core ? 16 : 8;
        const int max_unroll = isa == isa_t::avx512_core ? 8 : 4;
        const int64_t vecs = P.n / vl;
        cfg.unroll = 2;
        while (cfg.unroll < max_unroll && vecs >= 4 * cfg.unroll) cfg.unroll *= 2;
        // AVX2 takes blocks of whole vectors, and of f32 rows longer than
        // a vector (an overlapping last vector), and rows of 2-7 its tiny
        // rows (gen_inner_tiny.cpp); the rest one output at a time.
        const bool avx2_tiny = isa == isa_t::avx2 && P.n >= 2 && P.n < vl;
        const bool avx2_overlap = isa == isa_t::avx2 && P.dt == data_type::f32 && P.n > vl;
        if (P.n <= inner_block_max_n(P.dt)
                && (isa == isa_t::avx512_core || P.n % vl == 0 || avx2_tiny || avx2_overlap))
            cfg.block_n = static_cast<int>(P.n);
        cfg.prefetch = prefetch_src(P.src_bytes, streams::one);
    } else if (cfg.family != family_t::vert_reg) {
        cfg = tile_config(isa, P.dt, from_memory, fused16);
        choose_tile_prefetch(P, isa, from_memory, cfg);
    }
    P.code = get_code(cfg);
    if (P.kind == plan_kind::vertical) plan_fixed_tiles(P, isa, cfg);
    if (P.kind == plan_kind::vertical && P.njsub == 1 && P.jd.ss == P.esz)
        plan_period(P, isa, P.jd.n, cfg.family == family_t::vert_tile ? P.code : nullptr);
    // Rows of 256-511 columns one after another: a 16-bit tile of under
    // 512 columns has no skewed block (16 vectors), and its straight
    // passes keep three statistics and a running max per pass; register
    // columns 256 at a time do better (Zen 4, 25 MiB, N x 128 x 300 axis
    // 1: bf16 648 -> 330 us, f32 717-913 -> 488-506 us; from 512 columns
    // on they lost, 1568: 316 -> 630 us). Slices of under 16 rows at any
    // width gained as much for 16-bit while the tiles took such rows in
    // passes of halves; in one pass of the rest (tile()) the tiles read
    // them as well.
    if (P.kind == plan_kind::vertical && cfg.family == family_t::vert_tile
            && isa == isa_t::avx512_core && P.njsub == 1 && P.jd.ss == P.esz
            && P.rows.ss == P.jd.n * P.esz && P.jd.n <= chunk_cols_max) {
        kernel_config w = cfg;
        w.family = family_t::vert_reg;
        w.unroll = static_cast<int>(max_period / 16);
        w.prefetch = w.fused16 = w.prefetch_pass = false;  // tiles' only
        w.prefetch_bytes = w.prefetch_l1_bytes = 0;
        P.chunk_code = get_code(w);
    }
    // Short inner rows whose rows dim is far apart (more than a block of 16
    // outputs): one block would read 16-output pieces of every row, as many
    // streams as rows. Two stages read src in memory order instead.
    const int64_t row_bytes = P.n * P.esz;
    // Rows that follow the whole kept dim's block of short rows (NCHW
    // reducing C and W of 7x7 maps: src is then one [C x H*W] block per
    // N) go in two stages too, the first over that block's few columns
    // by a period (plan_period).
    const bool rows_after_block = P.rows.ss == P.jd.n * row_bytes;
    if (P.kind == plan_kind::inner && !P.two_level && P.nextra == 0 && P.rows.n >= 8
            && row_bytes * 16 <= slab_bytes && P.jd.ss == row_bytes
            && (P.rows.ss >= 16 * row_bytes || rows_after_block)) {
        P.slab_code = get_code(tile_config(isa, P.dt, from_memory, fused16));
        if (rows_after_block && P.jd.n * row_bytes <= slab_bytes)
            plan_period(P, isa, P.jd.n * P.n, P.slab_code);
    }
    const bool tiles = (P.kind == plan_kind::vertical && cfg.family == family_t::vert_tile)
            || P.slab_code;
    if (tiles && P.rows.n > 4) {
        int64_t widest = P.slab_code ? slab_bytes : P.jd.n * P.esz;
        if (P.period_code && P.period_code->cfg.family == family_t::vert_tile)
            widest = std::max(widest, P.period * P.esz);
        P.tile_scratch_bytes = std::min<int64_t>(widest, vertical_tile_bytes) + 4096;
    }
    if (P.two_level && dst_dense_in_flat_order(P))
        P.combine_code = get_code(tile_config(isa, P.dt, false));
    // Transposed outputs prefetch their next chunk's dst lines from half
    // the L3's size on; below it the prefetches cost more than the misses
    // they save. Zen 4, channels-last src reducing N into NCHW, ab_builds
    // with two copies of each build, per-round medians of the ratio to the
    // roofline, with -> without: f32 2x128x56x56 (3.2 MB) 35-38 -> 39-40%,
    // 4x64x28x28 50-52 -> 55%, f16 16x64x32x32 66-69 -> 69-70%; f32
    // 32x64x56x56 (25.7 MB) 76-81 -> 72-81%, 3 runs (session 20).
    P.prefetch_transposed = P.kind == plan_kind::vertical && P.njsub > 1
            && prefetch_src(P.src_bytes, streams::many_16bit_far);
}

} // namespace crest::impl::jit
