// benchgraph's own helpers: conversions, filling, comparison, option words
// and rewrites. The driver is the judge of every backend, so it gets tests.
#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "crest/error.hpp"
#include "tools/benchgraph/data.hpp"
#include "tools/benchgraph/options.hpp"
#include "tools/benchgraph/rewrite.hpp"

using namespace benchgraph;
using crest::logical_tensor;
using dt = logical_tensor::data_type;

namespace {
float bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
} // namespace

TEST(DriverData, Bf16RoundsToNearestEven) {
    EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
    EXPECT_EQ(f32_to_bf16(bits(0x3f808000u)), 0x3f80);  // tie, even stays
    EXPECT_EQ(f32_to_bf16(bits(0x3f818000u)), 0x3f82);  // tie, odd rounds up
    EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(bits(0x7f800001u)))));
    EXPECT_EQ(bf16_to_f32(f32_to_bf16(-INFINITY)), -INFINITY);
}

TEST(DriverData, F16RoundTripAndLimits) {
    for (float x : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f,
                 5.9604644775390625e-08f, 1.75f * 16384.0f})
        EXPECT_EQ(f16_to_f32(f32_to_f16(x)), x) << x;
    EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // rounds to inf
    EXPECT_EQ(f32_to_f16(1.0f + 1.0f / 2048), 0x3c00);  // tie to even
    EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(NAN))));
    EXPECT_TRUE(std::signbit(f16_to_f32(f32_to_f16(-0.0f))));
}

TEST(DriverData, FillHasTiesNegativesInfAndNanOnRequest) {
    logical_tensor lt(
            0, dt::f32, logical_tensor::dims{100000}, logical_tensor::layout_type::strided);
    buffer b(span_bytes(lt));
    fill_float(lt, b.data(), 1, true);
    const float *p = static_cast<const float *>(b.data());
    int nan = 0, pinf = 0, ninf = 0, neg = 0, ones = 0;
    for (int i = 0; i < 100000; ++i) {
        nan += std::isnan(p[i]);
        pinf += p[i] == INFINITY;
        ninf += p[i] == -INFINITY;
        neg += p[i] < 0;
        ones += p[i] == 1.0f;
    }
    EXPECT_GT(nan, 0);
    EXPECT_GT(pinf, 0);
    EXPECT_GT(ninf, 0);
    EXPECT_GT(neg, 10000);
    EXPECT_GT(ones, 1000);  // ties are frequent
    fill_float(lt, b.data(), 1, false);
    for (int i = 0; i < 100000; ++i) ASSERT_FALSE(std::isnan(p[i]));
}

TEST(DriverData, NegativeFillHasOnlyNegatives) {
    logical_tensor lt(
            0, dt::bf16, logical_tensor::dims{100000}, logical_tensor::layout_type::strided);
    buffer b(span_bytes(lt));
    fill_float(lt, b.data(), 1, true, true);
    const auto *p = static_cast<const uint16_t *>(b.data());
    int nan = 0, ninf = 0;
    for (int i = 0; i < 100000; ++i) {
        ASSERT_TRUE(p[i] & 0x8000u) << i;  // the sign bit, NaNs and zeros too
        nan += std::isnan(bf16_to_f32(p[i]));
        ninf += bf16_to_f32(p[i]) == -INFINITY;
    }
    EXPECT_GT(nan, 0);
    EXPECT_GT(ninf, 0);
}

TEST(DriverData, CompareIsBitExactWithNanAndSignedZero) {
    logical_tensor lt(0, dt::f32, logical_tensor::dims {4}, logical_tensor::layout_type::strided);
    float ref[4] = {NAN, 0.0f, 1.0f, -INFINITY};
    float got[4] = {bits(0xffc00001u), -0.0f, 1.0f, -INFINITY};
    EXPECT_EQ(compare(lt, got, ref, {}).errors, 0);
    got[2] = std::nextafter(1.0f, 2.0f);
    EXPECT_EQ(compare(lt, got, ref, {}).errors, 1);
    compare_rule tol;
    tol.rel_tol = 1e-6;
    EXPECT_EQ(compare(lt, got, ref, tol).errors, 0);
    got[0] = 3.0f;  // NaN lost: an error only when NaNs are compared
    EXPECT_EQ(compare(lt, got, ref, tol).errors, 1);
    tol.compare_nan = false;
    EXPECT_EQ(compare(lt, got, ref, tol).errors, 0);
    ref[1] = 5.0f;
    got[1] = NAN;  // a NaN out of nowhere is always an error
    EXPECT_EQ(compare(lt, got, ref, tol).errors, 1);
}

TEST(DriverData, CompareWalksStridesOnly) {
    // 2x2 with a padded row: padding differs, elements equal.
    logical_tensor lt(0, dt::f32, {2, 2}, {3, 1});
    float a[6] = {1, 2, 99, 3, 4, 98};
    float b[6] = {1, 2, -1, 3, 4, -2};
    auto r = compare(lt, a, b, {});
    EXPECT_EQ(r.errors, 0);
    EXPECT_EQ(r.total, 4);
    EXPECT_EQ(span_bytes(lt), 5 * sizeof(float));
}

TEST(DriverOptions, ParseAndRepro) {
    settings s;
    globals g;
    EXPECT_TRUE(parse_option("--dt=bf16", s, g));
    EXPECT_TRUE(parse_option("--nan", s, g));
    EXPECT_TRUE(parse_option("--negative", s, g));
    EXPECT_TRUE(parse_option("-v2", s, g));
    EXPECT_FALSE(parse_option("--case=x.json", s, g));
    EXPECT_THROW(parse_option("--mode=X", s, g), usage_error);
    EXPECT_THROW(parse_option("--dt=f64", s, g), usage_error);
    EXPECT_EQ(g.verbose, 2);
    EXPECT_EQ(repro(s, "r.json"), "--mode=C --graph --dt=bf16 --nan --negative --case=r.json");
    EXPECT_TRUE(parse_option("--reset", s, g));
    EXPECT_EQ(repro(s, "r.json"), "--mode=C --graph --case=r.json");
    EXPECT_EQ(parse_int_list("1x-2x3", "t"), (std::vector<int64_t> {1, -2, 3}));
    EXPECT_TRUE(parse_int_list("", "t").empty());
}

TEST(DriverRewrite, InShapesTagAndOpAttrs) {
    auto rec = crest::json::read_graph_file(
            std::string(CREST_INPUTS_DIR) + "/reducemax.json");
    settings s;
    s.in_shapes = "0:2x3x4x5*acdb";
    s.op_attrs = "0:axes:-1x0*keep_dims:0";
    s.dt = "f16";
    apply_rewrites(rec, s);
    const auto &in = rec.ops[0].get_inputs()[0];
    EXPECT_EQ(in.get_dims(), (logical_tensor::dims {2, 3, 4, 5}));
    EXPECT_EQ(in.get_strides(), (logical_tensor::dims {60, 1, 15, 3}));
    EXPECT_EQ(in.get_data_type(), dt::f16);
    EXPECT_EQ(rec.ops[0].get_outputs()[0].get_ndims(), logical_tensor::unknown_ndims);
    const auto &attrs = rec.ops[0].get_attrs();
    EXPECT_EQ(std::get<std::vector<int64_t>>(attrs.at("axes")),
            (std::vector<int64_t> {-1, 0}));
    EXPECT_FALSE(std::get<bool>(attrs.at("keep_dims")));
    settings bad;
    bad.in_shapes = "1:2x3";  // an output, not an input
    EXPECT_THROW(apply_rewrites(rec, bad), crest::error);
}
