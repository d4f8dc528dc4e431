// logical_tensor: id, data type, dims (unknown allowed), layout, property.
// Mirrors dnnl::graph::logical_tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace crest {

class logical_tensor {
public:
    using dim = int64_t;
    using dims = std::vector<dim>;

    static constexpr dim unknown_dim = -1;   // a dim not known yet
    static constexpr int32_t unknown_ndims = -1;

    enum class data_type {
        undef = 0,
        f16,
        bf16,
        f32,
        s32,
        s8,
        u8,
        boolean,
        s64,  // crest extension: ArgMax indices
        f64,  // crest extension: only so that it can be refused by name
    };

    enum class layout_type { undef = 0, any, strided };
    enum class property_type { undef = 0, variable, constant };

    logical_tensor() = default;
    // Rank known or unknown (unknown_ndims), dims unknown.
    logical_tensor(size_t id, data_type dtype, int32_t ndims,
                   layout_type ltype,
                   property_type ptype = property_type::undef);
    // Dims known; layout any or strided (strided gets dense row-major strides).
    logical_tensor(size_t id, data_type dtype, const dims &adims,
                   layout_type ltype,
                   property_type ptype = property_type::undef);
    // A braced list is dims: {2} is rank 1 of size 2. Without this
    // overload {2} chose the rank constructor above (rank 2, dims unknown),
    // as it does in oneDNN Graph's API.
    logical_tensor(size_t id, data_type dtype, std::initializer_list<dim> adims,
                   layout_type ltype,
                   property_type ptype = property_type::undef)
        : logical_tensor(id, dtype, dims(adims), ltype, ptype) {}
    // Dims and strides (in elements) known.
    logical_tensor(size_t id, data_type dtype, const dims &adims,
                   const dims &strides,
                   property_type ptype = property_type::undef);

    size_t get_id() const { return id_; }
    data_type get_data_type() const { return dtype_; }
    int32_t get_ndims() const { return ndims_; }
    const dims &get_dims() const { return dims_; }
    const dims &get_strides() const { return strides_; }
    layout_type get_layout_type() const { return layout_; }
    property_type get_property_type() const { return property_; }

    // True when rank and every dim are known.
    bool has_known_shape() const;
    // Number of elements; 0 for any zero dim; -1 when unknown.
    dim nelems() const;
    // Bytes spanned by a strided tensor (0 when empty); -1 when unknown.
    size_t get_mem_size() const;
    // Same id, dtype, dims, layout and strides.
    bool is_equal(const logical_tensor &other) const;

private:
    size_t id_ = 0;
    data_type dtype_ = data_type::undef;
    int32_t ndims_ = unknown_ndims;
    dims dims_;
    dims strides_;
    layout_type layout_ = layout_type::undef;
    property_type property_ = property_type::undef;
};

// Dense row-major strides for dims (unknown dims give unknown strides).
logical_tensor::dims dense_strides(const logical_tensor::dims &dims);
size_t data_type_size(logical_tensor::data_type dt);
const char *to_string(logical_tensor::data_type dt);
const char *to_string(logical_tensor::layout_type lt);
const char *to_string(logical_tensor::property_type pt);

} // namespace crest
