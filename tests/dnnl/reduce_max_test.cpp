// dnnl backend: ReduceMax through dnnl::reduction, checked bit for bit
// against the reference backend; refusals checked for a reason; oneDNN's NaN
// behaviour pinned down so that a oneDNN upgrade that changes it is noticed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backend/dnnl/dnnl_backend.hpp"
#include "backend/dnnl/dnnl_compat.hpp"
#include "backend/ref/ref_backend.hpp"
#include "src/threading.hpp"

namespace crest::impl {
namespace {

using dnnl_backend::make_reduce_max;

const thread_pool &pool() {
    static thread_pool p(1);
    return p;
}

size_t elem_size(data_type dt) { return dt == data_type::f32 ? 4 : 2; }

float bf16_to_f32(uint16_t h) {
    uint32_t u = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// A problem over a dense src whose dims are laid out in `order` (outermost
// first); dst is dense over the kept dims in the same order, with `dst_pad`
// extra elements on its innermost kept stride step (0 = dense).
reduce_problem make_problem(data_type dt, dims_t dims, std::vector<int> axes,
        std::vector<int> order = {}, int64_t dst_pad = 0) {
    reduce_problem p;
    p.dt = dt;
    p.dims = dims;
    const int nd = int(dims.size());
    if (order.empty()) {
        order.resize(nd);
        std::iota(order.begin(), order.end(), 0);
    }
    for (int a : axes) p.reduce_mask |= 1u << a;
    p.src_strides.assign(nd, 0);
    p.dst_strides.assign(nd, 0);
    int64_t s = 1, t = 1;
    bool first_kept = true;
    for (int i = nd - 1; i >= 0; --i) {
        const int d = order[i];
        p.src_strides[d] = s;
        s *= dims[d];
        if (!p.is_reduced(d)) {
            p.dst_strides[d] = t;
            t *= dims[d] + (first_kept ? dst_pad : 0);
            first_kept = false;
        }
    }
    return p;
}

int64_t span(const dims_t &dims, const dims_t &strides) {
    int64_t n = 1;
    for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] == 0) return 0;
        n += (dims[d] - 1) * strides[d];
    }
    return n;
}

// Buffers hold raw bits: f32 as uint32, bf16 as uint16 (upper half of f32).
struct buffers {
    std::vector<uint8_t> src, dst, want;
};

float load(const reduce_problem &p, const std::vector<uint8_t> &b, int64_t i) {
    if (p.dt == data_type::f32) {
        float f;
        std::memcpy(&f, b.data() + 4 * i, 4);
        return f;
    }
    uint16_t h;
    std::memcpy(&h, b.data() + 2 * i, 2);
    return bf16_to_f32(h);
}

void store(const reduce_problem &p, std::vector<uint8_t> &b, int64_t i,
        float f) {
    if (p.dt == data_type::f32) {
        std::memcpy(b.data() + 4 * i, &f, 4);
    } else {
        uint32_t u;
        std::memcpy(&u, &f, 4);
        uint16_t h = uint16_t(u >> 16);  // values are exact in bf16
        std::memcpy(b.data() + 2 * i, &h, 2);
    }
}

// Distinct-ish values, no zeros (max(-0, +0) may return either).
buffers make_buffers(const reduce_problem &p, uint32_t seed) {
    buffers b;
    const size_t es = elem_size(p.dt);
    b.src.resize(es * span(p.dims, p.src_strides));
    b.dst.assign(es * span(p.dims, p.dst_strides), 0xA5);  // canary bytes
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> dist(-2000, 2000);
    const int64_t n = int64_t(b.src.size() / es);
    for (int64_t i = 0; i < n; ++i) {
        int v = dist(rng);
        store(p, b.src, i, float(v == 0 ? 1 : v) * 0.125f);
    }
    b.want = b.dst;
    ref::reduce_max(p, b.src.data(), b.want.data());
    return b;
}

void run(const kernel &k, buffers &b) {
    const void *in[] = {b.src.data()};
    void *out[] = {b.dst.data()};
    k.execute(in, out);
}

