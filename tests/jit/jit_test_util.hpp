// Helpers of the JIT ReduceMax tests: problems from shapes and layouts,
// guarded buffers (ASan cannot see inside JIT code), random inputs with a
// printed seed, and the bit-exact comparison against the ref oracle.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend/jit/isa.hpp"
#include "backend/jit/jit_backend.hpp"
#include "backend/jit/plan.hpp"
#include "backend/kernel.hpp"
#include "backend/ref/ref_backend.hpp"
#include "src/threading.hpp"

namespace crest::impl::jit::test {

constexpr size_t guard_bytes = 256;
constexpr uint8_t guard_value = 0xA5;
constexpr uint8_t dst_fill = 0x7B;  // not NaN in any dtype

inline size_t esize(data_type dt) { return dt == data_type::f32 ? 4 : 2; }

// p rounded up to a 64-byte boundary, then `offset` bytes on: a buffer
// of 63 + offset bytes more than its data holds the data there.
inline uint8_t *past_line(uint8_t *p, int offset) {
    return p + (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64 + offset;
}

// Bytes with guards on both sides; data() points past the front guard.
class guarded {
public:
    explicit guarded(size_t bytes, uint8_t fill = 0)
        : raw_(bytes + 2 * guard_bytes, fill), size_(bytes) {
        std::fill_n(raw_.begin(), guard_bytes, guard_value);
        std::fill_n(raw_.begin() + guard_bytes + bytes, guard_bytes, guard_value);
    }
    uint8_t *data() { return raw_.data() + guard_bytes; }
    const uint8_t *data() const { return raw_.data() + guard_bytes; }
    size_t size() const { return size_; }
    bool guards_ok() const {
        for (size_t i = 0; i < guard_bytes; ++i)
            if (raw_[i] != guard_value || raw_[guard_bytes + size_ + i] != guard_value)
                return false;
        return true;
    }

private:
    std::vector<uint8_t> raw_;
    size_t size_;
};

inline dims_t dense(const dims_t &d) {
    dims_t s(d.size());
    int64_t acc = 1;
    for (int i = (int)d.size() - 1; i >= 0; --i) {
        s[i] = acc;
        acc *= d[i];
    }
    return s;
}

// Strides of a tensor whose dims are laid out in memory in `order` (outer to
// inner), each dim padded by pad[i] extra elements.
inline dims_t permuted(const dims_t &d, const std::vector<int> &order,
        const dims_t &pad = {}) {
    dims_t s(d.size());
    int64_t acc = 1;
    for (int i = (int)order.size() - 1; i >= 0; --i) {
        const int k = order[i];
        s[k] = acc;
        acc *= d[k] + (pad.empty() ? 0 : pad[k]);
    }
    return s;
}

// keep_dims view of a dense dst: 0 on reduced dims.
inline dims_t dense_dst(const dims_t &d, uint32_t mask) {
    dims_t kd = d;
    for (size_t i = 0; i < d.size(); ++i)
        if ((mask >> i) & 1u) kd[i] = 1;
    dims_t s = dense(kd);
    for (size_t i = 0; i < d.size(); ++i)
        if ((mask >> i) & 1u) s[i] = 0;
    return s;
}

inline reduce_problem make_problem(data_type dt, const dims_t &d,
        uint32_t mask, dims_t ss = {}, dims_t ds = {}) {
    reduce_problem p;
    p.dt = dt;
    p.dims = d;
    p.reduce_mask = mask;
    p.src_strides = ss.empty() ? dense(d) : ss;
    p.dst_strides = ds.empty() ? dense_dst(d, mask) : ds;
    return p;
}

// Elements spanned by a strided tensor (0 if empty).
inline size_t span(const dims_t &d, const dims_t &s) {
    size_t m = 1;
    for (size_t i = 0; i < d.size(); ++i) {
        if (d[i] == 0) return 0;
        m += (d[i] - 1) * s[i];
    }
    return m;
}

inline std::string describe(const reduce_problem &p) {
    std::string r = "dt=" + std::to_string((int)p.dt) + " dims=";
    for (auto v : p.dims) r += std::to_string(v) + ",";
    r += " ss=";
    for (auto v : p.src_strides) r += std::to_string(v) + ",";
    r += " ds=";
    for (auto v : p.dst_strides) r += std::to_string(v) + ",";
    r += " mask=" + std::to_string(p.reduce_mask);
    return r;
}

inline uint32_t bits32(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

// Random finite value of dt as raw bits: any sign, exponent (subnormals
// included), mantissa. With `ties`, a few small values only.
inline uint32_t random_bits(data_type dt, std::mt19937 &rng, bool ties) {
    if (ties) {
        static const float vals[] = {-2.f, -1.f, -0.f, 0.f, 1.f, 3.f};
        static const uint16_t h[] = {0xc000, 0xbc00, 0x8000, 0x0000, 0x3c00, 0x4200};
        const unsigned i = rng() % 6;
        if (dt == data_type::f32) return bits32(vals[i]);
        if (dt == data_type::bf16) return bits32(vals[i]) >> 16;
        return h[i];
    }
    for (;;) {
        if (dt == data_type::f32) {
            const uint32_t u = rng();
            if (((u >> 23) & 0xff) != 0xff) return u;
        } else {
            const uint32_t u = rng() & 0xffff;
            const uint32_t exp_mask = dt == data_type::bf16 ? 0x7f80 : 0x7c00;
            if ((u & exp_mask) != exp_mask) return u;
        }
    }
}

inline void put(uint8_t *base, size_t i, data_type dt, uint32_t bits) {
    if (dt == data_type::f32) std::memcpy(base + 4 * i, &bits, 4);
    else { const uint16_t h = (uint16_t)bits; std::memcpy(base + 2 * i, &h, 2); }
}

inline uint32_t qnan_bits(data_type dt) {
    return dt == data_type::f32 ? 0x7fc00000u : dt == data_type::bf16 ? 0x7fc0u : 0x7e00u;
}
inline uint32_t inf_bits(data_type dt, bool neg) {
    uint32_t b = dt == data_type::f32 ? 0x7f800000u : dt == data_type::bf16 ? 0x7f80u : 0x7c00u;
    if (neg) b |= dt == data_type::f32 ? 0x80000000u : 0x8000u;
    return b;
}

inline bool is_nan(uint32_t b, data_type dt) {
    if (dt == data_type::f32) return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu);
    if (dt == data_type::bf16) return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu);
    return (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu);
}
inline bool is_zero(uint32_t b, data_type dt) {
    return (b & (dt == data_type::f32 ? 0x7fffffffu : 0x7fffu)) == 0;
}

inline uint32_t get(const uint8_t *base, size_t i, data_type dt) {
    if (dt == data_type::f32) { uint32_t u; std::memcpy(&u, base + 4 * i, 4); return u; }
    uint16_t h;
    std::memcpy(&h, base + 2 * i, 2);
    return h;
}

// While alive, problems above 64 KiB take the thread split, as they did
// before the default inline threshold rose to 1 MiB: the suites' sizes were
// chosen to cut chunks at awkward places.
struct split_above_64k : inline_bytes_for_testing {
    split_above_64k() : inline_bytes_for_testing(64 * 1024) {}
};

// ISAs this machine can run, best first.
inline std::vector<const char *> runnable_isas() {
    std::vector<const char *> r;
    if (cpu_isa() == isa_t::avx512_core) r.push_back("avx512_core");
    if (cpu_isa() >= isa_t::avx2) r.push_back("avx2");
    return r;
}

inline const thread_pool &pool2() {
    static thread_pool p(2);
    return p;
}

// Which special values to plant in src.
struct planting {
    std::vector<size_t> nan_at;  // element indices (of the src buffer)
    bool ties = false;
    uint32_t nan_bits = 0;       // the NaN planted; 0: the dtype's quiet NaN
    std::vector<std::pair<size_t, uint32_t>> bits_at {};  // any other values, last
    bool negative = false;       // every random value's sign set
};

// Elements dst spans (reduced dims count 1 even where src's are 0).
inline size_t dst_span(const reduce_problem &p) {
    dims_t kd = p.dims;
    for (int i = 0; i < p.ndims(); ++i)
        if (p.is_reduced(i)) kd[i] = 1;
    return std::max<size_t>(span(kd, p.dst_strides), 1);
}

// Runs p with the JIT (current ISA cap) and with ref, compares every dst
// element (NaN == NaN, +0 == -0) and the guards. Returns the kernel name.
inline std::string check(const reduce_problem &p, const planting &pl = {},
        const thread_pool &pool = pool2(), uint32_t seed = 0) {
    SCOPED_TRACE(describe(p) + " seed=" + std::to_string(seed));
    std::string why;
    kernel_ptr k = make_reduce_max(p, pool, &why);
    EXPECT_TRUE(k) << why;
    if (!k) return "";
    const size_t es = esize(p.dt);
    const size_t ns = span(p.dims, p.src_strides);
    const size_t nd = dst_span(p);
    guarded src(ns * es);
    std::mt19937 rng(seed);
    const uint32_t sign = pl.negative ? (p.dt == data_type::f32 ? 0x80000000u : 0x8000u) : 0;
    for (size_t i = 0; i < ns; ++i)
        put(src.data(), i, p.dt, random_bits(p.dt, rng, pl.ties) | sign);
    for (size_t i : pl.nan_at)
        put(src.data(), i, p.dt, pl.nan_bits ? pl.nan_bits : qnan_bits(p.dt));
    for (const auto &[i, b] : pl.bits_at) put(src.data(), i, p.dt, b);
    guarded got(nd * es, dst_fill), want(nd * es, dst_fill);
    const void *in[] = {src.data()};
    void *out[] = {got.data()};
    k->execute(in, out);
    ref::reduce_max(p, src.data(), want.data());
    EXPECT_TRUE(got.guards_ok()) << k->name() << " wrote outside dst";
    EXPECT_TRUE(src.guards_ok());
    int bad = 0;
    for (size_t i = 0; i < nd && bad < 5; ++i) {
        const uint32_t g = get(got.data(), i, p.dt), w = get(want.data(), i, p.dt);
        const bool same = g == w || (is_nan(g, p.dt) && is_nan(w, p.dt))
                || (is_zero(g, p.dt) && is_zero(w, p.dt));
        if (!same) {
            ADD_FAILURE() << k->name() << " dst[" << i << "] = 0x" << std::hex << g
                          << ", ref 0x" << w;
            ++bad;
        }
    }
    return k->name();
}

// Runs dense p (src and dst dense in its order) with src's last element
// against a page nothing follows (reads past src fault), random values
// from seed, and compares dst with ref bit for bit.
inline void check_at_page_end(const reduce_problem &p, uint32_t seed) {
    SCOPED_TRACE(describe(p) + " seed=" + std::to_string(seed));
    const size_t es = esize(p.dt), page = size_t(sysconf(_SC_PAGESIZE));
    const size_t ns = span(p.dims, p.src_strides);
    const size_t bytes = ns * es, pages = (bytes + page - 1) / page + 1;
    auto *base = static_cast<uint8_t *>(mmap(
            nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(base, MAP_FAILED);
    ASSERT_EQ(mprotect(base + (pages - 1) * page, page, PROT_NONE), 0);
    uint8_t *src = base + (pages - 1) * page - bytes;
    std::mt19937 rng(seed);
    for (size_t i = 0; i < ns; ++i) put(src, i, p.dt, random_bits(p.dt, rng, false));
    std::string why;
    kernel_ptr k = make_reduce_max(p, pool2(), &why);
    ASSERT_TRUE(k) << why;
    std::vector<uint8_t> got(dst_span(p) * es), want(got.size());
    const void *in[] = {src};
    void *out[] = {got.data()};
    k->execute(in, out);
    ref::reduce_max(p, src, want.data());
    EXPECT_EQ(got, want) << k->name();
    munmap(base, pages * page);
}

} // namespace crest::impl::jit::test
