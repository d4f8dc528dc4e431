#include "backend/jit/outer_first.hpp"

#include <algorithm>

#include "backend/jit/canonical.hpp"
#include "backend/jit/generators.hpp"
#include "backend/jit/isa.hpp"
#include "backend/jit/jit_backend.hpp"
#include "backend/jit/jit_config.hpp"
#include "backend/jit/plan.hpp"
#include "backend/jit/run_range.hpp"
#include "src/threading.hpp"

namespace crest::impl::jit {

namespace {

// Below these the one-stage plans do as well: few outer rows leave the
// block's reduction most of the work, and small problems run inline.
constexpr int64_t min_outer_rows = 8;
constexpr int64_t min_src_bytes = 256 * 1024;
// The stack buffer between the stages of a block in pieces: as wide as
// the tiles' rows (pieces of 32 KiB read f16 NCHW 28x28 reducing N and W
// 8 points below the one-stage plan, of 64 KiB 4 above).
constexpr int64_t buffer_bytes = 64 * 1024;
// Blocks up to this (all lead_n of them together) run each stage whole:
// their first stage's own plan (two-level partials, tile scratch) then
// runs below the buffer, within the stack budget of decisions.md.
constexpr int64_t whole_block_bytes = 16 * 1024;
// A one-stage vertical plan calls its kernel once an index of its extra
// reduced dims (up to 4 for the batched fixed blocks), each call joining dst:
// under this much src an index, the calls cost more than the two stages'
// reads (one_stage_reads_well).
constexpr int64_t min_index_bytes = 64 * 1024;

// Blocks of up to whole_block_bytes run each stage whole, on the pool,
// through a stack buffer. Larger blocks go in pieces of whole indices of
// the block's outermost dim (units: a kept index outside and one of the
// block's, lead_n x idx_n of them): each thread takes a range of units and
// runs both stages on its pieces, with one stack buffer and one tile
// scratch for both. Both stages see the buffer as the dense [lead x
// block] array the split's problems describe.
class outer_first_kernel : public kernel {
public:
    outer_first_kernel(const outer_first_split &s, const thread_pool &pool)
        : s_(s)
        , pool_(pool)
        , esz_(static_cast<int64_t>(dt_size(s.outer.dt)))
        , name_(std::string("jit:") + max_isa_name() + ":reduce_outer_first") {}

    // Whole stages: both kernels on the pool.
    bool make_whole(std::string *why_not) {
        outer_ = make_reduce_max(s_.outer, pool_, why_not);
        block_ = outer_ ? make_reduce_max(s_.block, pool_, why_not) : nullptr;
        return outer_ && block_;
    }

    // In pieces: one-thread plans whose output ranges the pieces take.
    bool make_pieces(std::string *why_not) {
        if (!make_plan(s_.outer, max_isa(), 1, &outer_plan_, why_not)
                || !make_plan(s_.block, max_isa(), 1, &block_plan_, why_not))
            return false;
        // The outer stage's outputs are the block's elements in memory
        // order (one kept dim): a vertical plan over them.
        if (outer_plan_.kind != plan_kind::vertical || outer_plan_.two_level
                || block_plan_.two_level
                || block_plan_.n_out != s_.lead_n * s_.idx_n * s_.idx_outputs) {
            if (why_not) *why_not = "outer-first: no piecewise plan";
            return false;
        }
        // The piece's buffer is read by the block's stage at once: from the
        // caches, where the tiles of under 16 rows would stream it to
        // memory (Zen 4, bg_runs.sh, % of the roofline:
        // f32 NCHW 8-12 x 3072 x 14 x 14 reducing N and H 41-52 -> 48-61,
        // 8-12 x 4096 35-58 -> 51-75, f16 8x7971x14x14 45-47 -> 53-61).
        keep_dst_cached(outer_plan_);
        return true;
    }

    std::string name() const override { return name_; }

    void execute(const void *const *inputs, void *const *outputs) const override {
        if (outer_) return whole(inputs[0], outputs[0]);
        const char *src = static_cast<const char *>(inputs[0]);
        char *dst = static_cast<char *>(outputs[0]);
        const int64_t n = s_.lead_n * s_.idx_n;
        // As the one-stage plans: small problems on the calling thread.
        const int nch = s_.src_bytes < inline_bytes()
                ? 1 : static_cast<int>(std::min<int64_t>(pool_.size(), n));
        auto range = [&](int64_t c) { return n * c / nch; };
        if (nch <= 1) return pieces(src, dst, 0, n);
        pool_.parallel_for(nch, [&](int64_t c) { pieces(src, dst, range(c), range(c + 1)); });
    }

private:
    void whole(const void *src, void *dst) const {
        with_stack_scratch(s_.lead_n * s_.block_elems * esz_, [&](void *mid) {
            outer_->execute(&src, &mid);
            const void *from = mid;
            block_->execute(&from, &dst);
        });
    }

