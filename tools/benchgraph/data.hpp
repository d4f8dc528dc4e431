// Memory for tensors, input filling and output comparison.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "crest/logical_tensor.hpp"

namespace benchgraph {

// 64-byte aligned memory; 2 MiB aligned with MADV_HUGEPAGE when large.
// Every page is written once at allocation (first touch is slow on a VM and
// must not land inside a timed region).
class buffer {
public:
    explicit buffer(size_t bytes, unsigned char fill_byte = 0);
    ~buffer();
    buffer(const buffer &) = delete;
    buffer &operator=(const buffer &) = delete;
    void *data() const { return data_; }
    size_t size() const { return size_; }

private:
    void *data_ = nullptr;
    size_t size_ = 0;
};
using buffer_ptr = std::shared_ptr<buffer>;

// Bytes the tensor spans (at least 1 so that handles are never null).
size_t span_bytes(const crest::logical_tensor &lt);

// Fills every element of the span (padding included) of a float tensor with
// values from a small set (many ties), negatives, zeros of both signs, +-inf
// and, when with_nan, some NaNs. bf16 / f16 are drawn in f32 and rounded.
// negative: every value -|x| (NaNs too), as log-probabilities are.
void fill_float(const crest::logical_tensor &lt, void *data, uint64_t seed,
        bool with_nan, bool negative = false);
// s32 / s64 / other integer tensors: the given values in logical order
// when there are as many as elements, small random integers otherwise.
void fill_int(const crest::logical_tensor &lt, void *data,
        const std::vector<int64_t> *values, uint64_t seed);

// Relative tolerance per element; 0 = bit-exact (NaN == NaN, -0 == +0).
struct compare_rule {
    double rel_tol = 0;
    bool compare_nan = true;  // false: skip elements the reference has NaN
};

struct compare_result {
    int64_t errors = 0;
    int64_t total = 0;
    std::vector<std::string> samples;  // first mismatches, for -v1
};

// Compares the logical elements of got and ref, both laid out as lt.
compare_result compare(const crest::logical_tensor &lt, const void *got,
        const void *ref, const compare_rule &rule);

float bf16_to_f32(uint16_t v);
float f16_to_f32(uint16_t v);
uint16_t f32_to_bf16(float f);
uint16_t f32_to_f16(float f);

std::string dims_str(const std::vector<int64_t> &d);
// "f32:1x128x150x150:s2880000x22500x150x1" (or ":any")
std::string lt_str(const crest::logical_tensor &lt);

} // namespace benchgraph
