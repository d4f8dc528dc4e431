// The reference ReduceMax against an independent naive loop on many random
// problems: every dtype, rank 0..6, random axes, permuted and padded strides.
#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "backend/ref/ref_backend.hpp"
#include "tests/ref/ref_test_util.hpp"

namespace crest::ref_test {
namespace {

// Values drawn to make ties, ±0, ±inf, subnormals and (sometimes) NaN common.
uint32_t random_value(data_type dt, std::mt19937_64 &rng, double nan_rate) {
    std::uniform_real_distribution<double> u(0, 1);
    const bool wide = dt == data_type::f32;
    const double r = u(rng);
    if (r < nan_rate) // NaN with a random payload and sign
        return wide ? 0x7F800001u | (rng() & 0x807FFFFFu)
                    : (dt == data_type::bf16 ? 0x7F81u | (rng() & 0x807Fu)
                                             : 0x7C01u | (rng() & 0x83FFu));
    const double t = u(rng);
    if (t < 0.4) { // a few small values that tie often (decoded exactly)
        static const uint32_t f32v[] = {0x3F800000u, 0x40000000u, 0xBF800000u,
                0x00000000u, 0x80000000u, 0x40400000u};
        static const uint32_t bf16v[] = {0x3F80u, 0x4000u, 0xBF80u, 0x0000u,
                0x8000u, 0x4040u};
        static const uint32_t f16v[] = {0x3C00u, 0x4000u, 0xBC00u, 0x0000u,
                0x8000u, 0x4200u};
        const uint32_t *set = wide ? f32v
                : dt == data_type::bf16 ? bf16v : f16v;
        return set[rng() % 6];
    }
    if (t < 0.45) { // ±inf
        const uint32_t inf = wide ? 0x7F800000u
                : dt == data_type::bf16 ? 0x7F80u : 0x7C00u;
        return inf | ((rng() & 1) ? (wide ? 0x80000000u : 0x8000u) : 0u);
    }
    if (t < 0.55 && !wide) // subnormals, where decoding is easiest to get wrong
        return (rng() & 0x8000u) | (rng() & (dt == data_type::f16 ? 0x3FFu
                                                             : 0x7Fu));
    // Any finite bit pattern: redraw the exponent if it is all ones.
    for (;;) {
        const uint32_t b = wide ? uint32_t(rng()) : uint32_t(rng() & 0xFFFFu);
        if (!std::isnan(decode(dt, b)) && !std::isinf(decode(dt, b)))
            return b;
    }
}

// Strides of a dense layout in a random dim order, each dim padded by 0..2.
dims_t random_strides(const dims_t &dims, std::mt19937_64 &rng) {
    std::vector<int> order(dims.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    dims_t strides(dims.size());
    int64_t running = 1;
    for (int k = int(order.size()) - 1; k >= 0; --k) {
        strides[order[k]] = running;
        running *= std::max<int64_t>(dims[order[k]], 1) + int64_t(rng() % 3);
    }
    return strides;
}

reduce_problem random_problem(std::mt19937_64 &rng) {
    reduce_problem p;
    static const data_type dts[]
            = {data_type::f32, data_type::bf16, data_type::f16};
    p.dt = dts[rng() % 3];
    const int nd = int(rng() % 7);
    const bool allow_zero = rng() % 8 == 0;
    for (int d = 0; d < nd; ++d) {
        const int r = int(rng() % 10);
        p.dims.push_back(allow_zero && r == 0 ? 0 : r < 3 ? 1 : 1 + rng() % 5);
    }
    p.reduce_mask = nd ? uint32_t(rng() % (1u << nd)) : 0u;
    p.src_strides = random_strides(p.dims, rng);
    // Now and then a zero src stride: the same element read many times.
    if (nd && rng() % 16 == 0) p.src_strides[rng() % nd] = 0;
    dims_t ddims = p.dims;
    for (int d = 0; d < nd; ++d)
        if (p.is_reduced(d)) ddims[d] = 1;
    p.dst_strides = random_strides(ddims, rng);
    for (int d = 0; d < nd; ++d)
        if (p.is_reduced(d)) p.dst_strides[d] = 0;
    return p;
}

std::string describe(const reduce_problem &p) {
    std::string s = std::string(dt_name(p.dt)) + " dims=";
    for (auto d : p.dims) s += std::to_string(d) + ",";
    s += " src_strides=";
    for (auto d : p.src_strides) s += std::to_string(d) + ",";
    s += " dst_strides=";
    for (auto d : p.dst_strides) s += std::to_string(d) + ",";
    return s + " mask=" + std::to_string(p.reduce_mask);
}

// Runs the kernel on one seeded problem; returns false on the first mismatch.
bool check_seed(uint64_t seed) {
    std::mt19937_64 rng(seed);
    const reduce_problem p = random_problem(rng);
    static const double nan_rates[] = {0.0, 0.0, 0.02, 0.3};
    const double nan_rate = nan_rates[rng() % 4];
    const int64_t n = std::max<int64_t>(span(p.dims, p.src_strides), 1);
    std::vector<uint8_t> src(n * elem_size(p.dt));
    for (int64_t i = 0; i < n; ++i)
        write_bits(p.dt, src, i, random_value(p.dt, rng, nan_rate));

    dims_t ddims = p.dims;
    for (int d = 0; d < p.ndims(); ++d)
        if (p.is_reduced(d)) ddims[d] = 1;
    guarded dst(p.dt, span(ddims, p.dst_strides));
    impl::ref::reduce_max(p, src.data(), dst.data());

    const auto expect = naive_reduce_max(p, src);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + describe(p));
    for (int64_t i = -guard_elems; i < dst.capacity() + guard_elems; ++i) {
        auto it = expect.find(i);
        if (it == expect.end()) {
            EXPECT_TRUE(dst.untouched(i)) << "wrote dst offset " << i;
            if (!dst.untouched(i)) return false;
            continue;
        }
        const uint32_t got = dst.at(i);
        const bool ok = got == it->second
                || (is_zero(p.dt, got) && is_zero(p.dt, it->second));
        EXPECT_TRUE(ok) << "dst offset " << i << ": got 0x" << std::hex
                        << got << " expected 0x" << it->second;
        if (!ok) return false;
    }
    return true;
}

TEST(RefReduceMaxRandom, MatchesNaiveLoop) {
    // CREST_TEST_SEED replays one case.
    if (const char *s = std::getenv("CREST_TEST_SEED")) {
        EXPECT_TRUE(check_seed(std::strtoull(s, nullptr, 10)));
        return;
    }
    const uint64_t base = 0x5EED0000u;
    int failures = 0;
    for (uint64_t k = 0; k < 3000 && failures < 5; ++k)
        if (!check_seed(base + k)) ++failures;
    EXPECT_EQ(failures, 0);
}

// The naive loop itself must see the cases it is meant to test: a sweep
// that only draws rank 0 or no NaN would prove little.
TEST(RefReduceMaxRandom, SweepCoversRanksDtypesAndZeros) {
    int ranks[7] = {0}, dts[3] = {0}, zero = 0, all_reduced = 0, none = 0;
    for (int k = 0; k < 3000; ++k) {
        std::mt19937_64 r(0x5EED0000u + k);
        const reduce_problem p = random_problem(r);
        ++ranks[p.ndims()];
        ++dts[p.dt == data_type::f32 ? 0 : p.dt == data_type::bf16 ? 1 : 2];
        zero += std::count(p.dims.begin(), p.dims.end(), 0) > 0;
        all_reduced += p.ndims() > 0
                && p.reduce_mask == (1u << p.ndims()) - 1u;
        none += p.reduce_mask == 0;
    }
    for (int c : ranks) EXPECT_GT(c, 100);
    for (int c : dts) EXPECT_GT(c, 500);
    EXPECT_GT(zero, 50);
    EXPECT_GT(all_reduced, 100);
    EXPECT_GT(none, 100);
}

} // namespace
} // namespace crest::ref_test
