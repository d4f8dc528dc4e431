// Helpers of the reference-backend tests: an independent naive ReduceMax,
// its own 16-bit decoding, and guarded buffers.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "backend/kernel.hpp"

namespace crest::ref_test {

using impl::data_type;
using impl::dims_t;
using impl::reduce_problem;

inline size_t elem_size(data_type dt) { return dt == data_type::f32 ? 4 : 2; }

// Decodes a raw element to double by arithmetic (not by bit shifting into an
// f32 as the backend does), so that the two decoders are independent.
inline double decode(data_type dt, uint32_t bits) {
    if (dt == data_type::f32) {
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
    }
    const int ebits = dt == data_type::f16 ? 5 : 8;
    const int mbits = 15 - ebits;
    const int bias = (1 << (ebits - 1)) - 1;
    const double sign = (bits & 0x8000u) ? -1.0 : 1.0;
    const uint32_t e = (bits >> mbits) & ((1u << ebits) - 1u);
    const uint32_t m = bits & ((1u << mbits) - 1u);
    if (e == (1u << ebits) - 1u)
        return m ? std::nan("") : sign * INFINITY;
    if (e == 0) return sign * std::ldexp(double(m), 1 - bias - mbits);
    return sign * std::ldexp(double(m | (1u << mbits)), int(e) - bias - mbits);
}

inline uint32_t quiet_bit(data_type dt) {
    return dt == data_type::f32 ? 0x00400000u
            : dt == data_type::bf16 ? 0x0040u : 0x0200u;
}

inline uint32_t neg_inf(data_type dt) {
    return dt == data_type::f32 ? 0xFF800000u
            : dt == data_type::bf16 ? 0xFF80u : 0xFC00u;
}

inline uint32_t read_bits(data_type dt, const std::vector<uint8_t> &buf,
        int64_t i) {
    if (dt == data_type::f32) {
        uint32_t v;
        std::memcpy(&v, buf.data() + i * 4, 4);
        return v;
    }
    uint16_t v;
    std::memcpy(&v, buf.data() + i * 2, 2);
    return v;
}

inline void write_bits(data_type dt, std::vector<uint8_t> &buf, int64_t i,
        uint32_t v) {
    if (dt == data_type::f32) {
        std::memcpy(buf.data() + i * 4, &v, 4);
    } else {
        uint16_t h = static_cast<uint16_t>(v);
        std::memcpy(buf.data() + i * 2, &h, 2);
    }
}

// Elements spanned by a strided view (0 when any dim is 0).
inline int64_t span(const dims_t &dims, const dims_t &strides) {
    int64_t last = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] == 0) return 0;
        last += (dims[d] - 1) * strides[d];
    }
    return last + 1;
}

// Naive ReduceMax by full enumeration of the src index space: every flat
// index is split into coordinates, its dst offset is the key of a map that
// keeps the running max. Expected dst bits by dst offset.
inline std::map<int64_t, uint32_t> naive_reduce_max(const reduce_problem &p,
        const std::vector<uint8_t> &src) {
    struct acc {
        bool any = false;
        bool nan = false;
        double best = 0;
        uint32_t bits = 0;
    };
    std::map<int64_t, acc> out;
    const int nd = p.ndims();
    int64_t total = 1;
    for (int d = 0; d < nd; ++d) total *= p.dims[d];
    // Output positions exist even when the reduction is empty.
    bool kept_empty = false;
    int64_t nout = 1;
    for (int d = 0; d < nd; ++d)
        if (!p.is_reduced(d)) {
            kept_empty = kept_empty || p.dims[d] == 0;
            nout *= p.dims[d];
        }
    if (kept_empty) return {};
    for (int64_t o = 0; o < nout; ++o) {
        int64_t rest = o, off = 0;
        for (int d = nd - 1; d >= 0; --d) {
            if (p.is_reduced(d)) continue;
            off += (rest % p.dims[d]) * p.dst_strides[d];
            rest /= p.dims[d];
        }
        out[off];
    }
    for (int64_t flat = 0; flat < total; ++flat) {
        int64_t rest = flat, soff = 0, doff = 0;
        for (int d = nd - 1; d >= 0; --d) {
            const int64_t i = rest % p.dims[d];
            rest /= p.dims[d];
            soff += i * p.src_strides[d];
            if (!p.is_reduced(d)) doff += i * p.dst_strides[d];
        }
        acc &a = out[doff];
        const uint32_t b = read_bits(p.dt, src, soff);
        const double v = decode(p.dt, b);
        if (a.nan) continue;
        if (std::isnan(v)) {
            a.nan = true;
            a.bits = b | quiet_bit(p.dt);
        } else if (!a.any || v > a.best) {
            a.best = v;
            a.bits = b;
        }
        a.any = true;
    }
    std::map<int64_t, uint32_t> res;
    for (auto &kv : out)
        res[kv.first] = kv.second.any ? kv.second.bits : neg_inf(p.dt);
    return res;
}

constexpr uint8_t guard_byte = 0xA5;
constexpr int64_t guard_elems = 16; // before and after the dst span

// A dst buffer filled with guard bytes, with guard_elems before offset 0.
struct guarded {
    data_type dt;
    std::vector<uint8_t> buf;
    guarded(data_type adt, int64_t n)
        : dt(adt), buf((n + 2 * guard_elems) * elem_size(adt), guard_byte) {}
    void *data() { return buf.data() + guard_elems * elem_size(dt); }
    // Bits of the element at dst offset i (may be negative, into the guard).
    uint32_t at(int64_t i) const { return read_bits(dt, buf, i + guard_elems); }
    bool untouched(int64_t i) const {
        const size_t es = elem_size(dt);
        for (size_t b = 0; b < es; ++b)
            if (buf[(i + guard_elems) * es + b] != guard_byte) return false;
        return true;
    }
    int64_t capacity() const {
        return int64_t(buf.size() / elem_size(dt)) - 2 * guard_elems;
    }
};

inline bool is_zero(data_type dt, uint32_t bits) {
    return dt == data_type::f32 ? (bits & 0x7FFFFFFFu) == 0
                                : (bits & 0x7FFFu) == 0;
}

inline const char *dt_name(data_type dt) {
    return dt == data_type::f32 ? "f32" : dt == data_type::bf16 ? "bf16" : "f16";
}

} // namespace crest::ref_test
