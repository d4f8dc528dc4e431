// Reader of the oneDNN Graph JSON format (version 3.x). The writer is in
// graph_json_write.cpp, files and crest::graph glue in graph_json_io.cpp.
//
// The reader never trusts the document: every value is checked for its JSON
// type before it is read, so no nlohmann exception is expected past parsing;
// one is still caught and turned into crest::error as a last line of defence.
#include "src/json/graph_json.hpp"

#include <cmath>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

#include "src/json/graph_json_names.hpp"

namespace crest {
namespace json {

namespace {

using nlohmann::json;

// Short description of a value for error messages. Arrays and objects are
// not dumped: they may be nested deeply and dump() recurses.
std::string describe(const json &v) {
    switch (v.type()) {
        case json::value_t::null: return "null";
        case json::value_t::boolean:
            return std::string("boolean ") + (v.get<bool>() ? "true" : "false");
        case json::value_t::number_integer:
            return "integer " + std::to_string(v.get<int64_t>());
        case json::value_t::number_unsigned:
            return "integer " + std::to_string(v.get<uint64_t>());
        case json::value_t::number_float:
            return "number " + v.dump();
        case json::value_t::string: {
            std::string s = v.get<std::string>();
            const size_t max_len = 40;
            const bool cut = s.size() > max_len;
            if (cut) s.resize(max_len);
            return "string "
                    + json(s).dump(-1, ' ', false,
                            json::error_handler_t::replace)
                    + (cut ? "..." : "");
        }
        case json::value_t::array:
            return "array of " + std::to_string(v.size()) + " elements";
        case json::value_t::object: return "object";
        default: return "invalid value";
    }
}

// One parse; holds the source name for messages.
class reader {
public:
    explicit reader(const std::string &source) : source_(source) {}

    graph_record read(const json &root);

private:
    [[noreturn]] void fail(const std::string &path, const std::string &what) const {
        throw error(status::invalid_arguments,
                source_ + ": " + (path.empty() ? "(root)" : path) + ": " + what);
    }
    [[noreturn]] void expected(const std::string &path, const std::string &what,
            const json &got) const {
        fail(path, "expected " + what + ", got " + describe(got));
    }

    // A core call that may refuse a value: keep its status, add the path.
    template <typename F>
    void core_call(const std::string &path, F &&f) const {
        try {
            f();
        } catch (const error &e) {
            throw error(e.get_status(), source_ + ": " + path + ": " + e.what());
        }
    }

    const json &object_at(const json &v, const std::string &path) const {
        if (!v.is_object()) expected(path, "an object", v);
        return v;
    }
    const json &array_at(const json &v, const std::string &path) const {
        if (!v.is_array()) expected(path, "an array", v);
        return v;
    }
    const json &member(const json &obj, const char *key, const std::string &path) const {
        auto it = obj.find(key);
        if (it == obj.end())
            fail(path, std::string("missing required key \"") + key + "\"");
        return *it;
    }
    const json *optional(const json &obj, const char *key) const {
        auto it = obj.find(key);
        return it == obj.end() ? nullptr : &*it;
    }
    static std::string child(const std::string &path, const std::string &key) {
        return path.empty() ? key : path + "." + key;
    }
    static std::string index(const std::string &path, size_t i) {
        return path + "[" + std::to_string(i) + "]";
    }

    int64_t get_int64(const json &v, const std::string &path) const {
        if (v.is_number_unsigned()) {
            const uint64_t u = v.get<uint64_t>();
            if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
                expected(path, "an integer in the int64 range", v);
            return static_cast<int64_t>(u);
        }
        if (v.is_number_integer()) return v.get<int64_t>();
        expected(path, "an integer", v);
    }
    size_t get_id(const json &v, const std::string &path) const {
        if (v.is_number_unsigned()) return static_cast<size_t>(v.get<uint64_t>());
        if (v.is_number_integer()) expected(path, "a non-negative integer id", v);
        expected(path, "an integer id", v);
    }
    std::string get_string(const json &v, const std::string &path) const {
        if (!v.is_string()) expected(path, "a string", v);
        return v.get<std::string>();
    }
    float get_f32(const json &v, const std::string &path) const {
        if (!v.is_number()) expected(path, "an f32 number", v);
        const double d = v.get<double>();
        // Out of f32 range would silently become inf.
        if (!std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max())
            expected(path, "a number in the f32 range", v);
        return static_cast<float>(d);
    }
    bool get_bool(const json &v, const std::string &path) const {
        if (v.is_boolean()) return v.get<bool>();
        // is_number_integer() covers unsigned values too.
        if (v.is_number_integer()) {
            const int64_t i = v.get<int64_t>();
            if (i == 0 || i == 1) return i == 1;
        }
        expected(path, "a bool (0, 1, true or false)", v);
    }
    std::vector<int64_t> get_int64s(const json &v, const std::string &path) const {
        array_at(v, path);
        std::vector<int64_t> out;
        out.reserve(v.size());
        for (size_t i = 0; i < v.size(); ++i)
            out.push_back(get_int64(v[i], index(path, i)));
        return out;
    }
    std::vector<float> get_f32s(const json &v, const std::string &path) const {
        array_at(v, path);
        std::vector<float> out;
        out.reserve(v.size());
        for (size_t i = 0; i < v.size(); ++i)
            out.push_back(get_f32(v[i], index(path, i)));
        return out;
    }

