// The reference backend's own bf16 / f16 conversions, checked exhaustively
// against the tests' arithmetic decoder: every 16-bit pattern widens to the
// right value, narrows back to itself, and midpoints round to even.
#include <cmath>

#include <gtest/gtest.h>

#include "backend/ref/ref_half.hpp"
#include "tests/ref/ref_test_util.hpp"

namespace crest::ref_test {
namespace {

using namespace impl::ref;

float widen(data_type dt, uint16_t h) {
    return dt == data_type::f16 ? f16_to_f32(h) : bf16_to_f32(h);
}

uint16_t narrow(data_type dt, float f) {
    return dt == data_type::f16 ? f32_to_f16(f) : f32_to_bf16(f);
}

class HalfConvert : public ::testing::TestWithParam<data_type> {};

TEST_P(HalfConvert, EveryPatternWidensExactlyAndRoundTrips) {
    const data_type dt = GetParam();
    int mismatches = 0;
    for (uint32_t b = 0; b < 0x10000u && mismatches < 5; ++b) {
        const uint16_t h = uint16_t(b);
        const double want = decode(dt, h);
        const float got = widen(dt, h);
        if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(got)) << std::hex << b;
            // NaN narrows to a NaN of the same sign, quiet.
            const uint16_t back = narrow(dt, got);
            EXPECT_TRUE(std::isnan(decode(dt, back))) << std::hex << b;
            EXPECT_EQ(back & 0x8000u, h & 0x8000u) << std::hex << b;
            EXPECT_NE(back & quiet_bit(dt), 0u) << std::hex << b;
            continue;
        }
        const bool ok = double(got) == want
                && std::signbit(got) == std::signbit(want)
                && narrow(dt, got) == h;
        EXPECT_TRUE(ok) << std::hex << "0x" << b << " widened to " << got
                        << " expected " << want << ", narrowed back to 0x"
                        << narrow(dt, got);
        mismatches += !ok;
    }
}

TEST_P(HalfConvert, MidpointsRoundToEven) {
    const data_type dt = GetParam();
    const uint16_t inf = dt == data_type::f16 ? 0x7C00 : 0x7F80;
    int mismatches = 0;
    for (uint32_t b = 0; b + 1 < inf && mismatches < 5; ++b) {
        for (uint32_t sign : {0u, 0x8000u}) {
            const uint16_t lo = uint16_t(b | sign), hi = uint16_t((b + 1) | sign);
            // The midpoint of two neighbours needs one more bit: exact in f32.
            const double mid = (decode(dt, lo) + decode(dt, hi)) / 2;
            const float fmid = float(mid);
            ASSERT_EQ(double(fmid), mid);
            const uint16_t even = (b & 1u) ? hi : lo;
            const float above = std::nextafter(fmid, float(decode(dt, hi)));
            const float below = std::nextafter(fmid, float(decode(dt, lo)));
            const bool ok = narrow(dt, fmid) == even
                    && narrow(dt, above) == hi && narrow(dt, below) == lo;
            EXPECT_TRUE(ok) << std::hex << "between 0x" << lo << " and 0x"
                            << hi << ": mid->0x" << narrow(dt, fmid)
                            << " above->0x" << narrow(dt, above)
                            << " below->0x" << narrow(dt, below);
            mismatches += !ok;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Ref, HalfConvert,
        ::testing::Values(data_type::f16, data_type::bf16),
        [](const auto &info) { return std::string(dt_name(info.param)); });

TEST(HalfConvertEdges, OverflowAndTinyValues) {
    EXPECT_EQ(f32_to_f16(65504.f), 0x7BFF);
    EXPECT_EQ(f32_to_f16(65519.f), 0x7BFF);
    EXPECT_EQ(f32_to_f16(65520.f), 0x7C00); // halfway to 2^16 rounds to inf
    EXPECT_EQ(f32_to_f16(-1e10f), 0xFC00);
    EXPECT_EQ(f32_to_f16(std::ldexp(1.f, -25)), 0x0000); // tie to even: 0
    EXPECT_EQ(f32_to_f16(std::ldexp(1.5f, -25)), 0x0001);
    EXPECT_EQ(f32_to_f16(-std::ldexp(1.f, -30)), 0x8000);
    EXPECT_EQ(f32_to_f16(std::ldexp(1.f, -14) - std::ldexp(1.f, -26)),
            0x0400); // rounds up out of the subnormals
    EXPECT_EQ(f32_to_bf16(3.4e38f), 0x7F80); // above bf16's largest finite
    EXPECT_EQ(f32_to_bf16(std::ldexp(1.f, -149)), 0x0000);
    EXPECT_EQ(f32_to_bf16(INFINITY), 0x7F80);
    EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.f, -24));
    EXPECT_EQ(f16_to_f32(0x83FF), -std::ldexp(1023.f, -24));
}

} // namespace
} // namespace crest::ref_test
