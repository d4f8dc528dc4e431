// ArgMax (ops.md; crest extension after ONNX): one axis, keep_dims default
// true, s32 or s64 indices.
#include "src/ops/shape_rules.hpp"

namespace crest::impl {
namespace {

void check_arg_max(const op::impl &o) {
    const auto rank = o.inputs[0].get_ndims();
    if (rank >= 0) normalize_axes(o, {attr_s64(o, "axis")}, rank, "attr axis");
}

std::vector<std::optional<dims_t>> infer_arg_max(
        const op::impl &o, const std::vector<std::optional<dims_t>> &in) {
    if (!in[0]) return {std::nullopt};
    const auto axes = normalize_axes(o, {attr_s64(o, "axis")},
            static_cast<int64_t>(in[0]->size()), "attr axis");
    return {reduced_dims(*in[0], axes, attr_bool(o, "keep_dims"))};
}

} // namespace

CREST_REGISTER_OP_SCHEMA(arg_max_schema,
        op_schema(op::kind::ArgMax)
                .input("src", float_types())
                .output("dst", {data_type::s64, data_type::s32})
                .attr("axis", attr_kind::s64, attribute_value(int64_t(0)))
                .attr("keep_dims", attr_kind::boolean, attribute_value(true))
                .attr("select_last_index", attr_kind::boolean, attribute_value(false))
                .set_check(check_arg_max)
                .set_infer(infer_arg_max));

// Wildcard: an op crest does not compute; End: marks a graph output.
CREST_REGISTER_OP_SCHEMA(wildcard_schema,
        op_schema(op::kind::Wildcard).any_inputs().any_outputs());
CREST_REGISTER_OP_SCHEMA(end_schema,
        op_schema(op::kind::End).any_inputs());

} // namespace crest::impl
