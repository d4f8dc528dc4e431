#pragma once

#include <memory>
#include <vector>

#include "src/exec/executable.hpp"
#include "src/graph_impl.hpp"

namespace crest::impl {

// Compiles a single-op ReduceMax partition. With attr axes the kernel is
// chosen here; with an axes input it is chosen at execution per set of
// axes values and cached in the executable.
std::unique_ptr<executable> compile_reduce_max(const partition::impl &p,
        const std::vector<logical_tensor> &inputs,
        const std::vector<logical_tensor> &outputs, const engine &eng);

} // namespace crest::impl
