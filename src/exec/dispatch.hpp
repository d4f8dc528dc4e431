// Backend choice for a problem: the fastest backend whose semantics fit the
// graph's fpmath mode, among those the engine allows.
#pragma once

#include "backend/kernel.hpp"
#include "crest/engine.hpp"
#include "crest/graph.hpp"

namespace crest::impl {

// oneDNN only under fpmath any (ops.md: it loses NaNs) and only where it has
// a JIT implementation; then crest's JIT; the reference kernel last. Throws
// status::unimplemented when the engine's backend filter leaves nothing.
kernel_ptr select_reduce_max_kernel(
        const reduce_problem &p, fpmath_mode mode, const engine &eng);

} // namespace crest::impl
