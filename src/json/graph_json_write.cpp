// Writer of the oneDNN Graph JSON format: the same shape and key order as the
// files oneDNN dumps, so that crest's dumps can be fed back to benchgraph or
// benchdnn --graph.
#include <charconv>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "src/json/graph_json.hpp"
#include "src/json/graph_json_names.hpp"

namespace crest {
namespace json {

namespace {

// Keys in insertion order, as in the inputs.
using ojson = nlohmann::ordered_json;

template <typename E, size_t N>
const char *checked_name(const name_entry<E> (&table)[N], E value, const char *what) {
    const char *name = name_of(table, value);
    if (!name)
        throw error(status::invalid_arguments,
                std::string("write_graph: ") + what + " "
                        + std::to_string(static_cast<int>(value))
                        + " has no name in the JSON format");
    return name;
}

// The shortest decimal that reads back as the same float: 0.1f is written
// as 0.1, not as the double 0.10000000149011612.
ojson f32_value(float f) {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof(buf), f);
    double d = f;
    std::from_chars(buf, res.ptr, d);
    return d;
}

ojson attr_json(const attribute_value &v) {
    ojson a = ojson::object();
    std::visit(
            [&](const auto &x) {
                using T = std::decay_t<decltype(x)>;
                if constexpr (std::is_same_v<T, int64_t>) {
                    a["type"] = "s64";
                    a["value"] = x;
                } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
                    a["type"] = "s64[]";
                    a["value"] = x;
                } else if constexpr (std::is_same_v<T, float>) {
                    a["type"] = "f32";
                    a["value"] = f32_value(x);
                } else if constexpr (std::is_same_v<T, std::vector<float>>) {
                    a["type"] = "f32[]";
                    ojson arr = ojson::array();
                    for (float f : x) arr.push_back(f32_value(f));
                    a["value"] = std::move(arr);
                } else if constexpr (std::is_same_v<T, bool>) {
                    // 0/1 as oneDNN writes it.
                    a["type"] = "bool";
                    a["value"] = x ? 1 : 0;
                } else {
                    a["type"] = "string";
                    a["value"] = x;
                }
            },
            v);
    return a;
}

ojson tensor_json(const logical_tensor &t) {
    ojson j = ojson::object();
    j["id"] = static_cast<uint64_t>(t.get_id());
    j["dtype"] = checked_name(dtype_names, t.get_data_type(), "data type");
    const bool unknown_rank = t.get_ndims() == logical_tensor::unknown_ndims;
    j["shape"] = unknown_rank ? logical_tensor::dims() : t.get_dims();
    j["stride"] = unknown_rank ? logical_tensor::dims() : t.get_strides();
    j["layout_type"] = checked_name(layout_names, t.get_layout_type(), "layout type");
    j["property_type"] =
            checked_name(property_names, t.get_property_type(), "property type");
    // crest extension, see the reader: shape [] alone would mean rank 0.
    if (unknown_rank) j["ndims"] = logical_tensor::unknown_ndims;
    return j;
}

ojson op_json(const op &o) {
    ojson j = ojson::object();
    j["id"] = static_cast<uint64_t>(o.get_id());
    j["name"] = o.get_name();
    // Unknown kinds keep the name they were read with.
    j["kind"] = o.get_kind_name();
    ojson attrs = ojson::object();
    for (const auto &a : o.get_attrs()) attrs[a.first] = attr_json(a.second);
    j["attrs"] = std::move(attrs);
    ojson inputs = ojson::array();
    for (const auto &t : o.get_inputs()) inputs.push_back(tensor_json(t));
    j["inputs"] = std::move(inputs);
    ojson outputs = ojson::array();
    for (const auto &t : o.get_outputs()) outputs.push_back(tensor_json(t));
    j["outputs"] = std::move(outputs);
    return j;
}

} // namespace

const char *dtype_name(logical_tensor::data_type dt) {
    return name_of(dtype_names, dt);
}

bool dtype_from_name(const std::string &name, logical_tensor::data_type &dt) {
    for (const auto &e : dtype_names) {
        if (name == e.name) {
            dt = e.value;
            return true;
        }
    }
    return false;
}

std::string write_graph(const graph_record &g) {
    ojson root = ojson::object();
    root["version"] = g.version;
    root["engine_kind"] = checked_name(engine_names, g.engine_kind, "engine kind");
    root["fpmath_mode"] = checked_name(fpmath_names, g.fpmath, "fpmath mode");
    ojson ops = ojson::array();
    for (const op &o : g.ops) ops.push_back(op_json(o));
    root["graph"] = std::move(ops);
    // Names are caller strings: replace invalid UTF-8 rather than throw.
    return root.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
}

} // namespace json
} // namespace crest
