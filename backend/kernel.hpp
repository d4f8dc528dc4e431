// The contract between the partition layer and the backends (ref, jit, dnnl).
// A backend turns a problem description into a kernel; a kernel runs it on
// raw buffers. Problems are plain structs so that they can key caches.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "crest/logical_tensor.hpp"

namespace crest::impl {

using data_type = logical_tensor::data_type;
using dims_t = std::vector<int64_t>;

class thread_pool;

// ReduceMax over any strides. Rank 0..12. dst is described with src's rank:
// a reduced dim has dst stride 0 (the keep_dims view of dst), so keep_dims
// only changes how the caller labels dst, never the kernel.
// Empty reduce_mask = identity (copy). A reduced dim of size 0 yields -inf;
// a kept dim of size 0 means there is nothing to write.
// Strides are in elements, may be any non-negative values (permuted, padded).
// src and dst have the same data type (f32, bf16 or f16).
struct reduce_problem {
    data_type dt = data_type::f32;
    dims_t dims;         // src dims
    dims_t src_strides;  // elements
    dims_t dst_strides;  // elements; 0 where reduce_mask has the dim
    uint32_t reduce_mask = 0;  // bit i set: dim i is reduced

    int ndims() const { return static_cast<int>(dims.size()); }
    bool is_reduced(int d) const { return (reduce_mask >> d) & 1u; }
    bool operator==(const reduce_problem &o) const {
        return dt == o.dt && dims == o.dims && src_strides == o.src_strides
                && dst_strides == o.dst_strides
                && reduce_mask == o.reduce_mask;
    }
};

// A compiled kernel. execute() must not allocate, must not throw for inputs
// that match the problem it was made for, and is safe to call from several
// threads at once with different buffers.
class kernel {
public:
    virtual ~kernel() = default;
    // inputs[i] / outputs[i] are the data handles in the order of the op's
    // inputs and outputs (for ReduceMax: inputs[0] = src, outputs[0] = dst).
    virtual void execute(const void *const *inputs,
            void *const *outputs) const = 0;
    // "ref:reduce_max", "jit:avx512_core:reduce_vertical", "dnnl:jit:uni" ...
    virtual std::string name() const = 0;
};

using kernel_ptr = std::shared_ptr<const kernel>;

} // namespace crest::impl
