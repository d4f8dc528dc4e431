// Maximum and the binary and unary post-ops (ops.md). crest validates and
// infers their shapes now; kernels for them come with the fusion work.
#include "src/ops/shape_rules.hpp"

namespace crest::impl {

dims_t broadcast_dims(const op::impl &o, const dims_t &a, const dims_t &b,
        const std::string &mode) {
    if (mode == "none") {
        if (a != b)
            fail(status::invalid_shape, o,
                    "inputs have shapes " + dims_to_string(a) + " and "
                            + dims_to_string(b)
                            + "; auto_broadcast = none expects equal shapes");
        return a;
    }
    const size_t r = std::max(a.size(), b.size());
    dims_t out(r);
    for (size_t i = 0; i < r; ++i) {
        const int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
        const int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
        if (x == y || y == 1) out[i] = x;
        else if (x == 1) out[i] = y;
        else if (x < 0) out[i] = y;  // unknown meets known
        else if (y < 0) out[i] = x;
        else
            fail(status::invalid_shape, o,
                    "inputs have shapes " + dims_to_string(a) + " and "
                            + dims_to_string(b) + " that do not broadcast (dim "
                            + std::to_string(i) + ": " + std::to_string(x)
                            + " vs " + std::to_string(y) + ")");
    }
    return out;
}

namespace {

void check_broadcast_attr(const op::impl &o) {
    const auto &m = attr_string(o, "auto_broadcast");
    if (m != "numpy" && m != "none")
        fail(status::invalid_arguments, o,
                "attr auto_broadcast = '" + m + "'; expected numpy or none");
}

std::vector<std::optional<dims_t>> infer_binary(
        const op::impl &o, const std::vector<std::optional<dims_t>> &in) {
    if (!in[0] || !in[1]) return {std::nullopt};
    return {broadcast_dims(o, *in[0], *in[1], attr_string(o, "auto_broadcast"))};
}

std::vector<std::optional<dims_t>> infer_same(
        const op::impl &, const std::vector<std::optional<dims_t>> &in) {
    return {in[0]};
}

op_schema binary(op::kind k) {
    return op_schema(k)
            .input("src_0", float_types())
            .input("src_1", float_types())
            .output("dst", float_types(), 0)
            .attr("auto_broadcast", attr_kind::string, attribute_value(std::string("numpy")))
            .set_check(check_broadcast_attr)
            .set_infer(infer_binary);
}

op_schema unary(op::kind k) {
    return op_schema(k)
            .input("src", float_types())
            .output("dst", float_types(), 0)
            .set_infer(infer_same);
}

void check_gelu(const op::impl &o) {
    const auto &m = attr_string(o, "mode");
    if (m != "erf" && m != "tanh")
        fail(status::invalid_arguments, o,
                "attr mode = '" + m + "'; expected erf or tanh");
}

void check_clamp(const op::impl &o) {
    if (attr_f32(o, "min") > attr_f32(o, "max"))
        fail(status::invalid_arguments, o,
                "attr min = " + std::to_string(attr_f32(o, "min"))
                        + " is above attr max = " + std::to_string(attr_f32(o, "max")));
}

bool register_all() {
    for (auto k : {op::kind::Maximum, op::kind::Minimum, op::kind::Add,
                 op::kind::Subtract, op::kind::Multiply, op::kind::Divide})
        register_op_schema(binary(k));
    for (auto k : {op::kind::Abs, op::kind::Exp, op::kind::Log, op::kind::ReLU,
                 op::kind::Sigmoid, op::kind::Sqrt, op::kind::Square,
                 op::kind::Tanh})
        register_op_schema(unary(k));
    register_op_schema(unary(op::kind::Clamp)
                    .required_attr("min", attr_kind::f32)
                    .required_attr("max", attr_kind::f32)
                    .set_check(check_clamp));
    register_op_schema(unary(op::kind::LeakyReLU)
                    .required_attr("alpha", attr_kind::f32));
    register_op_schema(unary(op::kind::GELU)
                    .attr("mode", attr_kind::string, attribute_value(std::string("erf")))
                    .set_check(check_gelu));
    return true;
}

} // namespace

static const bool elementwise_registered = register_all();

} // namespace crest::impl
