#include "src/op_schema.hpp"

#include <limits>
#include <map>
#include <memory>
#include <sstream>

namespace crest::impl {

namespace {

std::map<op::kind, op_schema> &registry() {
    static std::map<op::kind, op_schema> r;
    return r;
}

const char *attr_kind_name(attr_kind k) {
    switch (k) {
        case attr_kind::s64: return "s64";
        case attr_kind::s64_list: return "s64[]";
        case attr_kind::f32: return "f32";
        case attr_kind::f32_list: return "f32[]";
        case attr_kind::boolean: return "bool";
        case attr_kind::string: return "string";
    }
    return "?";
}

size_t variant_index(attr_kind k) {
    return static_cast<size_t>(k);  // same order as attribute_value
}

std::string types_to_string(const std::vector<data_type> &ts) {
    std::string s;
    for (size_t i = 0; i < ts.size(); ++i)
        s += (i ? ", " : "") + std::string(to_string(ts[i]));
    return "{" + s + "}";
}

void check_tensor(const op::impl &o, const logical_tensor &t,
        const std::string &role) {
    const auto problem = tensor_shape_problem(t);
    if (!problem.empty())
        fail(status::invalid_shape, o,
                role + " (id " + std::to_string(t.get_id()) + ") " + problem);
}

void check_port(const op::impl &o, const logical_tensor &t,
        const port_spec &p, const std::string &role) {
    const auto dt = t.get_data_type();
    bool ok = false;
    for (auto a : p.types) ok = ok || a == dt;
    if (!ok)
        fail(status::invalid_data_type, o,
                role + " '" + p.name + "' (id " + std::to_string(t.get_id())
                        + ") has data type " + to_string(dt) + "; expected one of "
                        + types_to_string(p.types));
    check_tensor(o, t, role + " '" + p.name + "'");
}

} // namespace

std::string tensor_shape_problem(const logical_tensor &t) {
    const auto &d = t.get_dims();
    if (t.get_ndims() > 12)
        return "has rank " + std::to_string(t.get_ndims()) + "; expected at most 12";
    if (t.get_ndims() < logical_tensor::unknown_ndims)
        return "has rank " + std::to_string(t.get_ndims())
                + "; expected -1 (unknown) or 0 to 12";
    const auto limit = std::numeric_limits<int64_t>::max() / 16;
    int64_t n = 1;
    for (size_t i = 0; i < d.size(); ++i) {
        if (d[i] < logical_tensor::unknown_dim)
            return "has dims " + dims_to_string(d) + ": dim " + std::to_string(i)
                    + " = " + std::to_string(d[i])
                    + " is negative; expected >= 0 (or -1 for unknown)";
        if (d[i] > 0 && n > limit / d[i])
            return "has dims " + dims_to_string(d)
                    + ": the element count overflows 64 bits";
        if (d[i] > 0) n *= d[i];
    }
    if (t.get_layout_type() != logical_tensor::layout_type::strided) return "";
    const auto &s = t.get_strides();
    if (s.size() != d.size())
        return "has " + std::to_string(d.size()) + " dims but "
                + std::to_string(s.size()) + " strides";
    int64_t span = 1;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] < 0 && s[i] != logical_tensor::unknown_dim)
            return "has strides " + dims_to_string(s) + ": stride " + std::to_string(i)
                    + " = " + std::to_string(s[i]) + " is negative; expected >= 0";
        if (d[i] > 1 && s[i] > 0) {
            if (s[i] > limit / (d[i] - 1) || span > limit - s[i] * (d[i] - 1))
                return "has strides " + dims_to_string(s)
                        + ": the memory span overflows 64 bits";
            span += s[i] * (d[i] - 1);
        }
    }
    return "";
}

op_schema &op_schema::input(
        const std::string &n, std::vector<data_type> t, bool is_optional) {
    inputs.push_back({n, std::move(t), is_optional});
    return *this;
}

op_schema &op_schema::output(
        const std::string &n, std::vector<data_type> t, int type_from_input) {
    outputs.push_back({n, std::move(t), false});
    output_type_from.push_back(type_from_input);
    return *this;
}

op_schema &op_schema::attr(const std::string &n, attr_kind k) {
    attrs.push_back({n, k, std::nullopt, false});
    return *this;
}

op_schema &op_schema::attr(const std::string &n, attr_kind k, attribute_value def) {
    attrs.push_back({n, k, std::optional<attribute_value>(std::move(def)), false});
    return *this;
}

op_schema &op_schema::required_attr(const std::string &n, attr_kind k) {
    attrs.push_back({n, k, std::nullopt, true});
    return *this;
}

bool register_op_schema(op_schema s) {
    registry().insert_or_assign(s.kind, std::move(s));
    return true;
}

const op_schema *find_op_schema(op::kind k) {
    auto it = registry().find(k);
    return it == registry().end() ? nullptr : &it->second;
}

const std::vector<data_type> &float_types() {
    static const std::vector<data_type> t {
            data_type::f32, data_type::bf16, data_type::f16};
    return t;
}

