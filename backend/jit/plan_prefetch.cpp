// How the vertical tiles and inner rows read src against the caches
// (plan_prefetch.hpp): from which sizes they prefetch, how far, and which
// 16-bit kernels read both statistics straight from memory. The
// thresholds come from same-run A/Bs on the machines the comments name.
#include "backend/jit/plan_prefetch.hpp"

#include <algorithm>
#include <cstdint>

#include "backend/jit/generators.hpp"
#include "backend/jit/isa.hpp"

namespace crest::impl::jit {

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
// plans (16 KiB slabs; wide ones prefetch, wide_slabs) and the f32 tiles
// lost or gained nothing there, and AVX2's 16-bit
// tiles (passes of 4 rows, not skewed) lost 5-7 points. Small problems
// never ask for the L3's size (a file read, once per process).
bool prefetch_src(int64_t src_bytes, streams kind) {
    if (src_bytes <= (1 << 20)) return false;
    const int64_t l3 = planned_l3_bytes();
    switch (kind) {
        case streams::one: return src_bytes > l3;
        case streams::many: return src_bytes >= l3;
        case streams::many_16bit_far: return src_bytes >= l3 / 2;
        case streams::slabs_16bit_far: return 3 * src_bytes >= 2 * l3;
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
// equal either way (negative data) and keep the load. The periodic
// plans' register columns (rows of 2, 3, 4 or 6 columns read as periods
// of whole lines, plan_period) gained as much: bf16 6553600x2 axis 0, 25
// MiB, ab_runs.sh with two copies of each build, 70-96 -> 87-113%, f16
// 83-87 -> 89-90%; channels-last 64x3x224x224 axes 2,3 bf16 79-95 ->
// 84-90%.
namespace {
// AVX-512's 16-bit rows row_stride bytes apart, each on a line when src is.
bool fusable16(const plan &P, isa_t isa, int64_t row_stride) {
    return P.dt != data_type::f32 && isa == isa_t::avx512_core && row_stride % 64 == 0;
}
} // namespace

bool fused_columns16(const plan &P, isa_t isa, int64_t row_stride) {
    return fusable16(P, isa, row_stride) && prefetch_src(P.src_bytes, streams::many_16bit_far);
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
bool fused_loads16(const plan &P, isa_t isa, int64_t rows, int64_t row_stride) {
    return rows >= 16 && fused_columns16(P, isa, row_stride);
}

// AVX-512's 16-bit long inner rows and word blocks
// (kernel_config::fused16), by fused_columns16's rule for each output's
// and each row's start: the checked pass's two statistics, and the
// blocks' two maxes, read each vector from memory (the word blocks'
// figures in gen_inner_blocks16.cpp). Zen 4, ab_runs.sh with two copies
// of each build, % of the roofline, load -> fused: bf16 NCHW 64x64x56x56
// axes 2,3 (25 MiB) 65-80 -> 76-87, f16 68-84 -> 82-87, bf16 4096x4096
// axis 3 (32 MiB) 84-88 -> 88-95; from memory (98 MiB) tied. From the L2
// it cost (bf16 4x64x56x56 axes 2,3 91-95 -> 85-90), and rows off the
// lines (bf16 12800x1000, 25 MiB) 71-80 -> 64-77: both reads split a
// line there.
//
// On Intel CPUs (intel_cpu()) the long rows (no blocks) take it
// from 32 MiB whatever the L3's size (a socket's 480 MiB on the Xeon VM
// of session 45): there both maxes from memory, two instructions a line
// where the load made three, read 84-88 -> 91-92% (2 threads) and 13-16
// -> 18-22 GB/s (one) for bf16 NCHW 64x256x56x56 reducing H and W (98
// MiB), f16 1x4x4096x4096 axis 3 (128 MiB) 73 -> 81 (`batch_ab.sh 4`),
// an inexact build with the signed max alone 99%; at 25 MiB 99 -> 99,
// from L2 (bf16 4x64x56x56, 1.6 MiB) 69 -> 64. The word blocks there
// read 81 -> 76 fused and keep their loads.
bool fused_rows16(const plan &P, isa_t isa, bool long_rows) {
    const bool big = prefetch_src(P.src_bytes, streams::many_16bit_far)
            || (long_rows && intel_cpu() && P.src_bytes >= (int64_t(32) << 20));
    return big && fusable16(P, isa, P.jd.ss) && (P.rows.n == 1 || P.rows.ss % 64 == 0);
}

// AVX-512's 16-bit two-stage plans over rows far apart (the slab stage's
// tiles: 16 rows a pass, each row a stream of its own), from two thirds
// of the L3's size on: slabs of 64 KiB of columns whose tiles prefetch
// each row's line 4 KiB ahead, as the single-stage tiles over such rows
// do (far_prefetch). Zen 4 (32 MiB L3), benchgraph, alternate runs of
// each build, % of the roofline, 16 KiB -> 64 KiB prefetching: bf16
// channels-last N x 64 x 56 x 56 axes 0,1: N = 64 (25.7 MB) 72-82 ->
// 78-97, 80 (32 MB) 79-84 -> 96-101, 128 (51 MB, where both prefetch)
// 96-98 -> 103; f16 NCHW axes 0,3 (rows of 112 B): 56 (22.5 MB) 67-79 ->
// 81-89, 64 62-71 -> 84-90, 72 62-71 -> 84-89. Below, 16 KiB slabs
// read better: 48 (19.3 MB) 77-79 -> 69-77, bf16 52 (20.8 MB) 85 -> 73,
// 16 (6.4 MB) 82 -> 65. f32 lost at 25.7 MB (channels-last axes 0,1
// 86-89 -> 71-75, without the prefetch 83-91 -> 77-80).
bool wide_slabs(const plan &P, isa_t isa) {
    return P.dt != data_type::f32 && isa == isa_t::avx512_core
            && prefetch_src(P.src_bytes, streams::slabs_16bit_far);
}

// Tiny rows write a dst of a half to a 16th of src's size, tiles of
// under 16 rows one of a 15th or more. From half the L3's size of both
// together (where they stream from memory in the machine's slower state),
// non-temporal stores save reading each dst line before writing it. Zen
// 4, ab_runs.sh with two copies of each build, % of the roofline, plain
// -> streamed: tiny rows, f32 rows of 2 (25 MiB) 30-32 -> 40-41, rows of
// 4 (16 MiB) 45-49 -> 65-72, rows of 7 53-59 -> 71; bf16 rows of 2 26-32
// -> 39-43, rows of 4 (12.5 MiB) 53-59 -> 61-65; f32 rows of 3 (18.4 MiB)
// tied. Tiles reducing 2 rows, f32 (25 MiB) 32-36 -> 39-51, bf16 30-32 ->
// 38; 4 rows f32 44-53 -> 54-62, bf16 42-44 -> 51-54; 8 rows f32 62 ->
// 74-78, bf16 55 -> 61-63; 12 rows f32 61-67 -> 66-72. Capped to AVX2:
// f32 2 rows 36-37 -> 40, 4 rows 57-59 -> 67, 8 rows tied; its 16-bit
// passes, bound by their instructions, tied (2 rows) or lost (4 rows
// 29-31 -> 27-28), so they never stream. Below half the L3, bf16 tiny
// rows of 2 at 4 MiB lost 57-62 -> 45-47 (dst stays in the caches from
// one call to the next there, which streaming throws away); f32 rows of 4
// at 1-10 MiB gained 2-5 points, and bf16 rows of 3 and 5 (9-13 MiB) tied.
// The fixed blocks (NCHW reducing H of small maps: a seventh of src's
// size for 7x7 maps) stage a dense dst on the stack, whole lines, then
// stream it (gen_vertical_fixed_slices.cpp, fixed_staged): ab_runs.sh,
// two copies of each build, 7x7 maps f32 (25.7 MB) 55-58 -> 74-78, bf16
// 53-54 -> 59; 9x9 f16 (20.7 MB) 48-52 -> 58-62; 14x14 bf16 67-73 ->
// 71-78, f32 77-80 -> 81. Capped to AVX2: 7x7 maps f32 52 -> 56-58,
// bf16 50-51 -> 57-61; 9x9 f16 42-46 -> 52-53; 14x14 bf16 and f32 +0
// to +4.
bool stream_dst(const plan &P, isa_t isa, const kernel_config &cfg) {
    bool large_dst = false;
    switch (cfg.family) {
        case family_t::inner: large_dst = inner_tiny_rows(isa, P.dt, cfg.block_n); break;
        case family_t::vert_reg: large_dst = cfg.block_rows > 0; break;
        case family_t::vert_tile:
            large_dst = P.rows.n < 16 && (isa == isa_t::avx512_core || P.dt == data_type::f32);
            break;
    }
    return large_dst && prefetch_src(P.src_bytes + P.n_out * P.esz, streams::many_16bit_far);
}

namespace {

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
    return P.dt != data_type::f32
           && std::min<int64_t>(P.jd.n * P.esz, vertical_tile_bytes) >= 32 * 1024;
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

} // namespace

// How a vertical tile (cfg, from tile_config) prefetches: the first rule
// that fits. Rows that follow one another (rows_adjacent) with a tile as
// wide as a row read a pass's rows as one contiguous block, which the next
// pass follows. AVX-512 has rules for all of them (rows_follow), AVX2 for
// those from memory and, for 16-bit, the short ones from half the L3.
void choose_tile_prefetch(const plan &P, isa_t isa, bool from_memory, kernel_config &cfg) {
    const int64_t row_bytes = P.jd.n * P.esz;
    const bool rows_adjacent = P.rows.ss == row_bytes;
    const bool rows_follow = isa == isa_t::avx512_core && rows_adjacent;
    const bool half_l3 = prefetch_src(P.src_bytes, streams::many_16bit_far);
    if (rows_follow && P.rows.n < 16 && row_bytes <= vertical_tile_bytes && half_l3) {
        // Slices of under 16 rows (channels-last reducing H or W of small
        // maps), from half the L3's size: each slice is a few short
        // streams, then the next slice; the rows prefetch 16 KiB ahead, a
        // slice or so. Zen 4, same-run A/Bs, % of the roofline: bf16
        // 14x14x512 reducing W 25 -> 44-48 (59 -> 86 in a faster hour),
        // f32 44 -> 49-64, f16 7x7x2048 48 -> 50-64 (8, 16 and 32 KiB
        // ahead), f32 7x7x2048 reducing H 50 -> 59. 16-bit rows on lines
        // fuse the straight groups' loads (raw_stats: 14x14x512 +6 to +13
        // points).
        cfg.prefetch = true;
        cfg.prefetch_bytes = 16 * 1024;
        cfg.fused16 = fused_columns16(P, isa, P.rows.ss);
    } else if (rows_adjacent && from_memory && row_bytes <= 16 * 1024) {
        // From memory, passes of rows up to 16 KiB take the next pass's
        // rows instead of each row's line 1 KiB ahead (which, at the row's
        // end, falls into rows the pass reads): 4096x4096 axis 2 f16 87 ->
        // 90, bf16 86-89 -> 94, f32 113 -> 114; 64x64x64x64 axis 1 bf16 82
        // -> 89, f32 109 -> 114; 2x2048x4096 axis 1 f32 110 -> 117. AVX2
        // too (f32's passes skewed by 8; the 16-bit straight passes
        // prefetch a step's share, next_pass_straight): capped to AVX2,
        // ab_runs.sh with two copies of each build, f32 2048x4096 (32 MiB)
        // 78-90 -> 83-100, rows of 1 KiB (32768x256) 34-43 -> 61-80,
        // 4096x4096 and 64x64x64x64 axis 1 (64 MiB) +5 to +7; bf16
        // 32768x512 30-33 -> 53-60, 64x64x64x64 axis 1 61-65 -> 69-75, f16
        // 4096x4096 61-67 -> 69-76; slices of 14 rows of 2 KiB (40 MiB,
        // which AVX2 has no slice rule for) f32 48-70 -> 59-79, bf16 50 ->
        // 70-73; f16 64x64x64x64 axes 1,2 (rows of 128 B) tied.
        cfg.prefetch = false;
        cfg.fused16 = fused_columns16(P, isa, P.rows.ss);  // as the prefetching tiles
        cfg.prefetch_pass = true;
    } else if ((rows_follow || (rows_adjacent && P.dt != data_type::f32)) && !from_memory && half_l3
            && next_pass_from_l3(P, row_bytes)) {
        // Short rows (a pass reads 16 of them, streams too short for the
        // hardware prefetchers; next_pass_from_l3) from half the L3's
        // size: the next pass's rows, in memory order. f32 channels-last
        // 14x14x512 and 7x7x512 reducing H and W 50-53 -> 65-68, NCHW
        // 28x28 reducing C f32 62-69 -> 73, bf16 52-68 -> 61-70; f32 rows
        // of 8 KiB and more (1300x4800 85 -> 79 in one hour, 59 -> 71 and
        // 80 -> 87 in another) and 8 MiB (f32 8x64x64x64 axis 1 92 -> 74)
        // did not gain. AVX2's 16-bit passes too (capped, ab_runs.sh: bf16
        // 16384x512 41-46 -> 72-74, 64x64x56x56 axis 1 51-59 -> 57-65, f16
        // 3000x3000 tied), not its f32 ones (5120x1024 73-80 -> 67-76).
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
        // 53-60 (rows one after another of up to 16 KiB but powers of two
        // take the next pass's rows instead, above); at 12.8 MB bf16
        // channels-last axis 0 65-70 -> 68-79. It
        // lost at 6.4 MB (f16 NCHW 16x64x56x56 axis 1 78-80 -> 75) and 2
        // MiB (bf16 16x64x32x32 axis 1 60-66 -> 50-59), and from memory
        // beside the tiles' prefetch (f16 4096x4096 axis 0 62-66 -> 57-62);
        // f32 (one max a load) tied.
        cfg.prefetch_l1_bytes = 512;
    }
}

} // namespace crest::impl::jit
