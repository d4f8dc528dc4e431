// The data behind crest::op, shared by the graph, schemas and partitions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "crest/op.hpp"

namespace crest {

struct op::impl {
    size_t id = 0;
    op::kind kind = op::kind::Unknown;
    std::string kind_name;
    std::string name;
    std::vector<logical_tensor> inputs;
    std::vector<logical_tensor> outputs;
    std::map<std::string, attribute_value> attrs;
};

namespace impl {

// "ReduceMax #3 'pool_max'": how every message names an op.
std::string op_label(const op::impl &o);
// "[1,128,150,150]"
std::string dims_to_string(const std::vector<int64_t> &dims);
// The type name used in JSON files: "s64", "s64[]", "f32", "f32[]", "bool", "string".
const char *attribute_type_name(const attribute_value &v);

} // namespace impl
} // namespace crest
