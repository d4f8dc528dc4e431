// Reading and writing graphs in the oneDNN Graph JSON format, version 3.0.0
// (see spec/benchgraph.md, "JSON graph files").
//
// A file becomes a graph_record first, so that a tool can edit it (rewrite
// shapes, axes, layouts) before turning it into a crest::graph. Every
// malformed file throws crest::error(status::invalid_arguments) with a
// message naming the file, the JSON path and what was expected, e.g.
//   reducemax.json: graph[0].inputs[0].shape[2]: expected an integer, got string "x"
#pragma once

#include <string>
#include <vector>

#include "crest/engine.hpp"
#include "crest/graph.hpp"
#include "crest/op.hpp"

namespace crest {
namespace json {

struct graph_record {
    std::string version = "3.0.0";
    engine::kind engine_kind = engine::kind::cpu;
    fpmath_mode fpmath = fpmath_mode::strict;
    std::vector<op> ops;  // in file order
};

// source_name is only used in error messages (usually the file name).
graph_record parse_graph(const std::string &text, const std::string &source_name);
graph_record read_graph_file(const std::string &path);

// Pretty-printed with a 2-space indent, keys in the order of the inputs.
std::string write_graph(const graph_record &g);
void write_graph_file(const graph_record &g, const std::string &path);

// A new crest::graph with every op added; not finalized.
graph build_graph(const graph_record &g);

// The ops of p (by id, in the record's order), so that a partition can be
// dumped and fed back on its own.
graph_record partition_record(const graph_record &g, const partition &p);

// Names used in the files; nullptr / false for values outside the format.
const char *dtype_name(logical_tensor::data_type dt);
bool dtype_from_name(const std::string &name, logical_tensor::data_type &dt);

} // namespace json
} // namespace crest
