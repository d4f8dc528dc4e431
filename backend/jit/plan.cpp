#include "backend/jit/plan.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <numeric>

#include "backend/jit/generators.hpp"
#include "backend/jit/isa.hpp"

namespace crest::impl::jit {

namespace {

// A vertical problem with fewer output columns than this per thread splits
// its rows instead: each thread then reads one long contiguous range.
constexpr int64_t vertical_min_cols_per_chunk = 4096;

// Vertical plans with few columns: whether the outermost output dim is also
// the outermost src dim, with enough indices to share out evenly. Chunks
// of whole slices of it then each read one contiguous src range, as
// chunks of rows do, and need no partials and no combine (channels-last
// 32x64x56x56 axes 2,3 on Zen 4: 79% -> 83% of the roofline against
// splitting its rows).
bool outer_slices_share(const plan &P, int nch) {
    if (P.kind != plan_kind::vertical || P.nouter == 0) return false;
    const loop_dim &o = P.outer[0];
    if (o.ss < P.rows.ss || o.ss < P.jd.ss * P.jd.n) return false;
    for (int k = 0; k < P.nextra; ++k)
        if (o.ss < P.extra[k].ss) return false;
    for (int k = 1; k < P.nouter; ++k)
        if (o.ss < P.outer[k].ss) return false;
    return o.n >= nch && (o.n % nch == 0 || o.n >= 8 * nch);
}

// Vertical plans with few columns but many slices of them (outer kept
// dims around the column group) whose two-level split would cut every
// slice's rows: at least 8 slices a thread share out whole slices
// instead. Zen 4, benchgraph, alternate runs, % of the roofline, rows
// split -> slices: NCHW reducing N and H, f32 3x256x28x28 (2.4 MB) 54-56
// -> 80-81, 5x64x56x56 69-70 -> 87-93, 3x16x112x112 81-82 -> 92-99,
// bf16 3x256x28x28 38-42 -> 48-65. Where the split takes an extra dim
// (the batch, evenly), each thread reads one run of src and that kept
// ahead: bf16 64x64x64x64 axes 0,2 (32 MiB) 86-87 against 82-84 by
// slices, f16 87-89 against 84-87 (f32 channels-last 8x256x28x28
// reducing N and W, 6.4 MB, 77-83 against 88-89 the other way).
bool many_slices_share(const plan &P, int nch) {
    return P.kind == plan_kind::vertical && P.nouter > 0 && P.n_out / P.jd.n >= 8 * nch;
}

bool fail(std::string *why_not, const std::string &msg) {
    if (why_not) *why_not = msg;
    return false;
}

loop_dim to_bytes(const canon_dim &d, int64_t esz) {
    return {d.n, d.ss * esz, d.ds * esz};
}

// Chooses the reduced dim that a two-level plan splits between chunks:
// the outermost one that shares out evenly, else the largest. -1 if none.
int choose_split(const plan &P, int nch, int64_t *size) {
    int64_t n[max_dims + 2], min_n[max_dims + 2];
    int cnt = 0;
    for (int k = 0; k < P.nextra; ++k, ++cnt) { n[cnt] = P.extra[k].n; min_n[cnt] = nch; }
    n[cnt] = P.rows.n;
    min_n[cnt++] = nch;
    if (P.kind == plan_kind::inner) { n[cnt] = P.n; min_n[cnt++] = 1024 * nch; }
    for (int i = 0; i < cnt; ++i) {
        if (n[i] >= min_n[i] && (n[i] % nch == 0 || n[i] >= 8 * nch)) {
            *size = n[i];
            return i;
        }
    }
    int best = -1;
    for (int i = 0; i < cnt; ++i)
        if (n[i] >= min_n[i] && (best < 0 || n[i] > n[best])) best = i;
    if (best >= 0) *size = n[best];
    return best;
}

// Kernel names are literals: building them on every compile took a fresh
// process through two lazy symbol bindings inside libstdc++.
enum name_index {
    name_empty, name_fill, name_copy, name_strided, name_all, name_inner, name_vertical
};
#define CREST_JIT_NAMES(isa)                                                           \
    {                                                                                  \
        "jit:" isa ":empty", "jit:" isa ":fill", "jit:" isa ":copy",                   \
                "jit:" isa ":reduce_strided", "jit:" isa ":reduce_all",                \
                "jit:" isa ":reduce_inner", "jit:" isa ":reduce_vertical"              \
    }
const char *kernel_name(isa_t isa, name_index i) {
    static const char *const avx2[] = CREST_JIT_NAMES("avx2");
    static const char *const avx512[] = CREST_JIT_NAMES("avx512_core");
    return isa == isa_t::avx512_core ? avx512[i] : avx2[i];
}
#undef CREST_JIT_NAMES

std::atomic<int64_t> g_inline_override {-1};

} // namespace

int64_t inline_bytes() {
    const int64_t o = g_inline_override.load(std::memory_order_relaxed);
    return o >= 0 ? o : default_inline_bytes;
}

void set_inline_bytes_for_testing(int64_t bytes) {
    g_inline_override.store(bytes < 0 ? -1 : bytes);
}

// Rows of 112 bytes, NCHW 64x64x56x56 axes 0,3 on Zen 4: 16 KiB slabs of
// 146 rows read at 70-72% of the roofline in bf16 and f16 and 81% in f32;
// of 144 rows, 74-77% and 86-87%. Rounding to a multiple of the line
// pattern costs at most half a slab (fit >= 2 g).
slab_split split_slabs(const void *s, int64_t row_bytes, int64_t cnt, int64_t width) {
    const int64_t fit = width / row_bytes;
    const int64_t g = 64 / std::gcd<int64_t>(row_bytes, 64);  // rows a line pattern repeats
    if (fit < 2 * g) return {fit, fit};
    const int64_t per = fit - fit % g;
    const auto at = reinterpret_cast<uintptr_t>(s);
    for (int64_t k = 0; k < g && k < cnt; ++k)
        if ((at + k * row_bytes) % 64 == 0) return {per, k > 0 ? k : per};
    return {per, per};  // src off the rows' grid of lines: no output starts one
}

int64_t output_chunk_bound(int64_t n, int64_t align, int nch, int64_t c) {
    if (c >= nch) return n;
    const int64_t share = n * c / nch;
    return std::min(n, (share + align / 2) / align * align);
}

int flat_output_dims(const plan &P, loop_dim *out) {
    int nd = 0;
    for (int k = 0; k < P.nouter; ++k) out[nd++] = P.outer[k];
    if (P.njsub > 1)
        for (int k = 0; k < P.njsub; ++k) out[nd++] = P.jsub[k];
    else
        out[nd++] = P.jd;
    return nd;
}

bool make_plan(const reduce_problem &p, isa_t isa, int pool_size, plan *out,
        std::string *why_not) {
    plan &P = *out;
    if (isa == isa_t::none) return fail(why_not, "no JIT ISA on this CPU (or capped)");
    if (p.dt != data_type::f32 && p.dt != data_type::bf16 && p.dt != data_type::f16)
        return fail(why_not, "data type is not f32, bf16 or f16");
    if (p.ndims() > max_dims) return fail(why_not, "rank above 12");
    if ((int)p.src_strides.size() != p.ndims() || (int)p.dst_strides.size() != p.ndims())
        return fail(why_not, "strides do not match the rank");
    for (int d = 0; d < p.ndims(); ++d)
        if (p.dims[d] < 0 || p.src_strides[d] < 0 || p.dst_strides[d] < 0)
            return fail(why_not, "negative dim or stride");
    if (p.ndims() < 32 && (p.reduce_mask >> p.ndims()) != 0)
        return fail(why_not, "reduce_mask names a dim beyond the rank");

    P.isa = isa;
    P.dt = p.dt;
    P.esz = static_cast<int64_t>(dt_size(p.dt));
    const canonical c = canonicalize(p);

    if (c.k == canonical::kind::empty_output) {
        P.kind = plan_kind::empty;
        P.name = kernel_name(isa, name_empty);
        return true;
    }
    for (const auto &d : c.dims) {
        if (d.reduced) P.red[P.nred++] = to_bytes(d, P.esz);
        else P.kept[P.nkept++] = to_bytes(d, P.esz);
    }
    P.n_out = c.num_outputs();
    P.src_bytes = c.num_outputs() * c.num_reduced() * P.esz;
    const int nch = (P.src_bytes < inline_bytes() || pool_size <= 1)
            ? 1 : std::min(pool_size, max_chunks);
    P.nchunks = nch;

    if (c.k == canonical::kind::fill_neg_inf) {
        P.kind = plan_kind::fill;
        P.nred = 0;
        P.src_bytes = 0;
        P.nchunks = 1;
        P.name = kernel_name(isa, name_fill);
        return true;
    }
    if (!c.has_reduced()) {
        P.kind = plan_kind::copy;
        P.name = kernel_name(isa, name_copy);
        return true;
    }

    const canon_dim &last = c.dims.back();
    if (last.ss != 1) {
        P.kind = plan_kind::strided;
        P.name = kernel_name(isa, name_strided);
        return true;
    }
    P.kind = last.reduced ? plan_kind::inner : plan_kind::vertical;
    // Sort the remaining dims into kernel-side and C++-side loops. The
    // innermost kept dim (inner) / innermost reduced dim (vertical) goes to
    // the kernel with the contiguous group.
    int nd = static_cast<int>(c.dims.size()) - 1;
    if (P.kind == plan_kind::vertical) {
        // Grow the column group over kept dims that continue the
        // contiguous src run; their dst strides are then scattered to.
        P.jd = to_bytes(last, P.esz);
        P.jsub[0] = P.jd;
        int64_t run = last.n;
        int first = nd;
        while (first > 0 && !c.dims[first - 1].reduced && c.dims[first - 1].ss == run) {
            --first;
            run *= c.dims[first].n;
        }
        if (first < nd) {
            P.njsub = 0;
            for (int i = first; i <= nd; ++i) P.jsub[P.njsub++] = to_bytes(c.dims[i], P.esz);
            P.jd = {run, P.esz, 0};
            nd = first;
        }
    }
    // Sort the remaining dims into kernel-side and C++-side loops. The
    // innermost kept dim (inner) / innermost reduced dim (vertical) goes to
    // the kernel with the contiguous group.
    int jd_at = -1, rows_at = -1;
    for (int i = nd - 1; i >= 0; --i) {
        if (!c.dims[i].reduced && jd_at < 0 && P.kind == plan_kind::inner) jd_at = i;
        if (c.dims[i].reduced && rows_at < 0) rows_at = i;
    }
    if (P.kind == plan_kind::inner) {
        P.n = last.n;
        if (jd_at >= 0) P.jd = to_bytes(c.dims[jd_at], P.esz);
    }
    if (rows_at >= 0) P.rows = to_bytes(c.dims[rows_at], P.esz);
    for (int i = 0; i < nd; ++i) {
        if (i == jd_at || i == rows_at) continue;
        if (c.dims[i].reduced) P.extra[P.nextra++] = to_bytes(c.dims[i], P.esz);
        else P.outer[P.nouter++] = to_bytes(c.dims[i], P.esz);
    }

    if (nch > 1) {
        const bool few = P.kind == plan_kind::inner
                ? P.n_out < 4 * nch
                : P.n_out < nch * vertical_min_cols_per_chunk && !outer_slices_share(P, nch);
        const int64_t pstride = (P.n_out + 15) / 16 * 16;
        int64_t split_n = 0;
        int split = few && pstride * nch <= partial_budget_elems
                ? choose_split(P, nch, &split_n) : -1;
        if (split == P.nextra && many_slices_share(P, nch)) split = -1;  // not the rows
        if (split >= 0) {
            P.two_level = true;
            P.split = split;
            const int64_t cap = split == P.nextra + 1 ? split_n / 64 : split_n;
            P.nchunks = static_cast<int>(std::min<int64_t>(nch, cap));
        }
    }

    // Inner plans with fewer than 64 outputs a thread: bounds at any
    // output (one dst line may then take writes from two threads, once a
    // call), where multiples of 32 left a thread a whole 32 more than the
    // other, or none (28 outputs: one thread did all). Zen 4, benchgraph,
    // alternate runs, % of the roofline, 32 -> 1: channels-last f32
    // 2x1024x14x14 reducing C and H 41-42 -> 95-98, 1x512x28x28 reducing
    // C and W 47-50 -> 94-106, bf16 2x1024x14x14 58-59 -> 63-77.
    if (P.kind == plan_kind::inner && !P.two_level && P.n_out < 64 * P.nchunks) P.out_align = 1;
    // Vertical plans that share out whole slices (outer_slices_share)
    // start each chunk on a slice: with bounds in multiples of 32 columns
    // a tile's thread took part of a slice, each of its rows in part and
    // off the plan's period. Zen 4, benchgraph, 4 alternate rounds, % of
    // the roofline, [2 x 8359 x 784] reducing the middle (the first stage
    // of NCHW 2x8359x28x28 reducing C and W): bf16 .
    if (P.kind == plan_kind::vertical && !P.two_level && P.nchunks > 1 && P.njsub == 1
            && outer_slices_share(P, P.nchunks))
        P.out_align = P.jd.n;
    // A transposed output is written whole positions at a time (see
    // run_range): thread chunks start on position bounds.
    if (P.kind == plan_kind::vertical && P.njsub > 1) P.out_align = P.jsub[P.njsub - 1].n;

    choose_kernels(P, isa);
    if (P.two_level) P.name = kernel_name(isa, name_all);
    else if (P.kind == plan_kind::inner) P.name = kernel_name(isa, name_inner);
    else P.name = kernel_name(isa, name_vertical);
    return true;
}

} // namespace crest::impl::jit
