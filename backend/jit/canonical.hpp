// Canonical form of a ReduceMax problem: the dims that matter, outer to
// inner, merged as far as both src and dst strides allow. Kernels are chosen
// from this form only, so two problems that differ by size-1 dims, by the
// order of their dims or by how a dense group is split share one plan.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/kernel.hpp"

namespace crest::impl::jit {

struct canon_dim {
    int64_t n = 1;   // size, > 1
    int64_t ss = 0;  // src stride, elements
    int64_t ds = 0;  // dst stride, elements; always 0 for a reduced dim
    bool reduced = false;
};

struct canonical {
    enum class kind {
        empty_output,  // a kept dim has size 0: nothing to write
        fill_neg_inf,  // a reduced dim has size 0: every output is -inf
        compute,       // dims below describe the work
    };
    kind k = kind::compute;
    // Outer to inner, sorted by decreasing src stride. Invariants (asserted
    // by canonicalize): every n > 1; reduced dims have ds == 0 and ss > 0;
    // no two neighbours could be merged; the element counts of src and of
    // the output equal those of the problem.
    std::vector<canon_dim> dims;

    int64_t num_outputs() const;  // product of kept sizes
    int64_t num_reduced() const;  // product of reduced sizes
    bool has_reduced() const;
};

canonical canonicalize(const reduce_problem &p);

} // namespace crest::impl::jit
