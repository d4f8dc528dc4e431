// Rewriting a graph record before it is built: --dt, --in-shapes, --mb,
// --op-attrs, --fpmath.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "src/json/graph_json.hpp"
#include "tools/benchgraph/options.hpp"

namespace benchgraph {

// Ids of tensors some op consumes and no op produces, in first-use order.
std::vector<size_t> graph_input_ids(const crest::json::graph_record &rec);
// Ids of tensors produced by an op.
std::set<size_t> produced_ids(const crest::json::graph_record &rec);

// Applies the rewrites of s to rec. Throws crest::error(invalid_arguments)
// with a message naming the option for a spec that does not fit the graph.
void apply_rewrites(crest::json::graph_record &rec, const settings &s);

// "2x-1x3" -> {2, -1, 3}; "" -> {}. Throws crest::error on a bad number.
std::vector<int64_t> parse_int_list(const std::string &text,
        const std::string &what);

// --input-values: tensor id -> values.
std::map<size_t, std::vector<int64_t>> parse_input_values(
        const std::string &spec);

} // namespace benchgraph
