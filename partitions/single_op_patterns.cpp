// Single-op patterns: each op kind crest computes on its own.
#include "partitions/pattern.hpp"
#include "src/exec/reduce_max_exec.hpp"

namespace crest::impl {
namespace {

template <op::kind K>
std::vector<size_t> match_single(
        const graph_view &g, size_t root, const std::vector<bool> &taken) {
    if (taken[root] || g.ops[root]->kind != K) return {};
    return {root};
}

const bool reduce_max_registered = register_pattern({"reduce_max",
        priority::single_op, false, match_single<op::kind::ReduceMax>,
        compile_reduce_max});

} // namespace
} // namespace crest::impl