// oneDNN (2.6) reduces bf16 only where the CPU has AVX-512 (avx512_core);
// elsewhere it has no bf16 reduction at all, not even its reference loop.
bool onednn_reduces_bf16() {
    const unsigned core = unsigned(dnnl::cpu_isa::avx512_core);
    return (unsigned(dnnl::get_effective_cpu_isa()) & core) == core;
}

// Where oneDNN has no bf16 reduction, the backend must say so and refuse.
bool refused_for_bf16(const reduce_problem &p) {
    if (p.dt != data_type::bf16 || onednn_reduces_bf16()) return false;
    std::string why;
    EXPECT_FALSE(make_reduce_max(p, pool(), false, &why));
    EXPECT_NE(why.find("bf16"), std::string::npos) << why;
    return true;
}

// Makes, runs, checks bit-exact (including untouched padding). Returns the
// implementation name, or "" where oneDNN has no bf16 reduction.
std::string check(const reduce_problem &p, bool require_jit,
        uint32_t seed = 1) {
    if (refused_for_bf16(p)) return "";
    std::string why;
    auto k = make_reduce_max(p, pool(), require_jit, &why);
    EXPECT_TRUE(k) << why;
    if (!k) return "";
    buffers b = make_buffers(p, seed);
    run(*k, b);
    EXPECT_EQ(0, std::memcmp(b.dst.data(), b.want.data(), b.dst.size()))
            << k->name();
    return k->name();
}

bool is_ref(const std::string &name) { return name.rfind("dnnl:ref", 0) == 0; }

TEST(DnnlReduceMax, RuntimeIsNoted) {
    std::printf("oneDNN %s, CPU runtime %s\n",
            dnnl_backend::compat::version_string().c_str(),
            dnnl_backend::compat::cpu_runtime_name().c_str());
    SUCCEED();
}

TEST(DnnlReduceMax, InnerAxesJitF32) {
    const std::vector<std::pair<dims_t, std::vector<int>>> cases = {
            {{4, 1000}, {1}}, {{3, 5, 37}, {2}}, {{2, 7, 16}, {1, 2}},
            {{1, 1, 64, 129}, {3}}, {{2, 3, 4, 5}, {2, 3}}, {{1, 257}, {1}},
            {{16, 8, 8}, {2}}};
    for (auto &c : cases) {
        auto p = make_problem(data_type::f32, c.first, c.second);
        std::string name = check(p, /*require_jit=*/true);
        EXPECT_FALSE(is_ref(name)) << name;
    }
}

TEST(DnnlReduceMax, InnerAxesJitBf16) {
    const std::vector<std::pair<dims_t, std::vector<int>>> cases = {
            {{4, 1000}, {1}}, {{3, 5, 37}, {2}}, {{2, 7, 16}, {1, 2}},
            {{1, 1, 64, 129}, {3}}, {{2, 33}, {1}}};
    for (auto &c : cases) {
        auto p = make_problem(data_type::bf16, c.first, c.second);
        std::string name = check(p, /*require_jit=*/true, 7);
        EXPECT_FALSE(is_ref(name)) << name;
    }
}

