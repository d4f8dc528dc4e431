// Reference backend: plain loops over any strides, obviously correct. The
// oracle of every test; shares no code with the jit and dnnl backends.
#pragma once

#include "backend/kernel.hpp"

namespace crest::impl::ref {

// Computes a ReduceMax problem exactly as ops.md says (NaN propagates,
// -inf for empty reductions, identity for an empty mask).
void reduce_max(const reduce_problem &p, const void *src, void *dst);

// A kernel named "ref:reduce_max" that calls reduce_max.
kernel_ptr make_reduce_max(const reduce_problem &p);

} // namespace crest::impl::ref
