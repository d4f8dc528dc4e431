#include <sstream>

#include "crest/op.hpp"
#include "src/op_impl.hpp"

namespace crest {

namespace {

struct kind_entry {
    op::kind kind;
    const char *name;
};

constexpr kind_entry kind_names[] = {
        {op::kind::ReduceMax, "ReduceMax"}, {op::kind::Maximum, "Maximum"},
        {op::kind::ArgMax, "ArgMax"}, {op::kind::Add, "Add"},
        {op::kind::Subtract, "Subtract"}, {op::kind::Multiply, "Multiply"},
        {op::kind::Divide, "Divide"}, {op::kind::Minimum, "Minimum"},
        {op::kind::Abs, "Abs"}, {op::kind::Clamp, "Clamp"},
        {op::kind::Exp, "Exp"}, {op::kind::GELU, "GELU"},
        {op::kind::LeakyReLU, "LeakyReLU"}, {op::kind::Log, "Log"},
        {op::kind::ReLU, "ReLU"}, {op::kind::Sigmoid, "Sigmoid"},
        {op::kind::Sqrt, "Sqrt"}, {op::kind::Square, "Square"},
        {op::kind::Tanh, "Tanh"}, {op::kind::Wildcard, "Wildcard"},
        {op::kind::End, "End"},
};

} // namespace

const char *to_string(op::kind k) {
    for (const auto &e : kind_names)
        if (e.kind == k) return e.name;
    return "Unknown";
}

op::kind op_kind_from_string(const std::string &name) {
    for (const auto &e : kind_names)
        if (name == e.name) return e.kind;
    return op::kind::Unknown;
}

const char *to_string(op::attr a) {
    switch (a) {
        case op::attr::axes: return "axes";
        case op::attr::keep_dims: return "keep_dims";
        case op::attr::auto_broadcast: return "auto_broadcast";
        case op::attr::axis: return "axis";
        case op::attr::select_last_index: return "select_last_index";
        case op::attr::min: return "min";
        case op::attr::max: return "max";
        case op::attr::alpha: return "alpha";
        case op::attr::mode: return "mode";
    }
    return "?";
}

op::op(size_t id, kind akind, const std::string &name)
    : impl_(std::make_shared<impl>()) {
    impl_->id = id;
    impl_->kind = akind;
    impl_->kind_name = to_string(akind);
    impl_->name = name;
}

op::op(size_t id, kind akind, const std::vector<logical_tensor> &inputs,
        const std::vector<logical_tensor> &outputs, const std::string &name)
    : op(id, akind, name) {
    impl_->inputs = inputs;
    impl_->outputs = outputs;
}

op::op(size_t id, const std::string &kind_name, const std::string &name)
    : op(id, op_kind_from_string(kind_name), name) {
    impl_->kind_name = kind_name;
}

// Ops are values: copies share data until one of them changes.
void op::detach() {
    if (impl_.use_count() > 1) impl_ = std::make_shared<impl>(*impl_);
}

void op::add_input(const logical_tensor &t) {
    detach();
    impl_->inputs.push_back(t);
}
void op::add_inputs(const std::vector<logical_tensor> &ts) {
    for (const auto &t : ts) add_input(t);
}
void op::add_output(const logical_tensor &t) {
    detach();
    impl_->outputs.push_back(t);
}
void op::add_outputs(const std::vector<logical_tensor> &ts) {
    for (const auto &t : ts) add_output(t);
}

op &op::set_attr(attr name, const attribute_value &value) {
    return set_attr(std::string(to_string(name)), value);
}

op &op::set_attr(const std::string &name, const attribute_value &value) {
    detach();
    impl_->attrs[name] = value;
    return *this;
}

size_t op::get_id() const { return impl_->id; }
op::kind op::get_kind() const { return impl_->kind; }
const std::string &op::get_kind_name() const { return impl_->kind_name; }
const std::string &op::get_name() const { return impl_->name; }
const std::vector<logical_tensor> &op::get_inputs() const {
    return impl_->inputs;
}
const std::vector<logical_tensor> &op::get_outputs() const {
    return impl_->outputs;
}
const std::map<std::string, attribute_value> &op::get_attrs() const {
    return impl_->attrs;
}

namespace impl {

std::string op_label(const op::impl &o) {
    std::ostringstream ss;
    ss << o.kind_name << " #" << o.id << " '" << o.name << "'";
    return ss.str();
}

std::string dims_to_string(const std::vector<int64_t> &dims) {
    std::ostringstream ss;
    ss << '[';
    for (size_t i = 0; i < dims.size(); ++i) ss << (i ? "," : "") << dims[i];
    ss << ']';
    return ss.str();
}

const char *attribute_type_name(const attribute_value &v) {
    static const char *names[] = {"s64", "s64[]", "f32", "f32[]", "bool",
            "string"};
    return names[v.index()];
}

} // namespace impl
} // namespace crest
