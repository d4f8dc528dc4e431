#include "tools/benchgraph/data.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <sstream>
#include <sys/mman.h>

namespace benchgraph {

using crest::logical_tensor;
using dt_t = logical_tensor::data_type;

namespace {

constexpr size_t huge_page = size_t(2) << 20;

uint32_t f2u(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
float u2f(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// splitmix64: a small, good, reproducible generator.
struct rng {
    uint64_t s;
    explicit rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 0x1234567ull) {}
    uint64_t next() {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
};

// One value: +-m * 2^k with m in {1, 1.25, 1.5, 1.75} and k geometric in
// [0, 14], so that small values tie often and each row's max varies with
// the row length; all of them are exact in bf16 and f16.
float draw(rng &r, bool with_nan) {
    uint64_t u = r.next();
    uint32_t sel = static_cast<uint32_t>(u % 100000);
    uint64_t v = u >> 17;
    if (with_nan && sel < 100) {
        // quiet NaN, random sign and payload
        return u2f(0x7fc00000u | (static_cast<uint32_t>(v) & 0x803fffffu));
    }
    if (sel < 130) return std::numeric_limits<float>::infinity();
    if (sel < 330) return -std::numeric_limits<float>::infinity();
    if (sel < 2330) return (v & 1) ? -0.0f : 0.0f;
    int k = 0;
    uint64_t bits = v >> 3;
    while (k < 14 && (bits & 1)) {
        ++k;
        bits >>= 1;
    }
    float m = 1.0f + 0.25f * static_cast<float>((v >> 1) & 3);
    float x = std::ldexp(m, k);
    return (v & 1) && (sel % 5 < 2) ? -x : x;  // 40% negative
}

template <typename F>
void for_each_offset(const logical_tensor &lt, const F &f) {
    const auto &d = lt.get_dims();
    const auto &s = lt.get_strides();
    const int nd = static_cast<int>(d.size());
    for (auto x : d)
        if (x == 0) return;
    std::vector<int64_t> idx(nd, 0);
    int64_t linear = 0;
    for (;;) {
        int64_t off = 0;
        for (int i = 0; i < nd; ++i) off += idx[i] * s[i];
        f(linear++, off);
        int i = nd - 1;
        for (; i >= 0; --i) {
            if (++idx[i] < d[i]) break;
            idx[i] = 0;
        }
        if (i < 0) return;
    }
}

double load_float(dt_t dt, const void *p, int64_t off) {
    switch (dt) {
        case dt_t::f32: return static_cast<const float *>(p)[off];
        case dt_t::bf16: return bf16_to_f32(static_cast<const uint16_t *>(p)[off]);
        case dt_t::f16: return f16_to_f32(static_cast<const uint16_t *>(p)[off]);
        default: return 0;
    }
}

} // namespace

buffer::buffer(size_t bytes, unsigned char fill_byte) {
    size_ = bytes ? bytes : 1;
    size_t align = size_ >= 4 * huge_page ? huge_page : 64;
    size_t rounded = (size_ + align - 1) / align * align;
    data_ = std::aligned_alloc(align, rounded);
    if (!data_) throw std::bad_alloc();
    if (align == huge_page) ::madvise(data_, rounded, MADV_HUGEPAGE);
    std::memset(data_, fill_byte, rounded);
}

buffer::~buffer() { std::free(data_); }

size_t span_bytes(const logical_tensor &lt) {
    const auto &d = lt.get_dims();
    const auto &s = lt.get_strides();
    size_t esz = crest::data_type_size(lt.get_data_type());
    if (d.size() != s.size()) return esz;
    int64_t last = 0;
    for (size_t i = 0; i < d.size(); ++i) {
        if (d[i] == 0) return esz;
        last += (d[i] - 1) * s[i];
    }
    return static_cast<size_t>(last + 1) * esz;
}

float bf16_to_f32(uint16_t v) { return u2f(static_cast<uint32_t>(v) << 16); }

uint16_t f32_to_bf16(float f) {
    uint32_t u = f2u(f);
    if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
    return static_cast<uint16_t>(u >> 16);
}

float f16_to_f32(uint16_t h) {
    uint32_t sign = (h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ffu;
    if (e == 0x1f) return u2f(sign | 0x7f800000u | (m << 13));
    if (e == 0) {
        float x = std::ldexp(static_cast<float>(m), -24);
        return sign ? -x : x;
    }
    return u2f(sign | ((e + 112) << 23) | (m << 13));
}

uint16_t f32_to_f16(float f) {
    uint32_t u = f2u(f);
    uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x1ffu));
    if (a >= 0x477ff000u) return sign | 0x7c00u;  // rounds to inf
    if (a < 0x38800000u) {  // subnormal in f16: exact arithmetic in float
        float x = u2f(a) * 16777216.0f;  // scale by 2^24
        return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(x)));
    }
    uint32_t r = a + 0x0fffu + ((a >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((r - 0x38000000u) >> 13));
}

void fill_float(const logical_tensor &lt, void *data, uint64_t seed,
        bool with_nan, bool negative) {
    const dt_t dt = lt.get_data_type();
    const size_t n = span_bytes(lt) / crest::data_type_size(dt);
    rng r(seed);
    for (size_t i = 0; i < n; ++i) {
        float x = draw(r, with_nan);
        if (negative) x = -std::fabs(x);
        if (dt == dt_t::f32) static_cast<float *>(data)[i] = x;
        else if (dt == dt_t::bf16) static_cast<uint16_t *>(data)[i] = f32_to_bf16(x);
        else if (dt == dt_t::f16) static_cast<uint16_t *>(data)[i] = f32_to_f16(x);
    }
}

void fill_int(const logical_tensor &lt, void *data,
        const std::vector<int64_t> *values, uint64_t seed) {
    const dt_t dt = lt.get_data_type();
    rng r(seed);
    const bool given = values
            && static_cast<int64_t>(values->size()) == std::max<int64_t>(lt.nelems(), 0);
    auto store = [&](int64_t off, int64_t v) {
        switch (dt) {
            case dt_t::s32: static_cast<int32_t *>(data)[off] = static_cast<int32_t>(v); break;
            case dt_t::s64: static_cast<int64_t *>(data)[off] = v; break;
            case dt_t::s8: static_cast<int8_t *>(data)[off] = static_cast<int8_t>(v); break;
            case dt_t::u8:
            case dt_t::boolean: static_cast<uint8_t *>(data)[off] = static_cast<uint8_t>(v); break;
            default: break;
        }
    };
    for_each_offset(lt, [&](int64_t i, int64_t off) {
        store(off, given ? (*values)[i] : static_cast<int64_t>(r.next() % 8));
    });
}

compare_result compare(const logical_tensor &lt, const void *got,
        const void *ref, const compare_rule &rule) {
    compare_result res;
    const dt_t dt = lt.get_data_type();
    const bool is_fp = dt == dt_t::f32 || dt == dt_t::bf16 || dt == dt_t::f16;
    const size_t esz = crest::data_type_size(dt);
    for_each_offset(lt, [&](int64_t i, int64_t off) {
        ++res.total;
        const char *g = static_cast<const char *>(got) + off * esz;
        const char *e = static_cast<const char *>(ref) + off * esz;
        bool ok;
        double a = 0, b = 0;
        if (!is_fp) {
            ok = std::memcmp(g, e, esz) == 0;
        } else {
            a = load_float(dt, got, off);
            b = load_float(dt, ref, off);
            if (std::isnan(b)) ok = std::isnan(a) || !rule.compare_nan;
            else if (std::isnan(a)) ok = false;
            else if (a == b) ok = true;  // also -0 == +0
            else if (rule.rel_tol > 0 && std::isfinite(a) && std::isfinite(b))
                ok = std::fabs(a - b)
                        <= rule.rel_tol * std::max(std::fabs(a), std::fabs(b));
            else ok = false;
        }
        if (!ok) {
            ++res.errors;
            if (res.samples.size() < 10) {
                std::ostringstream o;
                o << "[" << i << "] got ";
                if (is_fp) o << a << " expected " << b;
                else o << "(bytes differ)";
                res.samples.push_back(o.str());
            }
        }
    });
    return res;
}

std::string dims_str(const std::vector<int64_t> &d) {
    if (d.empty()) return "-";
    std::ostringstream o;
    for (size_t i = 0; i < d.size(); ++i) o << (i ? "x" : "") << d[i];
    return o.str();
}

std::string lt_str(const logical_tensor &lt) {
    std::ostringstream o;
    o << lt.get_id() << ":" << crest::to_string(lt.get_data_type()) << ":";
    if (lt.get_ndims() < 0) o << "?";
    else o << dims_str(lt.get_dims());
    if (lt.get_layout_type() == logical_tensor::layout_type::strided)
        o << ":s" << dims_str(lt.get_strides());
    else o << ":" << crest::to_string(lt.get_layout_type());
    return o.str();
}

} // namespace benchgraph