    // Units [lo, hi), a buffer's worth of one kept index outside at a
    // time. Pointers below the buffer stand for the [lead x block] array's
    // start: the kernels only touch the piece's part.
    void pieces(const char *src, char *dst, int64_t lo, int64_t hi) const {
        alignas(64) char buf[buffer_bytes];
        const int64_t per = std::max<int64_t>(1, buffer_bytes / (s_.idx_elems * esz_));
        const red_ranges R1 = full_ranges(outer_plan_), R2 = full_ranges(block_plan_);
        const dst_view D2 = plan_dst_view(block_plan_, dst);
        const int64_t scratch_bytes =
                std::max(outer_plan_.tile_scratch_bytes, block_plan_.tile_scratch_bytes);
        with_stack_scratch(scratch_bytes, [&](void *scratch) {
            for (int64_t u = lo; u < hi;) {
                const int64_t i0 = u % s_.idx_n;
                const int64_t cnt = std::min({per, s_.idx_n - i0, hi - u});
                const int64_t elems = u * s_.idx_elems;  // the piece's first, in [lead x block]
                char *block = buf - elems * esz_;
                dst_view D1 = plan_dst_view(outer_plan_, block);
                run_range(outer_plan_, src, D1, elems, elems + cnt * s_.idx_elems, R1, scratch);
                run_range(block_plan_, block, D2, u * s_.idx_outputs,
                        (u + cnt) * s_.idx_outputs, R2, scratch);
                u += cnt;
            }
        });
    }