// oneDNN 2.6's max starts from the lowest finite f32: the backend puts
// -inf back where every input was -inf, and keeps the lowest finite value
// where an input is it (lowest_fixup), in each layout the walk takes.
TEST(DnnlReduceMax, AllMinusInfinityRowsGiveMinusInfinity) {
    const float ninf = -std::numeric_limits<float>::infinity();
    const float lowest = std::numeric_limits<float>::lowest();
    struct shape {
        dims_t dims;
        std::vector<int> axes;
    };
    for (const shape &c : {shape {{6, 1000}, {1}}, shape {{3, 2, 512}, {2}},
                 shape {{2, 3, 4, 300}, {1, 3}}}) {
        for (data_type dt : {data_type::f32, data_type::bf16}) {
            auto p = make_problem(dt, c.dims, c.axes);
            if (refused_for_bf16(p)) continue;
            std::string why;
            auto k = make_reduce_max(p, pool(), false, &why);
            ASSERT_TRUE(k) << why;
            buffers b = make_buffers(p, 11);
            // Every input of output 0 is -inf; output 1's too but one, the
            // lowest finite value.
            const int64_t n = span(p.dims, p.src_strides);
            bool planted = false;
            for (int64_t i = 0; i < n; ++i) {
                int64_t rem = i, out = 0;
                for (int d = p.ndims() - 1; d >= 0; --d) {
                    out += rem % p.dims[size_t(d)] * p.dst_strides[size_t(d)];
                    rem /= p.dims[size_t(d)];
                }
                if (out > 1) continue;
                const bool plant = out == 1 && !planted && i % 5 == 2;
                planted = planted || plant;
                store(p, b.src, i, plant ? lowest : ninf);
            }
            b.want = b.dst;
            ref::reduce_max(p, b.src.data(), b.want.data());
            run(*k, b);
            EXPECT_EQ(0, std::memcmp(b.dst.data(), b.want.data(), b.dst.size()))
                    << k->name() << " dims " << c.dims.size();
        }
    }
}

TEST(DnnlReduceMax, OuterAxesRefOnlyWithoutRequireJit) {
    for (data_type dt : {data_type::f32, data_type::bf16}) {
        for (auto &c : std::vector<std::pair<dims_t, std::vector<int>>>{
                     {{64, 16, 32}, {0}}, {{5, 300}, {0}},
                     {{3, 40, 17}, {1}}}) {
            auto p = make_problem(dt, c.first, c.second);
            if (refused_for_bf16(p)) continue;
            std::string why;
            EXPECT_FALSE(make_reduce_max(p, pool(), true, &why));
            EXPECT_NE(why.find("ref"), std::string::npos) << why;
            EXPECT_TRUE(is_ref(check(p, /*require_jit=*/false, 3)));
        }
    }
}

TEST(DnnlReduceMax, ChannelsLastStrides) {
    // NCHW dims stored as NHWC: order N, H, W, C.
    for (data_type dt : {data_type::f32, data_type::bf16}) {
        for (auto axes : std::vector<std::vector<int>>{{2, 3}, {1}, {3}}) {
            auto p = make_problem(dt, {2, 19, 5, 6}, axes, {0, 2, 3, 1});
            std::string name = check(p, false, 11);
            // C is innermost in memory: after relabelling, a jit case.
            if (axes == std::vector<int>{1}) {
                EXPECT_FALSE(is_ref(name));
            }
            std::printf("  nhwc %s axes%s: %s\n", dt == data_type::f32
                            ? "f32" : "bf16",
                    axes.size() == 2 ? " 2,3" : axes[0] == 1 ? " 1" : " 3",
                    name.c_str());
        }
    }
}

TEST(DnnlReduceMax, KeepDimsPaddedDst) {
    // dst's innermost kept stride step padded: padding must stay untouched.
    for (data_type dt : {data_type::f32, data_type::bf16}) {
        check(make_problem(dt, {6, 10, 12}, {2}, {}, 3), false, 5);
        check(make_problem(dt, {6, 10, 12}, {1}, {}, 2), false, 5);
        // dst laid out in another order than src (transposed 6x10 result)
        auto t = make_problem(dt, {6, 10, 12}, {2});
        t.dst_strides = {1, 6, 0};
        check(t, false, 5);
        // dst stride 0 is what the contract says, but stray values on a
        // reduced dim must not matter
        auto u = make_problem(dt, {6, 10, 12}, {2});
        u.dst_strides[2] = 0;
        check(u, false, 5);
    }
}

