// Turning a validated op plus compiled logical tensors into a backend
// problem. Used by compile, and by benchgraph to call backends directly.
#pragma once

#include <vector>

#include "backend/kernel.hpp"
#include "crest/logical_tensor.hpp"

namespace crest::impl {

// src, dst: strided logical tensors with known dims; axes: normalised
// (non-negative, unique) reduced axes of src; keep_dims as the op says.
reduce_problem make_reduce_problem(const logical_tensor &src,
        const logical_tensor &dst, const std::vector<int64_t> &axes,
        bool keep_dims);

} // namespace crest::impl