void fail(status st, const op::impl &o, const std::string &what) {
    throw error(st, op_label(o) + ": " + what);
}

void validate_op(op::impl &o) {
    const op_schema *s = find_op_schema(o.kind);
    if (!s) {
        // Unknown kinds are kept as they are: the partitioner marks them
        // unsupported. Only their tensors must be sane.
        for (const auto &t : o.inputs) check_tensor(o, t, "input");
        for (const auto &t : o.outputs) check_tensor(o, t, "output");
        return;
    }
    size_t min_in = 0;
    for (const auto &p : s->inputs) min_in += p.optional ? 0 : 1;
    if (!s->variadic_inputs
            && (o.inputs.size() < min_in || o.inputs.size() > s->inputs.size())) {
        std::string want = min_in == s->inputs.size()
                ? std::to_string(min_in)
                : std::to_string(min_in) + " to " + std::to_string(s->inputs.size());
        fail(status::invalid_graph_op, o,
                "has " + std::to_string(o.inputs.size())
                        + " inputs; expected " + want);
    }
    if (!s->variadic_outputs && o.outputs.size() != s->outputs.size())
        fail(status::invalid_graph_op, o,
                "has " + std::to_string(o.outputs.size())
                        + " outputs; expected " + std::to_string(s->outputs.size()));
    for (size_t i = 0; i < o.inputs.size(); ++i) {
        if (s->variadic_inputs) check_tensor(o, o.inputs[i], "input " + std::to_string(i));
        else check_port(o, o.inputs[i], s->inputs[i], "input");
    }
    for (size_t i = 0; i < o.outputs.size(); ++i) {
        if (s->variadic_outputs) {
            check_tensor(o, o.outputs[i], "output " + std::to_string(i));
            continue;
        }
        check_port(o, o.outputs[i], s->outputs[i], "output");
        const int from = s->output_type_from[i];
        if (from >= 0 && static_cast<size_t>(from) < o.inputs.size()
                && o.inputs[from].get_data_type() != o.outputs[i].get_data_type())
            fail(status::invalid_data_type, o,
                    "output '" + s->outputs[i].name + "' has data type "
                            + to_string(o.outputs[i].get_data_type())
                            + " but input '" + s->inputs[from].name + "' has "
                            + to_string(o.inputs[from].get_data_type())
                            + "; expected the same");
    }
    for (const auto &a : s->attrs) {
        auto it = o.attrs.find(a.name);
        if (it == o.attrs.end()) {
            if (a.required)
                fail(status::invalid_graph_op, o,
                        "attr " + a.name + " is required but missing");
            if (a.default_value) o.attrs[a.name] = *a.default_value;
            continue;
        }
        if (it->second.index() != variant_index(a.kind))
            fail(status::invalid_graph_op, o,
                    "attr " + a.name + " has type "
                            + attribute_type_name(it->second) + "; expected "
                            + attr_kind_name(a.kind));
    }
    if (s->check) s->check(o);
}

const attribute_value *find_attr(const op::impl &o, const std::string &n) {
    auto it = o.attrs.find(n);
    return it == o.attrs.end() ? nullptr : &it->second;
}

int64_t attr_s64(const op::impl &o, const std::string &n) {
    return std::get<int64_t>(*find_attr(o, n));
}
bool attr_bool(const op::impl &o, const std::string &n) {
    return std::get<bool>(*find_attr(o, n));
}
float attr_f32(const op::impl &o, const std::string &n) {
    return std::get<float>(*find_attr(o, n));
}
const std::string &attr_string(const op::impl &o, const std::string &n) {
    return std::get<std::string>(*find_attr(o, n));
}
const std::vector<int64_t> &attr_s64_list(
        const op::impl &o, const std::string &n) {
    return std::get<std::vector<int64_t>>(*find_attr(o, n));
}

std::vector<int64_t> normalize_axes(const op::impl &o,
        const std::vector<int64_t> &axes, int64_t rank, const std::string &what) {
    std::vector<int64_t> out;
    out.reserve(axes.size());
    const int64_t lo = -rank, hi = rank - 1;
    for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t a = axes[i];
        if (a < lo || a > hi) {
            std::ostringstream ss;
            ss << what << "[" << i << "] = " << a << " is out of range ";
            if (rank == 0) ss << "(a rank-0 source has no axes)";
            else ss << "[" << lo << ", " << hi << "] for rank " << rank;
            fail(status::invalid_arguments, o, ss.str());
        }
        const int64_t n = a < 0 ? a + rank : a;
        for (size_t j = 0; j < out.size(); ++j)
            if (out[j] == n)
                fail(status::invalid_arguments, o,
                        what + "[" + std::to_string(i) + "] = " + std::to_string(a)
                                + " repeats axis " + std::to_string(n) + " (named by "
                                + what + "[" + std::to_string(j)
                                + "]); expected each axis at most once");
        out.push_back(n);
    }
    return out;
}

} // namespace crest::impl
