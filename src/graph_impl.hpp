// The data behind crest::graph, partition and compiled_partition.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "crest/graph.hpp"
#include "src/op_impl.hpp"

namespace crest {

namespace impl {
class executable;
}

struct graph::impl {
    engine::kind ekind;
    fpmath_mode mode;
    std::vector<std::shared_ptr<op::impl>> ops;  // validated copies, as added
    bool finalized = false;
    std::vector<size_t> topo_order;  // indices into ops, set by finalize
};

// Builds the executable of a partition from its compiled port tensors (in
// port order). Each fusion pattern names one.
using compile_fn = std::unique_ptr<impl::executable> (*)(
        const partition::impl &p, const std::vector<logical_tensor> &inputs,
        const std::vector<logical_tensor> &outputs, const engine &eng);

struct partition::impl {
    size_t id = 0;
    engine::kind ekind = engine::kind::cpu;
    fpmath_mode mode = fpmath_mode::strict;
    std::vector<std::shared_ptr<const op::impl>> ops;  // topological order
    std::vector<logical_tensor> inputs;   // ports, in first-use order
    std::vector<logical_tensor> outputs;
    bool supported = false;
    std::string reason;        // why unsupported
    std::string pattern_name;  // which pattern made it
    compile_fn compile = nullptr;
};

} // namespace crest
