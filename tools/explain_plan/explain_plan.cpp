// explain_plan: prints how the JIT backend would run one ReduceMax problem
// (the canonical dims, the one-stage plan with its kernels' configs, and
// the outer-first split where the engine takes it). A developer's tool
// for planning work on the plans; it runs nothing.
//
//   explain_plan DT DIMS AXES [TAG] [THREADS]
//   explain_plan bf16 3x174762x5x5 1,3
//   explain_plan f32 64x64x56x56 0 acdb 2
//
// DIMS as benchgraph's in-shapes (AxBxC), AXES comma-separated, TAG a
// dense layout as benchgraph's (abcd = row-major, acdb = channels-last).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include "backend/jit/canonical.hpp"
#include "backend/jit/isa.hpp"
#include "backend/jit/outer_first.hpp"
#include "backend/jit/plan.hpp"

using namespace crest::impl;
using namespace crest::impl::jit;

namespace {

std::vector<int64_t> split_ints(const std::string &s, char sep) {
    std::vector<int64_t> v;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, sep)) v.push_back(std::stoll(item));
    return v;
}

const char *family_name(family_t f) {
    switch (f) {
        case family_t::inner: return "inner";
        case family_t::vert_tile: return "vert_tile";
        case family_t::vert_reg: return "vert_reg";
    }
    return "?";
}

const char *kind_name(plan_kind k) {
    switch (k) {
        case plan_kind::empty: return "empty";
        case plan_kind::fill: return "fill";
        case plan_kind::copy: return "copy";
        case plan_kind::inner: return "inner";
        case plan_kind::vertical: return "vertical";
        case plan_kind::strided: return "strided";
    }
    return "?";
}

void print_dim(const char *what, const loop_dim &d) {
    std::printf("    %-8s n=%lld ss=%lldB ds=%lldB\n", what, (long long)d.n, (long long)d.ss,
            (long long)d.ds);
}

void print_code(const char *what, const std::shared_ptr<const generated_code> &code) {
    if (!code) return;
    const kernel_config &c = code->cfg;
    std::printf("    %-12s %s unroll=%d block_n=%d prefetch=%d fused16=%d prefetch_bytes=%d "
                "prefetch_pass=%d l1=%d block=%dx%d packed=%d/%d partial_last=%d "
                "stream_dst=%d fold_cols=%d batch=%d\n",
            what, family_name(c.family), c.unroll, c.block_n, c.prefetch, c.fused16,
            c.prefetch_bytes, c.prefetch_pass, c.prefetch_l1_bytes, c.block_rows, c.block_cols,
            c.block_row_stride, c.block_slice_stride, c.partial_last, c.stream_dst, c.fold_cols,
            c.block_batch);
}

void print_plan(const char *title, const plan &P) {
    std::printf("%s: %s (%s), %lld outputs, %lld src bytes, %d chunks%s\n", title, P.name,
            kind_name(P.kind), (long long)P.n_out, (long long)P.src_bytes, P.nchunks,
            P.two_level ? " two-level" : "");
    if (P.two_level) std::printf("    split    %d\n", P.split);
    for (int k = 0; k < P.nouter; ++k) print_dim("outer", P.outer[k]);
    print_dim("jd", P.jd);
    for (int k = 1; k < P.njsub; ++k) print_dim("jsub", P.jsub[k]);
    for (int k = 0; k < P.nextra; ++k) print_dim("extra", P.extra[k]);
    print_dim("rows", P.rows);
    if (P.kind == plan_kind::inner) std::printf("    n        %lld\n", (long long)P.n);
    std::printf("    out_align=%lld period=%lld slab_width=%lld tile_scratch=%lld\n",
            (long long)P.out_align, (long long)P.period, (long long)P.slab_width,
            (long long)P.tile_scratch_bytes);
    print_code("code", P.code);
    print_code("slab_code", P.slab_code);
    print_code("period_code", P.period_code);
    print_code("chunk_code", P.chunk_code);
    print_code("wide_code", P.wide_code);
    print_code("fixed_code", P.fixed_code);
    print_code("combine_code", P.combine_code);
}

reduce_problem make(data_type dt, const dims_t &dims, const std::vector<int64_t> &axes,
        const std::string &tag) {
    reduce_problem p;
    p.dt = dt;
    p.dims = dims;
    const size_t nd = dims.size();
    // tag letters name the dims outer to inner in memory (a = dim 0).
    std::string order = tag.empty() ? std::string("abcdefghijkl").substr(0, nd) : tag;
    p.src_strides.assign(nd, 0);
    int64_t st = 1;
    for (size_t i = order.size(); i-- > 0;) {
        const size_t d = static_cast<size_t>(order[i] - 'a');
        p.src_strides[d] = st;
        st *= dims[d];
    }
    for (int64_t a : axes) p.reduce_mask |= 1u << (a < 0 ? a + int64_t(nd) : a);
    // dst dense in the same order, keep_dims view.
    p.dst_strides.assign(nd, 0);
    st = 1;
    for (size_t i = order.size(); i-- > 0;) {
        const size_t d = static_cast<size_t>(order[i] - 'a');
        if (p.is_reduced(static_cast<int>(d))) continue;
        p.dst_strides[d] = st;
        st *= dims[d];
    }
    return p;
}

} // namespace

int main(int argc, char **argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s DT DIMS AXES [TAG] [THREADS]\n", argv[0]);
        return 2;
    }
    const std::string dts = argv[1];
    const data_type dt = dts == "bf16" ? data_type::bf16
            : dts == "f16"             ? data_type::f16
                                       : data_type::f32;
    const reduce_problem p = make(dt, split_ints(argv[2], 'x'), split_ints(argv[3], ','),
            argc > 4 ? argv[4] : "");
    const int threads = argc > 5 ? std::atoi(argv[5]) : 2;

    const canonical c = canonicalize(p);
    std::printf("isa %s, L3 %lld bytes, %d threads\ncanonical:", isa_name(max_isa()),
            (long long)planned_l3_bytes(), threads);
    for (const canon_dim &d : c.dims)
        std::printf(" [%lld%s ss=%lld ds=%lld]", (long long)d.n, d.reduced ? " red" : "",
                (long long)d.ss, (long long)d.ds);
    std::printf("\n");

    plan P;
    std::string why;
    if (!make_plan(p, max_isa(), threads, &P, &why)) {
        std::printf("no plan: %s\n", why.c_str());
        return 0;
    }
    print_plan("one stage", P);
    outer_first_split s;
    if (!split_outer_first(p, &s)) {
        std::printf("outer-first: not eligible\n");
        return 0;
    }
    std::printf("outer-first: eligible, %s; lead %lld, block %lld elements, index %lld x %lld "
                "elements, %lld outputs an index\n",
            outer_first_preferred(P, s) ? "taken" : "the one stage reads well (kept)",
            (long long)s.lead_n, (long long)s.block_elems, (long long)s.idx_n, (long long)s.idx_elems,
            (long long)s.idx_outputs);
    const bool whole = outer_first_whole(s);
    plan O, B;
    const int t = whole ? threads : 1;
    if (make_plan(s.outer, max_isa(), t, &O, &why)) print_plan("  outer stage", O);
    if (make_plan(s.block, max_isa(), t, &B, &why)) print_plan("  block stage", B);
    std::printf("  %s\n", whole ? "whole stages on the pool" : "in pieces, one thread a range");
    return 0;
}
