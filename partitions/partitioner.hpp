#pragma once

#include <vector>

#include "src/graph_impl.hpp"

namespace crest::impl {

// Groups a finalized graph's ops into partitions: every op in exactly one,
// partitions in topological order, ops no pattern claims in unsupported
// partitions of their own with the reason.
std::vector<partition> make_partitions(const graph::impl &g, partition::policy pol);

} // namespace crest::impl