    outer_first_split s_;
    const thread_pool &pool_;
    int64_t esz_;
    kernel_ptr outer_, block_;
    plan outer_plan_, block_plan_;
    std::string name_;
};

} // namespace

// Zen 4, same-run A/Bs, % of the roofline, one stage -> two: where the
// one stage kept short rows in slabs (bf16 channels-last 14x14 reducing
// N and C 91 -> 84, f32 NCHW 14x14 reducing N and W 93 -> 81) or columns
// in registers (f32 channels-last 56x56 reducing N and W 92 -> 83, bf16
// NCHW 56x56 reducing N and H 92 -> 80) it read better; elsewhere the
// two stages won: f32 channels-last 14x14 reducing N and C (rows of 2 KiB
// too long for slabs) 31 -> 85, NCHW 56x56 reducing N, H and W f32 35 ->
// 85, bf16 57 -> 78, channels-last 14x14 reducing N and W (512 columns
// in tiles of 14 rows) 59-64 -> 89-93, NCHW 7x7 reducing N and H (7
// columns) 17 -> 81. Slabs of under 128 outputs (NCHW keeping H: 28 or
// 56 of them) read worse than the two stages: f32 28x28 55-58 -> 83-94,
// bf16 56x56 60-74 -> 78-88.
// AVX-512 fixed blocks that take the batch (several indices a call, batch_take)
// read better than the two stages where a row is one ymm or the slices
// go as lines: Zen 5, bg_runs.sh, % of the roofline, NCHW reducing N
// and H, two stages -> one: f32 8x4096x14x14 65-67 -> 96-100,
// 16x2048x14x14 62-65 -> 99, 8x16384x7x7 60 -> 78-82, 64x2048x7x7 75 ->
// 83, 8x8192x12x12 99 -> 98-101; bf16 8x8192x14x14 58-61 -> 87-94,
// 32x1024x14x14 59-60 -> 79; f16 12x4096x14x14 75-76 -> 85-95. The two
// stages won over two slices a ymm (rows of up to 16 bytes, then 4
// indices a call): f16 8x16384x7x7 62-70 -> 42-52, bf16 16x16384x7x7
// 65-69 -> 42-48, f32 8x65536x3x3 64-67 -> 41-49; on Zen 4 (session 42,
// 4 indices a call) still at 128 indices (bf16 and f16 128x2048x7x7
// 82-83 -> 60), f32 3x3 at 64 (64x16384x3x3 88 -> 61). They won over
// f32 rows of 40 bytes (split loads, no lines) while calls took 2
// indices and joined dst slice by slice (Zen 5: 8x8192x10x10 72 -> 56);
// since (Zen 4, session 42, ab_builds, two stages -> one) f32 rows of
// 36-60 bytes read better in one: 8x8192x10x10 69 -> 93, 32x2048x10x10
// 74 -> 88, 64x1083x11x11 75 -> 93, 8x4652x13x13 69 -> 104,
// 64x582x13x13 85 -> 101, 64x466x15x15 85 -> 106, 8x9709x9x9 66 -> 83,
// but 64x1213x9x9 79 -> 74. Capped to AVX2 they won at 7x7 (99 -> 76)
// and 10x10 (102 -> 88) and lost at 14x14 (80 -> 105-120): AVX2 keeps
// them.
bool one_stage_reads_well(const plan &P) {
    // 16-bit slabs over blocks of 2 KiB and more off the lines' grid
    // that take no period (NCHW reducing C and W of 33x33, 45x45, 50x50
    // maps: no whole lines within 8 rows): the outer-first plan reads
    // better. Zen 4, ab_builds, 14-16 rounds, one stage -> two: bf16
    // 12x1024x33x33 71-73 -> 78-83, 6x1024x45x45 73 -> 80-81,
    // 5x1024x50x50 71 -> 75, f16 33x33 70-71 -> 79, from memory (2
    // buffers) bf16 48x1024x33x33 83 -> 94, 24x1024x45x45 90 -> 96.
    // With a period of whole lines it did not pay (bf16 38x38 83 -> 69
    // in one run, alike in another; 36x36 84 -> 87); blocks on the grid
    // lost (batch_ab.sh 3, 64x64x56x56 reducing N and W 97 -> 83,
    // 8x8192x14x14 72 -> 61), and f32 33x33 (88 -> 62 against the
    // slab's half lines).
    if (P.kind == plan_kind::inner) {
        const int64_t block_bytes = P.jd.n * P.n * P.esz;
        if (P.dt != data_type::f32 && P.slab_code && !P.period_code && block_bytes >= 2048
                && block_bytes % 64 != 0)
            return false;
        return P.slab_code != nullptr && P.n_out >= 128;
    }
    // Many small calls: Zen 4, ab_builds 8-10 rounds, % of the roofline,
    // one stage -> two, src bytes an index in brackets: channels-last
    // reducing N and W, bf16 4000x64x7x7 (6 KB) 26 -> 77, 10485x50x5x5
    // (2.5 KB) 23 -> 62, 1044x64x14x14 (25 KB) 75 -> 86, f32 5242x50x5x5
    // (5 KB) 36 -> 71, 2000x64x7x7 (12.5 KB) 79 -> 98, 522x64x14x14 (50
    // KB) 78 -> 79, but 261x32x28x28 (100 KB) 103 -> 96 and 32x64x56x56
    // (800 KB) 99 -> 79; NCHW reducing N and H, f32 2000x64x7x7 44 -> 95,
    // 522x64x14x14 83 -> 99.
    if (P.kind == plan_kind::vertical && P.nextra > 0) {
        int64_t indices = 1;
        for (int k = 0; k < P.nextra; ++k) indices *= P.extra[k].n;
        if (P.src_bytes < indices * min_index_bytes) return false;
    }
    if (P.kind == plan_kind::vertical && P.code->status_fn && P.isa == isa_t::avx512_core) {
        const int64_t row_bytes = P.jd.n * P.esz;
        if (row_bytes > 16 && (row_bytes <= 32 || P.dt == data_type::f32)) return true;
    }
    if (P.kind == plan_kind::vertical)
        return P.code->cfg.family == family_t::vert_reg && P.jd.n * P.esz >= 64;
    return false;
}

// The outer stage's rows of 256 columns (16 vectors) or of 257-448
// (plan::wide_code) go whole through registers, a slice's rows in memory
// order; where a one-stage plan read well, it read short rows or narrow
// columns of each slice. Zen 4, batch_ab.sh, 2 rounds, % of the roofline,
// NCHW reducing C and W, one stage -> two, at 25 and 100 MiB: f32 16x16
// 91 -> 100 and 67 -> 98, 17x17 79 -> 93 and 84 -> 107, 20x20 82 -> 100
// and 68 -> 95, 21x21 72 -> 93 and 68 -> 114; bf16 16x16 42 -> 86 and 76
// -> 115, 17x17 29 -> 78 and 54 -> 112, 20x20 34 -> 83 and 61 -> 90,
// 21x21 34 -> 82 and 46 -> 111. At 14x14 and 28x28 (tiles or short
// register columns) the two stages lost from memory (f32 108 -> 90, 105
// -> 95; bf16 104 -> 98, 117 -> 107). With f32's spilling wide columns
// (session 39): f32 24x24 (576) 84-89 -> 98-106; 28x28 83 -> 91 at 25
// MiB but 103 -> 93 at 100, 32x32 and 40x40 alike or worse.
bool outer_first_preferred(const plan &P, const outer_first_split &s) {
    const int64_t widest = P.dt == data_type::f32 ? 576 : 448;  // as measured
    const bool rows_in_registers = P.isa == isa_t::avx512_core
            && s.block_elems >= max_period && s.block_elems <= widest;
    return rows_in_registers || !one_stage_reads_well(P);
}

bool split_outer_first(const reduce_problem &p, outer_first_split *s) {
    const canonical c = canonicalize(p);
    if (c.k != canonical::kind::compute) return false;
    const auto &d = c.dims;
    const int m = static_cast<int>(d.size());
    int kl = 0;  // [0, kl): kept dims outside; [kl, k0): the reduced outer dims
    while (kl < m && !d[kl].reduced) ++kl;
    int k0 = kl;
    while (k0 < m && d[k0].reduced) ++k0;
    if (k0 == kl || k0 == m || d[m - 1].ss != 1) return false;
    bool reduced_inside = false;
    for (int i = k0; i < m; ++i) {
        reduced_inside |= d[i].reduced;
        if (i + 1 < m && d[i].ss != d[i + 1].ss * d[i + 1].n) return false;  // not dense
    }
    int64_t rows = 1, lead = 1;
    for (int i = 0; i < kl; ++i) lead *= d[i].n;
    for (int i = kl; i < k0; ++i) rows *= d[i].n;
    const int64_t block = d[k0].ss * d[k0].n, esz = static_cast<int64_t>(dt_size(p.dt));
    if (!reduced_inside || rows < min_outer_rows || lead * rows * block * esz < min_src_bytes
            || d[k0].ss * esz > buffer_bytes)
        return false;

    // The buffer between the stages: a dense [lead x block], the kept dims
    // outside in their order.
    int64_t buf_stride[max_dims];
    int64_t st = block;
    for (int i = kl - 1; i >= 0; --i) {
        buf_stride[i] = st;
        st *= d[i].n;
    }
    reduce_problem &o = s->outer;
    o = reduce_problem {};
    o.dt = p.dt;
    for (int i = 0; i < k0; ++i) {
        o.dims.push_back(d[i].n);
        o.src_strides.push_back(d[i].ss);
        o.dst_strides.push_back(i < kl ? buf_stride[i] : 0);
        if (i >= kl) o.reduce_mask |= 1u << i;
    }
    o.dims.push_back(block);
    o.src_strides.push_back(1);
    o.dst_strides.push_back(1);

    reduce_problem &b = s->block;
    b = reduce_problem {};
    b.dt = p.dt;
    for (int i = 0; i < kl; ++i) {
        b.dims.push_back(d[i].n);
        b.src_strides.push_back(buf_stride[i]);
        b.dst_strides.push_back(d[i].ds);
    }
    int64_t outputs = 1;
    for (int i = k0; i < m; ++i) {
        b.dims.push_back(d[i].n);
        b.src_strides.push_back(d[i].ss);
        b.dst_strides.push_back(d[i].reduced ? 0 : d[i].ds);
        if (d[i].reduced) b.reduce_mask |= 1u << (kl + i - k0);
        else if (i > k0) outputs *= d[i].n;
    }
    s->lead_n = lead;
    s->block_elems = block;
    s->src_bytes = lead * rows * block * esz;
    s->idx_n = d[k0].n;
    s->idx_elems = d[k0].ss;
    s->idx_outputs = outputs;
    return true;
}

bool outer_first_whole(const outer_first_split &s) {
    return s.lead_n * s.block_elems * static_cast<int64_t>(dt_size(s.outer.dt))
            <= whole_block_bytes;
}

kernel_ptr make_outer_first(const outer_first_split &s, const thread_pool &pool,
        std::string *why_not) {
    auto k = std::make_shared<outer_first_kernel>(s, pool);
    const bool ok = outer_first_whole(s) ? k->make_whole(why_not) : k->make_pieces(why_not);
    return ok ? k : nullptr;
}

} // namespace crest::impl::jit
