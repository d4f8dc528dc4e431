// Shape rules shared by the schemas and by compile.
#pragma once

#include <vector>

#include "src/op_schema.hpp"

namespace crest::impl {

// Dims after reducing `axes` (normalised) of src; empty axes: identity.
dims_t reduced_dims(const dims_t &src, const std::vector<int64_t> &axes,
        bool keep_dims);

// numpy broadcast of a and b (unknown dims allowed); with "none" the
// shapes must be equal. Throws naming the op and the two inputs.
dims_t broadcast_dims(const op::impl &o, const dims_t &a, const dims_t &b,
        const std::string &mode);

// ReduceMax axes from the attribute, normalised for rank; nullopt when the
// axes come from the input tensor.
std::optional<std::vector<int64_t>> reduce_attr_axes(
        const op::impl &o, int64_t rank);

} // namespace crest::impl
