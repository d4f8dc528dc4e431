#include "backend/jit/canonical.hpp"

#include <algorithm>
#include <cassert>

namespace crest::impl::jit {

int64_t canonical::num_outputs() const {
    int64_t r = 1;
    for (const auto &d : dims)
        if (!d.reduced) r *= d.n;
    return r;
}

int64_t canonical::num_reduced() const {
    int64_t r = 1;
    for (const auto &d : dims)
        if (d.reduced) r *= d.n;
    return r;
}

bool canonical::has_reduced() const {
    for (const auto &d : dims)
        if (d.reduced) return true;
    return false;
}

canonical canonicalize(const reduce_problem &p) {
    canonical c;
    bool zero_kept = false, zero_reduced = false;
    for (int d = 0; d < p.ndims(); ++d) {
        if (p.dims[d] == 0) (p.is_reduced(d) ? zero_reduced : zero_kept) = true;
    }
    // A kept zero wins: there is no output to fill.
    if (zero_kept) {
        c.k = canonical::kind::empty_output;
        return c;
    }
    if (zero_reduced) {
        c.k = canonical::kind::fill_neg_inf;
        // Still describe the outputs so that the filler knows where they are.
        for (int d = 0; d < p.ndims(); ++d)
            if (!p.is_reduced(d) && p.dims[d] > 1)
                c.dims.push_back({p.dims[d], 0, p.dst_strides[d], false});
        std::sort(c.dims.begin(), c.dims.end(),
                [](const canon_dim &a, const canon_dim &b) { return a.ds > b.ds; });
        return c;
    }

    for (int d = 0; d < p.ndims(); ++d) {
        const int64_t n = p.dims[d];
        if (n == 1) continue;  // size-1 dims carry no work whatever their strides
        const bool red = p.is_reduced(d);
        // Reducing over a broadcast dim (stride 0) sees one value n times:
        // max is idempotent, so the dim can go.
        if (red && p.src_strides[d] == 0) continue;
        c.dims.push_back({n, p.src_strides[d], red ? 0 : p.dst_strides[d], red});
    }

    // Outer to inner by src stride: reading src in memory order is what
    // bandwidth asks for. Kept dims break ties by dst stride.
    // An insertion sort: stable, a handful of dims, and unlike
    // std::stable_sort no temporary buffer (a cold first compile pays for
    // every first-touched page of heap and code).
    const auto outer_first = [](const canon_dim &a, const canon_dim &b) {
        if (a.ss != b.ss) return a.ss > b.ss;
        return a.ds > b.ds;
    };
    for (size_t i = 1; i < c.dims.size(); ++i)
        for (size_t j = i; j > 0 && outer_first(c.dims[j], c.dims[j - 1]); --j)
            std::swap(c.dims[j], c.dims[j - 1]);

    std::vector<canon_dim> merged;
    for (const auto &d : c.dims) {
        if (!merged.empty()) {
            canon_dim &o = merged.back();
            const bool src_ok = o.ss == d.n * d.ss;
            const bool dst_ok = d.reduced || o.ds == d.n * d.ds;
            if (o.reduced == d.reduced && src_ok && dst_ok) {
                o.n *= d.n;
                o.ss = d.ss;
                o.ds = d.ds;
                continue;
            }
        }
        merged.push_back(d);
    }
    c.dims = std::move(merged);

#ifndef NDEBUG
    int64_t in_count = 1, out_count = 1, src_count = 1, dst_count = 1;
    for (int d = 0; d < p.ndims(); ++d) {
        if (p.is_reduced(d) && p.src_strides[d] == 0) continue;
        src_count *= p.dims[d];
        if (!p.is_reduced(d)) dst_count *= p.dims[d];
    }
    for (size_t i = 0; i < c.dims.size(); ++i) {
        const canon_dim &d = c.dims[i];
        assert(d.n > 1);
        assert(!d.reduced || (d.ds == 0 && d.ss > 0));
        if (i > 0) {
            const canon_dim &o = c.dims[i - 1];
            assert(o.ss >= d.ss);
            assert(!(o.reduced == d.reduced && o.ss == d.n * d.ss
                    && (d.reduced || o.ds == d.n * d.ds)));
        }
        in_count *= d.n;
        if (!d.reduced) out_count *= d.n;
    }
    assert(in_count == src_count && out_count == dst_count);
#endif
    return c;
}

} // namespace crest::impl::jit