TEST(DnnlReduceMax, ConcurrentExecutes) {
    auto p = make_problem(data_type::f32, {32, 512}, {1});
    std::string why;
    auto k = make_reduce_max(p, pool(), false, &why);
    ASSERT_TRUE(k) << why;
    std::vector<buffers> bufs;
    for (int t = 0; t < 4; ++t) bufs.push_back(make_buffers(p, 100 + t));
    std::vector<std::thread> th;
    for (int t = 0; t < 4; ++t)
        th.emplace_back([&, t] {
            for (int r = 0; r < 20; ++r) run(*k, bufs[t]);
        });
    for (auto &x : th) x.join();
    for (auto &b : bufs)
        EXPECT_EQ(0, std::memcmp(b.dst.data(), b.want.data(), b.dst.size()));
}

// NaN at position i of one reduced row (everything else finite); returns
// for each i whether the result was NaN ('N') or the NaN was lost ('.').
std::string nan_pattern(const reduce_problem &p, int64_t row,
        std::string *name) {
    if (refused_for_bf16(p)) return "";
    std::string why;
    auto k = make_reduce_max(p, pool(), false, &why);
    EXPECT_TRUE(k) << why;
    if (!k) return "";
    *name = k->name();
    int64_t stride = 0;  // of the one reduced dim
    for (int d = 0; d < p.ndims(); ++d)
        if (p.is_reduced(d)) stride = p.src_strides[d];
    std::string seen;
    for (int64_t i = 0; i < row; ++i) {
        buffers b = make_buffers(p, 21);
        store(p, b.src, i * stride, std::numeric_limits<float>::quiet_NaN());
        run(*k, b);
        seen += std::isnan(load(p, b.dst, 0)) ? 'N' : '.';
    }
    return seen;
}

std::string only_nan_at(int64_t n, int64_t pos) {
    std::string s(n, '.');
    if (pos >= 0 && pos < n) s[pos] = 'N';
    return s;
}

TEST(DnnlReduceMax, NaNPositionsObserved) {
    // ops.md: oneDNN may lose NaNs; crest uses it only under fpmath 'any'.
    // Observed with oneDNN 2.6.3 (OMP build), one NaN per row, the rest
    // finite:
    //  - jit:avx512_core* (16 lanes) and jit:avx2 (8 lanes, AMD EPYC Zen 3):
    //    the NaN survives only at position lanes * floor(n / lanes) - 1 (last
    //    lane of the last full vector), or n - 1 when n < lanes; every other
    //    position is lost;
    //  - ref:any: the NaN survives only at the last position n - 1.
    // If oneDNN changes this, the test fails and ops.md needs a look.
    struct nan_case {
        const char *what;
        reduce_problem p;
        int64_t row;
    };
    std::vector<nan_case> cases = {
            {"f32 1x10 axis 1", make_problem(data_type::f32, {1, 10}, {1}),
                    10},
            {"f32 1x16 axis 1", make_problem(data_type::f32, {1, 16}, {1}),
                    16},
            {"f32 1x17 axis 1", make_problem(data_type::f32, {1, 17}, {1}),
                    17},
            {"f32 1x32 axis 1", make_problem(data_type::f32, {1, 32}, {1}),
                    32},
            {"f32 1x33 axis 1", make_problem(data_type::f32, {1, 33}, {1}),
                    33},
            {"bf16 1x7 axis 1", make_problem(data_type::bf16, {1, 7}, {1}),
                    7},
            {"f32 1x40 axis 1", make_problem(data_type::f32, {1, 40}, {1}),
                    40},
            {"f32 1x100 axis 1",
                    make_problem(data_type::f32, {1, 100}, {1}), 100},
            {"bf16 1x40 axis 1",
                    make_problem(data_type::bf16, {1, 40}, {1}), 40},
            {"f32 3x40 axis 1 (row 0)",
                    make_problem(data_type::f32, {3, 40}, {1}), 40},
            {"f32 40x3 axis 0", make_problem(data_type::f32, {40, 3}, {0}),
                    40},
            {"bf16 40x3 axis 0",
                    make_problem(data_type::bf16, {40, 3}, {0}), 40},
    };
    for (auto &c : cases) {
        std::string name;
        const std::string got = nan_pattern(c.p, c.row, &name);
        std::printf("  NaN %s [%s]: %s\n", c.what, name.c_str(), got.c_str());
        const int64_t lanes = name.find("avx512") != std::string::npos ? 16
                : name.find("avx2") != std::string::npos               ? 8
                                                                       : 0;
        if (name.empty()) {
            continue;  // bf16 without AVX-512: refused (checked above)
        } else if (is_ref(name)) {
            EXPECT_EQ(got, only_nan_at(c.row, c.row - 1)) << c.what;
        } else if (lanes) {
            const int64_t keep = c.row < lanes ? c.row - 1
                                               : c.row / lanes * lanes - 1;
            EXPECT_EQ(got, only_nan_at(c.row, keep)) << c.what;
        } else {
            ADD_FAILURE() << c.what << ": " << name
                          << " has no recorded NaN pattern; record it";
        }
    }
}

