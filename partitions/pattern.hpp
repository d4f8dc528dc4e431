// Fusion patterns: one registration = name, priority, matcher, compile
// function. The partitioner tries patterns from the highest priority down.
#pragma once

#include <string>
#include <vector>

#include "src/graph_impl.hpp"

namespace crest::impl {

// Priority bands: a longer fused chain outranks the single ops it contains.
namespace priority {
constexpr float single_op = 1.0f;
constexpr float fused_pair = 5.0f;
constexpr float fused_chain = 8.0f;
} // namespace priority

// Read-only view of a finalized graph for matchers.
struct graph_view {
    const std::vector<std::shared_ptr<op::impl>> &ops;  // as added
    const std::vector<size_t> &topo_order;
    fpmath_mode mode;
    // Index of the op writing tensor tid, or -1 for a graph input.
    long producer_of(size_t tid) const;
    // Indices of the ops reading tensor tid.
    std::vector<size_t> consumers_of(size_t tid) const;
};

struct pattern {
    std::string name;
    float priority = priority::single_op;
    bool fuses = false;  // more than one op: skipped under policy::debug
    // The ops (indices into graph_view::ops) matched with `root` first, or
    // empty. `taken` marks ops already in a partition.
    std::vector<size_t> (*match)(const graph_view &g, size_t root,
            const std::vector<bool> &taken) = nullptr;
    compile_fn compile = nullptr;
};

bool register_pattern(const pattern &p);
// All patterns, highest priority first.
const std::vector<pattern> &registered_patterns();

} // namespace crest::impl
