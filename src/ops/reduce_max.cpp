// ReduceMax (ops.md): attr axes or an s32 axes input, keep_dims (default
// false), empty axes = identity, -inf for empty reductions, NaN propagates.
#include "src/ops/shape_rules.hpp"

namespace crest::impl {

dims_t reduced_dims(const dims_t &src, const std::vector<int64_t> &axes,
        bool keep_dims) {
    if (axes.empty()) return src;
    dims_t out;
    for (int64_t d = 0; d < static_cast<int64_t>(src.size()); ++d) {
        bool reduced = false;
        for (auto a : axes) reduced = reduced || a == d;
        if (!reduced) out.push_back(src[d]);
        else if (keep_dims) out.push_back(1);
    }
    return out;
}

std::optional<std::vector<int64_t>> reduce_attr_axes(
        const op::impl &o, int64_t rank) {
    const attribute_value *a = find_attr(o, "axes");
    if (!a) return std::nullopt;
    return normalize_axes(o, std::get<std::vector<int64_t>>(*a), rank, "attr axes");
}

namespace {

void check_reduce(const op::impl &o) {
    const bool has_attr = find_attr(o, "axes") != nullptr;
    const bool has_input = o.inputs.size() > 1;
    if (has_attr && has_input)
        fail(status::invalid_arguments, o,
                "axes given both as attr axes and as input 'axes' (id "
                        + std::to_string(o.inputs[1].get_id())
                        + "); expected exactly one of them");
    if (!has_attr && !has_input)
        fail(status::invalid_arguments, o,
                "no axes: expected attr axes or an s32 input 'axes'");
    if (has_input) {
        const auto &ax = o.inputs[1];
        if (ax.get_ndims() >= 0 && ax.get_ndims() != 1)
            fail(status::invalid_shape, o,
                    "input 'axes' (id " + std::to_string(ax.get_id())
                            + ") has rank " + std::to_string(ax.get_ndims())
                            + "; expected a 1-D s32 tensor");
    }
    const auto rank = o.inputs[0].get_ndims();
    if (has_attr && rank >= 0) reduce_attr_axes(o, rank);
}

std::vector<std::optional<dims_t>> infer_reduce(
        const op::impl &o, const std::vector<std::optional<dims_t>> &in) {
    if (!in[0]) return {std::nullopt};
    const auto axes = reduce_attr_axes(o, static_cast<int64_t>(in[0]->size()));
    if (!axes) return {std::nullopt};  // axes known only at execution
    return {reduced_dims(*in[0], *axes, attr_bool(o, "keep_dims"))};
}

} // namespace

CREST_REGISTER_OP_SCHEMA(reduce_max_schema,
        op_schema(op::kind::ReduceMax)
                .input("src", float_types())
                .input("axes", {data_type::s32}, /*optional=*/true)
                .output("dst", float_types(), /*type_from_input=*/0)
                .attr("axes", attr_kind::s64_list)
                .attr("keep_dims", attr_kind::boolean, attribute_value(false))
                .set_check(check_reduce)
                .set_infer(infer_reduce));

} // namespace crest::impl
