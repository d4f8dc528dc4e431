// Helpers of the tests that call generated kernels directly
// (jit_blocks_test.cpp, jit_columns_test.cpp): expected values computed
// from the bits (max by value, NaN wins), not by the ref backend, and the
// caller's MXCSR around a call.
#pragma once

#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include <immintrin.h>

#include "jit_test_util.hpp"

namespace crest::impl::jit::test {

inline float value_of(uint32_t b, data_type dt) {
    if (dt == data_type::f32) { float f; std::memcpy(&f, &b, 4); return f; }
    if (dt == data_type::bf16) {
        const uint32_t u = b << 16;
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
    // f16 (no NaN here: callers test is_nan first)
    const int e = (b >> 10) & 0x1f, m = b & 0x3ff;
    const float mag = e == 0 ? std::ldexp(float(m), -24)
            : e == 31 ? INFINITY : std::ldexp(float(m | 0x400), e - 25);
    return (b & 0x8000) ? -mag : mag;
}

inline uint32_t negative_nan(data_type dt) {
    return dt == data_type::f32 ? 0xffc00123u : dt == data_type::bf16 ? 0xffc1u : 0xfe01u;
}

// The max of dst (when accumulate) and the n elements at src[i * step],
// by value; the quiet NaN if any of them is NaN.
inline uint32_t expected(const uint8_t *src, int64_t n, int64_t step, const uint8_t *dst,
        bool accumulate, data_type dt) {
    bool nan = accumulate && is_nan(get(dst, 0, dt), dt);
    uint32_t best = accumulate ? get(dst, 0, dt) : inf_bits(dt, true);
    for (int64_t i = 0; i < n && !nan; ++i) {
        const uint32_t b = get(src, i * step, dt);
        if (is_nan(b, dt)) nan = true;
        else if (value_of(b, dt) > value_of(best, dt)) best = b;
    }
    return nan ? qnan_bits(dt) : best;
}

// The same over `rows` rows of n elements, row_stride bytes apart (an
// outer reduced dim), the first joining dst where accumulate.
inline uint32_t expected_rows(const uint8_t *src, int64_t n, int rows, int64_t row_stride,
        const uint8_t *dst, bool accumulate, data_type dt) {
    uint8_t so_far[4];
    std::memcpy(so_far, dst, esize(dt));
    uint32_t want = 0;
    for (int r = 0; r < rows; ++r) {
        want = expected(src + r * row_stride, n, 1, so_far, accumulate || r > 0, dt);
        put(so_far, 0, dt, want);
    }
    return want;
}

// got == want, NaN == NaN, +0 == -0.
inline void expect_same(uint32_t got, uint32_t want, data_type dt, int64_t at) {
    const bool same = got == want || (is_nan(got, dt) && is_nan(want, dt))
            || (is_zero(got, dt) && is_zero(want, dt));
    EXPECT_TRUE(same) << "output " << at << ": got 0x" << std::hex << got << ", want 0x"
                      << want;
}

// Whether the machine runs AVX-512 (tests of AVX-512-only paths skip
// without it).
inline bool avx512_runs() {
    for (const char *isa : runnable_isas())
        if (std::string(isa) == "avx512_core") return true;
    return false;
}

// Names of tests parametrized by a dtype alone.
inline std::string dt_name(const ::testing::TestParamInfo<data_type> &i) {
    return i.param == data_type::f32 ? "f32" : i.param == data_type::bf16 ? "bf16" : "f16";
}

using isa_dt_param = std::tuple<const char *, data_type>;
inline std::string isa_dt_name(const ::testing::TestParamInfo<isa_dt_param> &i) {
    const data_type d = std::get<1>(i.param);
    return std::string(std::get<0>(i.param)) + "_"
            + (d == data_type::f32 ? "f32" : d == data_type::bf16 ? "bf16" : "f16");
}
inline isa_t isa_named(const char *name) {
    return std::string(name) == "avx512_core" ? isa_t::avx512_core : isa_t::avx2;
}

// Every ISA the machine runs, by every dtype: the fixtures' parameters.
inline auto every_isa_and_dtype() {
    return ::testing::Combine(::testing::ValuesIn(runnable_isas()),
            ::testing::Values(data_type::f32, data_type::bf16, data_type::f16));
}

// The fixtures' base: the ISA and the dtype of the test's parameter.
class isa_dt_test : public ::testing::TestWithParam<isa_dt_param> {
protected:
    isa_t isa() const { return isa_named(std::get<0>(GetParam())); }
    data_type dt() const { return std::get<1>(GetParam()); }
};

// MXCSR values a caller may hold: flags clear, some flags set, the
// invalid exception unmasked (a NaN would trap if the kernel let it).
inline std::vector<uint32_t> callers_mxcsr() {
    constexpr uint32_t invalid_flag = 0x01, precision_flag = 0x20, invalid_mask = 0x80;
    const uint32_t clear = _mm_getcsr() & ~0x3fu;
    return {clear, clear | invalid_flag | precision_flag, clear & ~invalid_mask};
}

// Calls f with MXCSR = caller (0: as it is), expecting it unchanged after.
template <typename F>
void call_with_mxcsr(uint32_t caller, const F &f) {
    if (!caller) return f();
    const uint32_t own = _mm_getcsr();
    _mm_setcsr(caller);
    f();
    const uint32_t after = _mm_getcsr();
    _mm_setcsr(own);
    EXPECT_EQ(after, caller);
}

} // namespace crest::impl::jit::test
