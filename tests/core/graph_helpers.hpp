// Small builders shared by the core suites.
#pragma once

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "crest/crest.hpp"

namespace crest_test {

using crest::logical_tensor;
using dt = logical_tensor::data_type;
using lt_layout = logical_tensor::layout_type;

inline logical_tensor dense(size_t id, const logical_tensor::dims &d, dt t = dt::f32) {
    return logical_tensor(id, t, d, lt_layout::strided);
}

inline logical_tensor unknown(size_t id, dt t = dt::f32) {
    return logical_tensor(id, t, logical_tensor::unknown_ndims, lt_layout::any);
}

inline crest::op reduce(size_t id, const logical_tensor &src, const logical_tensor &dst,
        std::vector<int64_t> axes, bool keep_dims = false, const std::string &name = "r") {
    crest::op o(id, crest::op::kind::ReduceMax, {src}, {dst}, name);
    o.set_attr(crest::op::attr::axes, axes);
    o.set_attr(crest::op::attr::keep_dims, keep_dims);
    return o;
}

// Runs f, expects crest::error with status st and a message holding every
// piece of `parts`.
template <typename F>
void expect_error(F &&f, crest::status st, const std::vector<std::string> &parts) {
    try {
        f();
        ADD_FAILURE() << "expected crest::error";
    } catch (const crest::error &e) {
        EXPECT_EQ(e.get_status(), st) << e.what();
        for (const auto &p : parts) EXPECT_THAT(e.what(), ::testing::HasSubstr(p));
    }
}

} // namespace crest_test
