// One case's state while it runs (runner.cpp), shared with the timing of
// mode P (run_perf.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "crest/crest.hpp"
#include "src/json/graph_json.hpp"
#include "tools/benchgraph/data.hpp"
#include "tools/benchgraph/options.hpp"
#include "tools/benchgraph/runner.hpp"

namespace benchgraph {

struct run_state {
    const crest::json::graph_record &rec;
    const settings &s;
    const globals &g;
    std::vector<crest::partition> parts;
    std::map<size_t, crest::logical_tensor> lts;  // concrete tensors by id
    std::map<size_t, buffer_ptr> inputs;      // graph inputs
    std::map<size_t, std::vector<int64_t>> int_values;  // s32 inputs written
};

// Tensors bound to the buffers, built once so that timing measures only
// execute().
struct bindings {
    std::vector<std::vector<crest::tensor>> ins, outs;
};

bindings bind_all(run_state &st, const crest::engine &eng,
        std::map<size_t, buffer_ptr> &outs);

// Runs every compiled partition in order; outputs land in `outs`.
void execute_all(run_state &st, const crest::engine &eng,
        const std::vector<crest::compiled_partition> &cps,
        std::map<size_t, buffer_ptr> &outs);

// The op of the record with this id, or null.
const crest::op *find_op(const crest::json::graph_record &rec, size_t id);

// A bool attribute (or an integer one, nonzero) of o; dflt when absent.
bool attr_bool(const crest::op &o, const char *name, bool dflt);

// Mode P: times the partitions, the roofline and (for a one-op ReduceMax)
// oneDNN against each other in the same run (time_interleaved's rule) into
// res.perf.
void run_perf(run_state &st, const crest::engine &eng,
        const std::vector<crest::compiled_partition> &cps,
        std::map<size_t, buffer_ptr> &outs, case_result &res);

} // namespace benchgraph
