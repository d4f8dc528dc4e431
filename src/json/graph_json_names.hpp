// The names of enum values in the JSON files, shared by reader and writer.
// Kept here rather than taken from the core's to_string() so that the file
// format does not change when a debug name does.
#pragma once

#include <string>

#include "crest/engine.hpp"
#include "crest/graph.hpp"
#include "crest/logical_tensor.hpp"

namespace crest {
namespace json {

template <typename E>
struct name_entry {
    const char *name;
    E value;
};

using dt = logical_tensor::data_type;
inline constexpr name_entry<dt> dtype_names[] = {
        {"f32", dt::f32}, {"bf16", dt::bf16}, {"f16", dt::f16},
        {"s32", dt::s32}, {"s8", dt::s8}, {"u8", dt::u8},
        {"boolean", dt::boolean}, {"s64", dt::s64}, {"f64", dt::f64},
        {"undef", dt::undef}};

inline constexpr name_entry<logical_tensor::layout_type> layout_names[] = {
        {"strided", logical_tensor::layout_type::strided},
        {"any", logical_tensor::layout_type::any},
        {"undef", logical_tensor::layout_type::undef}};

inline constexpr name_entry<logical_tensor::property_type> property_names[] = {
        {"undef", logical_tensor::property_type::undef},
        {"variable", logical_tensor::property_type::variable},
        {"constant", logical_tensor::property_type::constant}};

inline constexpr name_entry<engine::kind> engine_names[] = {
        {"cpu", engine::kind::cpu}, {"gpu", engine::kind::gpu},
        {"any", engine::kind::any}};

inline constexpr name_entry<fpmath_mode> fpmath_names[] = {
        {"strict", fpmath_mode::strict}, {"bf16", fpmath_mode::bf16},
        {"f16", fpmath_mode::f16}, {"tf32", fpmath_mode::tf32},
        {"any", fpmath_mode::any}};

// "\"a\", \"b\", \"c\"" for error messages.
template <typename E, size_t N>
std::string names_list(const name_entry<E> (&table)[N]) {
    std::string out;
    for (size_t i = 0; i < N; ++i)
        out += (i ? ", \"" : "\"") + std::string(table[i].name) + "\"";
    return out;
}

// The file name of a value; nullptr when the table has none.
template <typename E, size_t N>
const char *name_of(const name_entry<E> (&table)[N], E value) {
    for (const auto &e : table)
        if (e.value == value) return e.name;
    return nullptr;
}

} // namespace json
} // namespace crest