    // A name from a fixed table, e.g. layout_type.
    template <typename E, size_t N>
    E get_enum(const json &v, const std::string &path,
            const name_entry<E> (&table)[N]) const {
        if (v.is_string()) {
            const std::string s = v.get<std::string>();
            for (const auto &e : table)
                if (s == e.name) return e.value;
        }
        expected(path, "one of " + names_list(table), v);
    }

    attribute_value read_attr(const json &a, const std::string &path) const;
    logical_tensor read_tensor(const json &t, const std::string &path) const;
    op read_op(const json &o, const std::string &path) const;

    const std::string &source_;
};

attribute_value reader::read_attr(const json &a, const std::string &path) const {
    object_at(a, path);
    const std::string tpath = child(path, "type");
    const json &type = member(a, "type", path);
    const json &value = member(a, "value", path);
    const std::string vpath = child(path, "value");
    const std::string t = type.is_string() ? type.get<std::string>() : "";
    if (t == "s64") return get_int64(value, vpath);
    if (t == "s64[]") return get_int64s(value, vpath);
    if (t == "f32") return get_f32(value, vpath);
    if (t == "f32[]") return get_f32s(value, vpath);
    if (t == "bool") return get_bool(value, vpath);
    if (t == "string") return get_string(value, vpath);
    expected(tpath, "one of \"s64\", \"s64[]\", \"f32\", \"f32[]\", \"bool\", \"string\"",
            type);
}

logical_tensor reader::read_tensor(const json &t, const std::string &path) const {
    using lt = logical_tensor;
    object_at(t, path);
    const size_t id = get_id(member(t, "id", path), child(path, "id"));

    const json &dt = member(t, "dtype", path);
    lt::data_type dtype = lt::data_type::undef;
    if (!dt.is_string() || !dtype_from_name(dt.get<std::string>(), dtype))
        expected(child(path, "dtype"), "one of " + names_list(dtype_names), dt);

    lt::layout_type layout = lt::layout_type::strided;
    if (const json *l = optional(t, "layout_type"))
        layout = get_enum(*l, child(path, "layout_type"), layout_names);
    lt::property_type property = lt::property_type::undef;
    if (const json *p = optional(t, "property_type"))
        property = get_enum(*p, child(path, "property_type"), property_names);

    // crest extension: "ndims": -1 marks an unknown rank, which the format
    // cannot otherwise express (shape [] is rank 0).
    if (const json *n = optional(t, "ndims")) {
        if (n->is_number_integer() && !n->is_number_unsigned()
                && n->get<int64_t>() == lt::unknown_ndims) {
            lt result;
            core_call(path, [&] {
                result = lt(id, dtype, lt::unknown_ndims, layout, property);
            });
            return result;
        }
    }

    const std::string spath = child(path, "shape");
    const lt::dims shape = get_int64s(member(t, "shape", path), spath);
    if (shape.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
        fail(spath, "too many dimensions");
    lt::dims stride;
    bool has_stride = false;
    if (const json *s = optional(t, "stride")) {
        stride = get_int64s(*s, child(path, "stride"));
        has_stride = true;
    }

    // Values are kept as they are: checking dims and strides is finalize's job.
    lt result;
    core_call(path, [&] {
        if (layout == lt::layout_type::strided && has_stride
                && stride.size() == shape.size())
            result = lt(id, dtype, shape, stride, property);
        else
            result = lt(id, dtype, shape, layout, property);
    });
    return result;
}

op reader::read_op(const json &o, const std::string &path) const {
    object_at(o, path);
    const size_t id = get_id(member(o, "id", path), child(path, "id"));
    const std::string kind = get_string(member(o, "kind", path), child(path, "kind"));
    std::string name;
    if (const json *n = optional(o, "name")) name = get_string(*n, child(path, "name"));

    // Check every part before building, so the op is only made from good values.
    std::vector<std::pair<std::string, attribute_value>> attrs;
    if (const json *a = optional(o, "attrs")) {
        const std::string apath = child(path, "attrs");
        object_at(*a, apath);
        for (auto it = a->begin(); it != a->end(); ++it)
            attrs.emplace_back(it.key(), read_attr(it.value(), child(apath, it.key())));
    }
    auto tensors = [&](const char *key) {
        const std::string tpath = child(path, key);
        const json &arr = array_at(member(o, key, path), tpath);
        std::vector<logical_tensor> out;
        out.reserve(arr.size());
        for (size_t i = 0; i < arr.size(); ++i)
            out.push_back(read_tensor(arr[i], index(tpath, i)));
        return out;
    };
    const std::vector<logical_tensor> inputs = tensors("inputs");
    const std::vector<logical_tensor> outputs = tensors("outputs");

    // Unknown kinds are kept by name (kind::Unknown), not refused.
    std::optional<op> result;
    core_call(path, [&] {
        result.emplace(id, kind, name);
        for (const auto &a : attrs) result->set_attr(a.first, a.second);
        result->add_inputs(inputs);
        result->add_outputs(outputs);
    });
    return *result;
}

graph_record reader::read(const json &root) {
    object_at(root, "");
    graph_record g;
    const json &version = member(root, "version", "");
    g.version = get_string(version, "version");
    // Only the major version changes the layout of the file.
    if (g.version.compare(0, 2, "3.") != 0)
        expected("version", "a version 3.x.y", version);
    if (const json *e = optional(root, "engine_kind"))
        g.engine_kind = get_enum(*e, "engine_kind", engine_names);
    if (const json *f = optional(root, "fpmath_mode"))
        g.fpmath = get_enum(*f, "fpmath_mode", fpmath_names);
    const json &ops = array_at(member(root, "graph", ""), "graph");
    g.ops.reserve(ops.size());
    for (size_t i = 0; i < ops.size(); ++i)
        g.ops.push_back(read_op(ops[i], index("graph", i)));
    return g;
}

// 1-based line and column of a 0-based byte offset, for parse errors.
std::string line_column(const std::string &text, size_t offset) {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

// nlohmann's message without its "[json.exception.x.y] parse error at ...: "
// prefix, which repeats what we print ourselves.
std::string parse_error_reason(const std::string &what) {
    const std::string marker = ": ";
    size_t at = what.find("parse error");
    if (at == std::string::npos) return what;
    at = what.find(marker, at);
    return at == std::string::npos ? what : what.substr(at + marker.size());
}

// nlohmann's message without its "[json.exception.x.y] " tag.
std::string untagged(const std::string &what) {
    if (what.rfind("[json.exception.", 0) != 0) return what;
    const size_t end = what.find("] ");
    return end == std::string::npos ? what : what.substr(end + 2);
}

} // namespace

graph_record parse_graph(const std::string &text, const std::string &source_name) {
    json root;
    try {
        root = json::parse(text);
    } catch (const json::parse_error &e) {
        // nlohmann counts from 1; the offset of the offending byte is one less
        // (the text's length for an unexpected end).
        const size_t offset = e.byte > 0 ? e.byte - 1 : 0;
        throw error(status::invalid_arguments,
                source_name + ": parse error at byte " + std::to_string(offset)
                        + " (" + line_column(text, offset)
                        + "): " + parse_error_reason(e.what()));
    } catch (const json::exception &e) {
        // e.g. out_of_range for 1e999.
        throw error(status::invalid_arguments,
                source_name + ": cannot parse: " + untagged(e.what()));
    }
    try {
        return reader(source_name).read(root);
    } catch (const json::exception &e) {
        // Not expected: every access is type-checked first.
        throw error(status::invalid_arguments, source_name + ": " + untagged(e.what()));
    }
}

} // namespace json
} // namespace crest
