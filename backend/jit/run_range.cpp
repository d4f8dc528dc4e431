// run_range.hpp: the kernel calls for a range of outputs.
#include "backend/jit/run_range.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "backend/jit/jit_config.hpp"
#include "backend/jit/transpose.hpp"

namespace crest::impl::jit {

red_ranges full_ranges(const plan &P) {
    red_ranges R;
    for (int k = 0; k < P.nextra; ++k) { R.lo[k] = 0; R.hi[k] = P.extra[k].n; }
    R.lo[P.nextra] = 0;
    R.hi[P.nextra] = P.rows.n;
    R.lo[P.nextra + 1] = 0;
    R.hi[P.nextra + 1] = P.n;
    return R;
}

dst_view plan_dst_view(const plan &P, char *dst) {
    dst_view D;
    D.base = dst;
    for (int k = 0; k < P.nouter; ++k) D.ods[k] = P.outer[k].ds;
    D.jds = P.jd.ds;
    D.sub = P.njsub > 1;
    D.dsz = P.esz;
    D.fn = P.code->fn;
    return D;
}

namespace {

// A buffer in `room` (4 KiB more than the buffer needs) placed `offset`
// bytes past src in the 4 KiB pattern of L1 sets, on a line: away from
// the sets of the lines being read.
char *placed_past(char *room, const void *src, int offset) {
    return room + ((reinterpret_cast<uintptr_t>(src) + offset - reinterpret_cast<uintptr_t>(room))
            & (4096 - 64));
}

// A vertical call over plan::period_code's rows (a.ncols columns, the
// period's, rows one after another): per outer index the rows a period
// at a time into a stack buffer, the rows left over after them, then
// `narrow` (the plan's vertical kernel) folds the buffer into dst,
// accumulating as the call asked.
// Where a period is whole lines, the rows before the first that starts
// on a line (a slice or a thread's range off the lines' grid: NCHW
// reducing C and W with an odd C) go to `narrow` on their own, so that
// the period's loads never split a line. Zen 4, bg_runs.sh, 3 rounds, %
// of the roofline, bf16 [3 x 174762 x 25] reducing the middle (the first
// stage of NCHW 3x174762x5x5 reducing C and W: the second and third
// slices off the grid, periods of 320 rows of 50 bytes): 62-84 -> 87-90.
// The period's tile keeps its running max in the buffer itself (no tile
// scratch, so the scratch is only as wide as the plan's own rows: 9 KiB
// against 48 KiB for periods of 8 rows of 5000 bytes), placed as the
// tile scratch would be: 2 KiB past src in the 4 KiB pattern of L1 sets.
// Zen 4, ab_builds, 1 buffer, 14 rounds, % of the roofline, a scratch ->
// the buffer: f32 [5242 x 1250] axis 0 82 -> 86, bf16 [6400 x 2000] 91
// -> 92, [3 x 174762 x 25] axis 1 bf16 88 -> 89, f16 89 -> 89.
void run_periodic(const plan &P, jit_fn narrow, const vert_call &a) {
    alignas(64) char room[max_line_period_bytes + 4096];
    const int64_t c = a.ncols, L = P.period, per = L / c, esz = P.esz, row = c * esz;
    // Periods of whole lines start on a line; tiles' periods of half
    // lines (rows_a_line_period) too, so that every other one is on a line.
    const bool lines = L * esz % 64 == 0;
    const bool half_lines = !lines && L * esz % 32 == 0
            && P.period_code->cfg.family == family_t::vert_tile;
    const int64_t seek = lines ? per : half_lines ? 2 * per : 0;
    const auto *src = static_cast<const char *>(a.src);
    auto *dst = static_cast<char *>(a.dst);
    for (int64_t o = 0; o < a.n_outer; ++o) {
        const char *s = src + o * a.outer_src_stride;
        char *d = dst + o * a.outer_dst_stride;
        int64_t head = 0;  // rows before the first on a line
        while (head < seek && head < a.rows && reinterpret_cast<uintptr_t>(s + head * row) % 64)
            ++head;
        if (head == seek) head = 0;  // no row starts a line: as it comes
        const int64_t body = a.rows - head;
        const int64_t wide = body / per, left = body - wide * per;
        if (wide == 0) {
            const vert_call f {s, d, c, a.rows, row, a.accumulate, 1, 0, 0, a.scratch, a.modes,
                    1, 0};
            narrow(&f);
            continue;
        }
        const char *b = s + head * row;
        char *buf = placed_past(room, b, 2048);
        const vert_call w {b, buf, L, wide, L * esz, 0, 1, 0, 0, nullptr, a.modes, 1, 0};
        P.period_code->fn(&w);
        // The rows left over join the period's in the buffer where they
        // fit (always, up to max_period_bytes); else a call of their own.
        const bool left_fit = buf + (L + left * c) * esz <= room + sizeof room;
        if (left_fit) std::memcpy(buf + L * esz, b + wide * L * esz, size_t(left * row));
        const vert_call f {buf, d, c, per + (left_fit ? left : 0), row, a.accumulate, 1, 0, 0,
                a.scratch, a.modes, 1, 0};
        narrow(&f);
        if (!left_fit) {
            const vert_call l {b + wide * L * esz, d, c, left, row, 1, 1, 0, 0, a.scratch, a.modes,
                    1, 0};
            narrow(&l);
        }
        if (head > 0) {
            const vert_call h {s, d, c, head, row, 1, 1, 0, 0, a.scratch, a.modes, 1, 0};
            narrow(&h);
        }
    }
}

// A vertical call by plan::chunk_code 256 columns at a time, the rest
// by `fn` (the plan's kernel), a slice after another: a slice's second
// chunk then reads what its first brought into the caches (N x 128 x 300
// reducing axis 1, same-run A/Bs: bf16 54 -> 61%, f32 70 -> 78% of the
// roofline, against every slice's first chunk, then every slice's second).
void run_chunks(const plan &P, jit_fn fn, const vert_call &a) {
    vert_call c = a;
    c.n_outer = 1;
    for (int64_t o = 0; o < a.n_outer; ++o) {
        const char *s = static_cast<const char *>(a.src) + o * a.outer_src_stride;
        char *d = static_cast<char *>(a.dst) + o * a.outer_dst_stride;
        for (int64_t done = 0; done < a.ncols; done += max_period) {
            c.src = s + done * P.esz;
            c.dst = d + done * P.esz;
            c.ncols = std::min(max_period, a.ncols - done);
            (c.ncols == max_period ? P.chunk_code->fn : fn)(&c);
        }
    }
}

// A vertical call of every column by plan::wide_code; the slices it
// leaves by the chunks, or the plan's kernel where there are none. Ahead
// of the periods: 16-bit rows of 512 took periods of whole rows, 74-84
// -> 86% of the roofline at 25 MiB, 99-107 -> 103-117 at 100 MiB.
void run_wide(const plan &P, jit_fn fn, const vert_call &a) {
    const int64_t left = P.wide_code->status_fn(&a);
    if (left == 0) return;
    vert_call c = a;
    const int64_t done = a.n_outer - left;
    c.src = static_cast<const char *>(a.src) + done * a.outer_src_stride;
    c.dst = static_cast<char *>(a.dst) + done * a.outer_dst_stride;
    c.n_outer = left;
    if (P.chunk_code) run_chunks(P, fn, c);
    else fn(&c);
}

// All reduced dims in R for cnt outputs (inner) / columns (vertical) that
// start at s and d; extra reduced dims accumulate through d.
// Vertical plans may pass n_outer > 1: that many slices of the innermost
// outer dim (strides oss, ods) in one call, and a tile scratch.
void run_reduction(const plan &P, jit_fn fn, const char *s, char *d,
        int64_t cnt, int64_t jds, const red_ranges &R, void *scratch, lane_modes16 *modes,
        int64_t n_outer = 1, int64_t oss = 0, int64_t ods = 0) {
    const int re = P.nextra;
    const int64_t rows = R.hi[re] - R.lo[re];
    s += R.lo[re] * P.rows.ss;
    const int64_t n = R.hi[re + 1] - R.lo[re + 1];
    if (P.kind == plan_kind::inner) s += R.lo[re + 1] * P.esz;
    int64_t ridx[max_dims];
    int64_t off = 0;
    for (int k = 0; k < re; ++k) {
        ridx[k] = R.lo[k];
        off += ridx[k] * P.extra[k].ss;
    }
    // The innermost extra dim's indices several a call (batch_take), where
    // the fixed blocks take them (kernel_config::block_batch).
    const int bd = re - 1;
    const bool batched = P.kind == plan_kind::vertical && bd >= 0 && P.code->status_fn
            && rows == P.rows.n && cnt == P.jd.n;
    bool acc = false;
    for (;;) {
        int64_t took = 1;  // indices of the innermost extra dim
        if (P.kind == plan_kind::inner) {
            const inner_call a {s + off, d, cnt, P.jd.ss, jds, rows, P.rows.ss, n, acc};
            fn(&a);
        } else if (batched) {
            took = batch_take(R.hi[bd] - ridx[bd], P.code->batch_most);
            vert_call a {s + off, d, cnt, rows, P.rows.ss, acc, n_outer, oss, ods, scratch, modes,
                    took, P.extra[bd].ss};
            if (P.code->status_fn(&a) != 0) {
                a.batch = 1;
                for (int64_t t = 0; t < took; ++t) {
                    a.src = s + off + t * P.extra[bd].ss;
                    a.accumulate = acc || t > 0;
                    fn(&a);
                }
            }
        } else {
            const vert_call a {s + off, d, cnt, rows, P.rows.ss, acc, n_outer, oss, ods, scratch,
                    modes, 1, 0};
            if (P.fixed_code && !acc && rows == P.rows.n && cnt == P.jd.n) P.fixed_code->fn(&a);
            else if (P.wide_code && cnt == P.jd.n) run_wide(P, fn, a);
            else if (P.period_code && cnt == P.jd.n) run_periodic(P, fn, a);
            else if (P.chunk_code && cnt >= max_period) run_chunks(P, fn, a);
            else fn(&a);
        }
        acc = true;
        int k = re - 1;
        for (; k >= 0; --k) {
            const int64_t step = k == bd ? took : 1;
            ridx[k] += step;
            off += step * P.extra[k].ss;
            if (ridx[k] < R.hi[k]) break;
            off -= (ridx[k] - R.lo[k]) * P.extra[k].ss;
            ridx[k] = R.lo[k];
        }
        if (k < 0) break;
    }
}

// Columns contiguous in src, scattered in dst (a transposed output): the
// vertical kernel fills a buffer of this size, then runs along the
// innermost sub-dim copy it out.
constexpr int scatter_bytes = 16 * 1024;

template <typename T>
void scatter_run(char *d, int64_t ds, const char *buf, int64_t n) {
    const T *b = reinterpret_cast<const T *>(buf);
    for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * ds, b + i, sizeof(T));
}

void scatter_sub(const plan &P, char *d, const char *buf, int64_t dsz,
        int64_t j0, int64_t cnt) {
    const loop_dim &in = P.jsub[P.njsub - 1];
    int64_t k = j0 % in.n;
    odometer od(P.jsub, P.njsub - 1, j0 / in.n);
    while (cnt > 0) {
        const int64_t run = std::min(in.n - k, cnt);
        char *to = d + od.doff + k * in.ds;
        if (dsz == 4) scatter_run<uint32_t>(to, in.ds, buf, run);
        else scatter_run<uint16_t>(to, in.ds, buf, run);
        buf += run * dsz;
        cnt -= run;
        k = 0;
        od.next();
    }
}

// Two-stage inner plan (plan::slab_code), cnt outputs from s / d: per
// group of outputs that fills the scratch, the vertical kernel maxes their
// contiguous elements over all rows (src in memory order), then the inner
// kernel reduces each output's short row of the scratch. Full ranges only
// (no two-level split, no extra dims). Width is the plan's slab_width:
// one instance a width, so that a call takes only its own on the stack.
template <int64_t Width>
__attribute__((noinline)) void run_slabs(const plan &P, const dst_view &D, const char *s,
        char *d, int64_t cnt, void *tile_scratch, lane_modes16 *modes) {
    alignas(4096) char room[Width + 4096];
    const int64_t row_bytes = P.n * P.esz;
    // A period over the kept dim's whole block (plan_kernels.cpp) takes
    // it as one slab, wherever it starts; lines matter to the tiles only.
    const slab_split split = P.period_code ? slab_split {P.jd.n, P.jd.n}
                                           : split_slabs(s, row_bytes, cnt, Width);
    for (int64_t c0 = 0; c0 < cnt;) {
        const int64_t c = std::min(c0 == 0 ? split.first : split.per, cnt - c0);
        const char *from = s + c0 * P.jd.ss;
        // The slab sits 1 KiB past its src columns in the 4 KiB pattern of
        // L1 sets, away from them and from the tile scratch (2 KiB past):
        // where it fell as the frame had it, wide slabs read 79-95% of the
        // roofline, 1-3 KiB past 93-96%, on them 78-95% (bf16 channels-last
        // 64x64x56x56 axes 0,1 and NCHW axes 0,3, benchgraph, Zen 4).
        char *scratch = placed_past(room, from, 1024);
        const vert_call v {from, scratch, c * P.n, P.rows.n, P.rows.ss, 0, 1, 0, 0,
                tile_scratch, modes, 1, 0};
        if (P.period_code && c == P.jd.n) run_periodic(P, P.slab_code->fn, v);
        else P.slab_code->fn(&v);
        const inner_call in {scratch, d + c0 * D.jds, c, row_bytes, D.jds, 1, 0, P.n, 0};
        D.fn(&in);
        c0 += c;
    }
}

} // namespace