TEST(DnnlReduceMax, RefusalsCarryAReason) {
    std::string why;
    reduce_problem r0;  // rank 0
    EXPECT_FALSE(make_reduce_max(r0, pool(), false, &why));
    EXPECT_NE(why.find("rank 0"), std::string::npos) << why;

    why.clear();
    auto id = make_problem(data_type::f32, {4, 5}, {});
    EXPECT_FALSE(make_reduce_max(id, pool(), false, &why));
    EXPECT_NE(why.find("identity"), std::string::npos) << why;

    why.clear();
    auto z = make_problem(data_type::f32, {4, 0, 3}, {1});
    EXPECT_FALSE(make_reduce_max(z, pool(), false, &why));
    EXPECT_NE(why.find("zero-size"), std::string::npos) << why;

    why.clear();
    auto zk = make_problem(data_type::f32, {0, 5}, {1});
    EXPECT_FALSE(make_reduce_max(zk, pool(), false, &why));
    EXPECT_NE(why.find("zero-size"), std::string::npos) << why;

    why.clear();
    auto big = make_problem(data_type::f32, dims_t(13, 1), {0});
    big.dims[0] = 2;
    EXPECT_FALSE(make_reduce_max(big, pool(), false, &why));
    EXPECT_NE(why.find("rank 13"), std::string::npos) << why;

    why.clear();
    auto ones = make_problem(data_type::f32, {1, 8}, {0});
    EXPECT_FALSE(make_reduce_max(ones, pool(), false, &why));
    EXPECT_FALSE(why.empty());

    why.clear();
    auto h = make_problem(data_type::f16, {4, 64}, {1});
    EXPECT_FALSE(make_reduce_max(h, pool(), false, &why));
    EXPECT_NE(why.find("f16"), std::string::npos) << why;
    std::printf("  f16: %s\n", why.c_str());
}

TEST(DnnlReduceMax, Rank12Works) {
    dims_t d(12, 1);
    d[11] = 33;
    d[3] = 3;
    check(make_problem(data_type::f32, d, {11}), false);
}

// The table for the docs: which implementation oneDNN picks. Printed, not
// asserted; results still checked against ref::reduce_max.
TEST(DnnlReduceMax, ImplNamesForDocs) {
    struct row {
        const char *what;
        dims_t dims;
        std::vector<int> axes;
    };
    const std::vector<row> rows = {
            {"f32 1x1x4096x4096 axis 3", {1, 1, 4096, 4096}, {3}},
            {"f32 64x256x56x56 axes 2,3", {64, 256, 56, 56}, {2, 3}},
            {"f32 1x128x150x150 axis 1", {1, 128, 150, 150}, {1}},
            {"f32 64x256x56x56 axis 0", {64, 256, 56, 56}, {0}},
            {"f32 1x1x4096x4096 axis 2", {1, 1, 4096, 4096}, {2}},
    };
    for (auto &r : rows) {
        auto p = make_problem(data_type::f32, r.dims, r.axes);
        std::string name = check(p, false, 9);
        std::printf("  | %s | %s |\n", r.what, name.c_str());
    }
}

} // namespace
} // namespace crest::impl
