// Op schemas: one declarative entry per op kind (inputs, outputs, attributes
// with defaults, type constraints, shape inference, extra checks). An entry
// registers itself with CREST_REGISTER_OP_SCHEMA in the op's own file.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "crest/error.hpp"
#include "crest/op.hpp"
#include "src/op_impl.hpp"

namespace crest::impl {

using data_type = logical_tensor::data_type;
using dims_t = std::vector<int64_t>;

enum class attr_kind { s64, s64_list, f32, f32_list, boolean, string };

struct attr_spec {
    std::string name;
    attr_kind kind;
    std::optional<attribute_value> default_value;  // none: optional, no default
    bool required = false;
};

struct port_spec {
    std::string name;
    std::vector<data_type> types;  // allowed data types
    bool optional = false;
};

// Output dims from input dims (entries of in_dims may be empty when the
// input's rank is unknown: inference then returns nullopt for that output).
using infer_fn = std::function<std::vector<std::optional<dims_t>>(
        const op::impl &o, const std::vector<std::optional<dims_t>> &in_dims)>;
// Checks beyond arity and types, at add_op; throws crest::error.
using check_fn = std::function<void(const op::impl &o)>;

struct op_schema {
    op::kind kind = op::kind::Unknown;
    std::vector<port_spec> inputs;
    std::vector<port_spec> outputs;
    bool variadic_outputs = false;  // Wildcard
    bool variadic_inputs = false;
    // Output i has the data type of input same_type_as[i] (-1: free).
    std::vector<int> output_type_from;
    std::vector<attr_spec> attrs;
    infer_fn infer;
    check_fn check;

    // Builder: op_schema(kind).input(...).output(...).attr(...).infer(...)
    explicit op_schema(op::kind k) : kind(k) {}
    op_schema &input(const std::string &n, std::vector<data_type> t,
            bool is_optional = false);
    op_schema &output(const std::string &n, std::vector<data_type> t,
            int type_from_input = -1);
    // An attribute that may be left out: without a value, or with def.
    // (def is taken by value and wrapped in the .cpp: GCC 12 with ASan saw
    // the variant-to-optional conversion inlined into the registrations'
    // static initialisers as reading uninitialised members.)
    op_schema &attr(const std::string &n, attr_kind k);
    op_schema &attr(const std::string &n, attr_kind k, attribute_value def);
    op_schema &required_attr(const std::string &n, attr_kind k);
    op_schema &any_inputs() { variadic_inputs = true; return *this; }
    op_schema &any_outputs() { variadic_outputs = true; return *this; }
    op_schema &set_infer(infer_fn f) { infer = std::move(f); return *this; }
    op_schema &set_check(check_fn f) { check = std::move(f); return *this; }
};

bool register_op_schema(op_schema s);
// nullptr for kinds without a schema (op::kind::Unknown).
const op_schema *find_op_schema(op::kind k);

#define CREST_REGISTER_OP_SCHEMA(var, expr) \
    static const bool var = ::crest::impl::register_op_schema(expr)

// Validates o against its schema (arity, data types, attribute types,
// required attributes, dims) and fills attribute defaults. Throws
// crest::error naming the op.
void validate_op(op::impl &o);

// Empty when t's rank, dims and strides are sane (known dims >= 0, element
// count and byte span within 63 bits, strides >= 0); else what is wrong,
// e.g. "has dims [2,-3]: dim 1 = -3 is negative; ...". Used at add_op and
// at compile, so both give the same answer.
std::string tensor_shape_problem(const logical_tensor &t);

// Attribute access after validate_op (defaults filled in).
const attribute_value *find_attr(const op::impl &o, const std::string &n);
int64_t attr_s64(const op::impl &o, const std::string &n);
bool attr_bool(const op::impl &o, const std::string &n);
float attr_f32(const op::impl &o, const std::string &n);
const std::string &attr_string(const op::impl &o, const std::string &n);
const std::vector<int64_t> &attr_s64_list(const op::impl &o, const std::string &n);

// Data type groups used by the schemas.
const std::vector<data_type> &float_types();

// Throws crest::error(st, label + ": " + what).
[[noreturn]] void fail(status st, const op::impl &o, const std::string &what);

// Normalises axes for rank r: negatives count from the end; each must be in
// [-r, r-1] and unique. `what` names the source ("attr axes", "input axes").
std::vector<int64_t> normalize_axes(const op::impl &o,
        const std::vector<int64_t> &axes, int64_t rank, const std::string &what);

} // namespace crest::impl
