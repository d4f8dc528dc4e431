#include "crest/logical_tensor.hpp"

#include "crest/error.hpp"

namespace crest {

logical_tensor::logical_tensor(size_t id, data_type dtype, int32_t ndims,
        layout_type ltype, property_type ptype)
    : id_(id), dtype_(dtype), ndims_(ndims), layout_(ltype), property_(ptype) {
    if (ndims > 0) dims_.assign(ndims, unknown_dim);
}

logical_tensor::logical_tensor(size_t id, data_type dtype, const dims &adims,
        layout_type ltype, property_type ptype)
    : id_(id), dtype_(dtype), ndims_(static_cast<int32_t>(adims.size())),
      dims_(adims), layout_(ltype), property_(ptype) {
    if (ltype == layout_type::strided) strides_ = dense_strides(adims);
}

logical_tensor::logical_tensor(size_t id, data_type dtype, const dims &adims,
        const dims &strides, property_type ptype)
    : id_(id), dtype_(dtype), ndims_(static_cast<int32_t>(adims.size())),
      dims_(adims), strides_(strides), layout_(layout_type::strided),
      property_(ptype) {}

bool logical_tensor::has_known_shape() const {
    if (ndims_ < 0) return false;
    for (dim d : dims_)
        if (d < 0) return false;
    return true;
}

logical_tensor::dim logical_tensor::nelems() const {
    if (!has_known_shape()) return -1;
    dim n = 1;
    for (dim d : dims_) n *= d;  // finalize refuses products that overflow
    return n;
}

size_t logical_tensor::get_mem_size() const {
    if (!has_known_shape()) return static_cast<size_t>(-1);
    if (nelems() == 0) return 0;
    if (layout_ != layout_type::strided || strides_.size() != dims_.size())
        return static_cast<size_t>(nelems()) * data_type_size(dtype_);
    // Span of the furthest element plus one.
    dim last = 0;
    for (size_t i = 0; i < dims_.size(); ++i) last += (dims_[i] - 1) * strides_[i];
    return static_cast<size_t>(last + 1) * data_type_size(dtype_);
}

bool logical_tensor::is_equal(const logical_tensor &o) const {
    return id_ == o.id_ && dtype_ == o.dtype_ && ndims_ == o.ndims_
            && dims_ == o.dims_ && layout_ == o.layout_
            && (layout_ != layout_type::strided || strides_ == o.strides_);
}

logical_tensor::dims dense_strides(const logical_tensor::dims &dims) {
    logical_tensor::dims s(dims.size());
    logical_tensor::dim acc = 1;
    for (size_t i = dims.size(); i-- > 0;) {
        s[i] = acc < 0 ? logical_tensor::unknown_dim : acc;
        const auto d = dims[i];
        // Unknown dims, or a product past 63 bits, leave the outer strides
        // unknown; add_op then refuses the dims with a clear message.
        if (d < 0 || acc < 0 || __builtin_mul_overflow(acc, d > 0 ? d : 1, &acc))
            acc = -1;  // zero dims keep later strides meaningful (d > 0 ? d : 1)
    }
    return s;
}

size_t data_type_size(logical_tensor::data_type dt) {
    using dt_t = logical_tensor::data_type;
    switch (dt) {
        case dt_t::f32:
        case dt_t::s32: return 4;
        case dt_t::f16:
        case dt_t::bf16: return 2;
        case dt_t::s8:
        case dt_t::u8:
        case dt_t::boolean: return 1;
        case dt_t::s64:
        case dt_t::f64: return 8;
        case dt_t::undef: return 0;
    }
    return 0;
}

const char *to_string(logical_tensor::data_type dt) {
    using dt_t = logical_tensor::data_type;
    switch (dt) {
        case dt_t::undef: return "undef";
        case dt_t::f16: return "f16";
        case dt_t::bf16: return "bf16";
        case dt_t::f32: return "f32";
        case dt_t::s32: return "s32";
        case dt_t::s8: return "s8";
        case dt_t::u8: return "u8";
        case dt_t::boolean: return "boolean";
        case dt_t::s64: return "s64";
        case dt_t::f64: return "f64";
    }
    return "?";
}

const char *to_string(logical_tensor::layout_type lt) {
    switch (lt) {
        case logical_tensor::layout_type::undef: return "undef";
        case logical_tensor::layout_type::any: return "any";
        case logical_tensor::layout_type::strided: return "strided";
    }
    return "?";
}

const char *to_string(logical_tensor::property_type pt) {
    switch (pt) {
        case logical_tensor::property_type::undef: return "undef";
        case logical_tensor::property_type::variable: return "variable";
        case logical_tensor::property_type::constant: return "constant";
    }
    return "?";
}

const char *to_string(status s) {
    switch (s) {
        case status::success: return "success";
        case status::out_of_memory: return "out_of_memory";
        case status::invalid_arguments: return "invalid_arguments";
        case status::unimplemented: return "unimplemented";
        case status::invalid_graph: return "invalid_graph";
        case status::invalid_graph_op: return "invalid_graph_op";
        case status::invalid_shape: return "invalid_shape";
        case status::invalid_data_type: return "invalid_data_type";
        case status::runtime_error: return "runtime_error";
    }
    return "?";
}

} // namespace crest