// Outputs [b, e) in the flat order (outer dims, then jd).
void run_range(const plan &P, const char *src, const dst_view &D, int64_t b,
        int64_t e, const red_ranges &R, void *scratch) {
    if (b >= e) return;
    int64_t idx[max_dims];
    int64_t j = b % P.jd.n, o = b / P.jd.n;
    for (int k = P.nouter - 1; k >= 0; --k) {
        idx[k] = o % P.outer[k].n;
        o /= P.outer[k].n;
    }
    const bool scatter = D.sub || (P.kind == plan_kind::vertical && D.jds != D.dsz);
    lane_modes16 modes;
    while (b < e) {
        const int64_t cnt = std::min(P.jd.n - j, e - b);
        const char *s = src + j * P.jd.ss;
        char *d = D.base + (D.sub ? 0 : j * D.jds);
        for (int k = 0; k < P.nouter; ++k) {
            s += idx[k] * P.outer[k].ss;
            d += idx[k] * D.ods[k];
        }
        // Whole slices of the innermost outer dim go to the vertical kernel
        // in one call: fewer calls, and extra reduced dims (looped around
        // the call) then walk src in memory order.
        const int io = P.nouter - 1;
        int64_t slices = 1;
        if (!scatter && P.kind == plan_kind::vertical && io >= 0 && j == 0)
            slices = std::min((e - b) / P.jd.n, P.outer[io].n - idx[io]);
        if (P.slab_code) {  // inner plans: never scattered
            if (P.slab_width > slab_bytes)
                run_slabs<wide_slab_bytes>(P, D, s, d, cnt, scratch, &modes);
            else
                run_slabs<slab_bytes>(P, D, s, d, cnt, scratch, &modes);
        } else if (slices > 1) {
            run_reduction(P, D.fn, s, d, cnt, D.jds, R, scratch, &modes, slices,
                    P.outer[io].ss, D.ods[io]);
            b += (slices - 1) * P.jd.n;
            idx[io] += slices - 1;
        } else if (!scatter) {
            run_reduction(P, D.fn, s, d, cnt, D.jds, R, scratch, &modes);
        } else {
            // The vertical kernel writes contiguous columns: go through a
            // small buffer and scatter along the dst stride.
            // Placed as the tile scratch is (2 KiB off src in the 4 KiB
            // pattern): the kernel's last pass writes it.
            alignas(4096) char buf_room[scatter_bytes + 4096];
            char *buf = placed_past(buf_room, s, 2048);
            int64_t tile = scatter_bytes / D.dsz;
            const int64_t cn = P.jsub[P.njsub - 1].n;
            // [positions][channels] to channel-major with positions
            // contiguous in dst: register transposes, f32 or 16-bit
            // (transpose.hpp; whole positions only).
            const bool by_transpose = D.sub && P.njsub == 2 && P.jsub[0].ds == D.dsz
                    && cn <= tile;
            if (by_transpose) tile = tile / cn * cn;
            for (int64_t c0 = 0; c0 < cnt; c0 += tile) {
                const int64_t c = std::min<int64_t>(cnt - c0, tile);
                run_reduction(P, D.fn, s + c0 * P.jd.ss, buf, c, D.dsz, R, scratch, &modes);
                if (by_transpose && (j + c0) % cn == 0 && c % cn == 0) {
                    const bool far = P.stream_transposed;
                    const int64_t next = far ? std::min<int64_t>(cnt - c0 - c, tile) : 0;
                    const int lanes = P.isa == isa_t::avx512_core ? 16 : 8;
                    if (D.dsz == 4)
                        transpose_store_f32(reinterpret_cast<const float *>(buf), c / cn, cn,
                                d + (j + c0) / cn * 4, P.jsub[1].ds, lanes, next / cn, far);
                    else
                        transpose_store_16(reinterpret_cast<const uint16_t *>(buf), c / cn,
                                cn, d + (j + c0) / cn * 2, P.jsub[1].ds, lanes, next / cn, far);
                } else if (D.sub) {
                    scatter_sub(P, d, buf, D.dsz, j + c0, c);
                } else {
                    for (int64_t i = 0; i < c; ++i)
                        std::memcpy(d + (c0 + i) * D.jds, buf + i * D.dsz, D.dsz);
                }
            }
        }
        if (P.stream_transposed) _mm_sfence();  // the streamed lines before the join
        b += cnt;
        j = 0;
        for (int k = P.nouter - 1; k >= 0; --k) {
            if (++idx[k] < P.outer[k].n) break;
            idx[k] = 0;
        }
    }
}

} // namespace crest::impl::jit
