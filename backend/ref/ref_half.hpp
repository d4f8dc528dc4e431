// bf16 / f16 <-> f32 conversions of the reference backend, written with plain
// bit manipulation so that the oracle depends on no compiler intrinsic and
// no code of the fast backends.
#pragma once

#include <cstdint>
#include <cstring>

namespace crest::impl::ref {

inline float bits_to_f32(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

inline uint32_t f32_to_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

// bf16 is the top half of an f32: widening is exact.
inline float bf16_to_f32(uint16_t h) {
    return bits_to_f32(static_cast<uint32_t>(h) << 16);
}

// Round to nearest even; NaN stays NaN (quiet bit set so that truncating
// the mantissa cannot turn it into inf).
inline uint16_t f32_to_bf16(float f) {
    uint32_t u = f32_to_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return static_cast<uint16_t>((u >> 16) | 0x0040u);
    uint32_t lsb = (u >> 16) & 1u;
    u += 0x7FFFu + lsb;
    return static_cast<uint16_t>(u >> 16);
}

// f16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. Every f16 value,
// subnormals included, is exactly representable in f32.
inline float f16_to_f32(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t man = h & 0x3FFu;
    if (exp == 0x1F) // inf or NaN: keep the payload in the top mantissa bits
        return bits_to_f32(sign | 0x7F800000u | (man << 13));
    if (exp != 0) // normal: rebias 15 -> 127
        return bits_to_f32(sign | ((exp + 112u) << 23) | (man << 13));
    if (man == 0) return bits_to_f32(sign); // +-0
    // Subnormal: value = man * 2^-24; shift the leading one into the
    // implicit position and lower the exponent by the same amount.
    int e = -14;
    while ((man & 0x400u) == 0) {
        man <<= 1;
        --e;
    }
    man &= 0x3FFu;
    return bits_to_f32(sign | (static_cast<uint32_t>(e + 127) << 23)
            | (man << 13));
}

// Round to nearest even, with subnormals, overflow to inf, NaN kept quiet.
inline uint16_t f32_to_f16(float f) {
    uint32_t u = f32_to_bits(f);
    uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
    uint32_t exp = (u >> 23) & 0xFFu;
    uint32_t man = u & 0x7FFFFFu;
    if (exp == 0xFF) {
        if (man == 0) return sign | 0x7C00u;
        return static_cast<uint16_t>(sign | 0x7E00u | (man >> 13));
    }
    int e = static_cast<int>(exp) - 127 + 15;
    if (e >= 0x1F) return sign | 0x7C00u; // too large: inf
    if (e <= 0) {
        // Subnormal or zero in f16: shift the full mantissa (with the
        // implicit one) right and round to nearest even.
        if (e < -10) return sign; // below half the smallest subnormal
        uint32_t m = man | 0x800000u;
        int shift = 14 - e; // 13 for the mantissa width, 1 - e to denormalise
        uint32_t r = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1u))) ++r;
        return static_cast<uint16_t>(sign | r); // a carry into exp is right
    }
    uint32_t r = (static_cast<uint32_t>(e) << 10) | (man >> 13);
    uint32_t rem = man & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r; // may reach inf
    return static_cast<uint16_t>(sign | r);
}

} // namespace crest::impl::ref
