// Scalar helpers for the C++ parts of the JIT backend (combine of partial
// results, fill, the strided fallback). Conversions are exact for values that
// came from the narrow type, which is all a max ever produces.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "backend/jit/jit_config.hpp"

namespace crest::impl::jit::scalar {

inline float from_bits(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint32_t to_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

inline float half_to_float(uint16_t h) {
    const uint32_t sign = uint32_t(h >> 15) << 31;
    const uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0) {
        const float v = std::ldexp(static_cast<float>(man), -24);
        return sign ? -v : v;
    }
    if (exp == 31) return from_bits(sign | 0x7f800000u | (man << 13));
    return from_bits(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

inline uint16_t float_to_half(float f) {
    const uint32_t u = to_bits(f);
    const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
    const uint32_t exp = (u >> 23) & 0xff, man = u & 0x7fffff;
    if (exp == 0xff) {  // inf or NaN (a NaN keeps a non-zero, quiet payload)
        return man ? uint16_t(sign | 0x7e00 | (man >> 13)) : uint16_t(sign | 0x7c00);
    }
    const int e = static_cast<int>(exp) - 127;
    if (e >= -14) return uint16_t(sign | ((e + 15) << 10) | (man >> 13));
    // f16 subnormal (or zero): an exact multiple of 2^-24.
    return uint16_t(sign | static_cast<uint16_t>(std::fabs(f) * 16777216.0f));
}

inline float load(const void *p, data_type dt) {
    if (dt == data_type::f32) { float f; std::memcpy(&f, p, 4); return f; }
    uint16_t h;
    std::memcpy(&h, p, 2);
    return dt == data_type::bf16 ? from_bits(uint32_t(h) << 16) : half_to_float(h);
}

inline void store(void *p, float f, data_type dt) {
    if (dt == data_type::f32) { std::memcpy(p, &f, 4); return; }
    const uint16_t h = dt == data_type::bf16 ? uint16_t(to_bits(f) >> 16)
                                             : float_to_half(f);
    std::memcpy(p, &h, 2);
}

// NaN if either is NaN; otherwise the larger.
inline float nanmax(float a, float b) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    return b > a ? b : a;
}

} // namespace crest::impl::jit::scalar
