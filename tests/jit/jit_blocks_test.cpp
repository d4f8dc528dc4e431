// The generated inner kernel called directly on short rows (blocks of 16
// outputs), including what no plan reaches today: a call that joins dst
// (accumulate) with one row per output. The expected values are computed
// here from the bits, not by the ref backend: max by value, NaN wins.
#include <cmath>
#include <cstring>

#include "backend/jit/generators.hpp"
#include "backend/jit/kernel_cache.hpp"
#include "jit_test_util.hpp"

namespace crest::impl::jit::test {
namespace {

float value_of(uint32_t b, data_type dt) {
    if (dt == data_type::f32) { float f; std::memcpy(&f, &b, 4); return f; }
    if (dt == data_type::bf16) { const uint32_t u = b << 16; float f; std::memcpy(&f, &u, 4); return f; }
    // f16 (no NaN here: callers test is_nan first)
    const int e = (b >> 10) & 0x1f, m = b & 0x3ff;
    const float mag = e == 0 ? std::ldexp(float(m), -24)
            : e == 31 ? INFINITY : std::ldexp(float(m | 0x400), e - 25);
    return (b & 0x8000) ? -mag : mag;
}

uint32_t negative_nan(data_type dt) {
    return dt == data_type::f32 ? 0xffc00123u : dt == data_type::bf16 ? 0xffc1u : 0xfe01u;
}

class JitBlocks : public ::testing::TestWithParam<data_type> {
protected:
    void SetUp() override {
        if (cpu_isa() != isa_t::avx512_core) GTEST_SKIP() << "blocks are AVX-512 only";
    }
    data_type dt() const { return GetParam(); }

    // outs outputs of n contiguous elements; dst joined when accumulate.
    // nan_src / nan_dst: output indices that get a negative NaN.
    void run(int64_t n, int64_t outs, bool accumulate, std::vector<int64_t> nan_src,
            std::vector<int64_t> nan_dst, uint32_t seed) {
        SCOPED_TRACE("n=" + std::to_string(n) + " outs=" + std::to_string(outs)
                + " accumulate=" + std::to_string(accumulate) + " seed=" + std::to_string(seed));
        kernel_config cfg;
        cfg.isa = isa_t::avx512_core;
        cfg.family = family_t::inner;
        cfg.src_dt = cfg.dst_dt = dt();
        cfg.unroll = 2;
        cfg.block_n = static_cast<int>(n);
        const auto code = get_code(cfg);
        const size_t es = esize(dt());
        guarded src(outs * n * es), dst(outs * es);
        std::mt19937 rng(seed);
        for (int64_t i = 0; i < outs * n; ++i) put(src.data(), i, dt(), random_bits(dt(), rng, false));
        for (int64_t o = 0; o < outs; ++o) put(dst.data(), o, dt(), random_bits(dt(), rng, false));
        for (int64_t o : nan_src) put(src.data(), o * n + (o * 7) % n, dt(), negative_nan(dt()));
        for (int64_t o : nan_dst) put(dst.data(), o, dt(), negative_nan(dt()));
        std::vector<uint32_t> want(outs);
        for (int64_t o = 0; o < outs; ++o) {
            bool nan = accumulate && is_nan(get(dst.data(), o, dt()), dt());
            uint32_t best = accumulate ? get(dst.data(), o, dt()) : inf_bits(dt(), true);
            for (int64_t i = 0; i < n && !nan; ++i) {
                const uint32_t b = get(src.data(), o * n + i, dt());
                if (is_nan(b, dt())) nan = true;
                else if (value_of(b, dt()) > value_of(best, dt())) best = b;
            }
            want[o] = nan ? qnan_bits(dt()) : best;
        }
        const inner_call a {src.data(), dst.data(), outs, int64_t(n * es), int64_t(es), 1, 0, n,
                accumulate};
        code->fn(&a);
        for (int64_t o = 0; o < outs; ++o) {
            const uint32_t g = get(dst.data(), o, dt());
            const bool same = g == want[o] || (is_nan(g, dt()) && is_nan(want[o], dt()))
                    || (is_zero(g, dt()) && is_zero(want[o], dt()));
            EXPECT_TRUE(same) << "output " << o << ": got 0x" << std::hex << g << ", want 0x"
                              << want[o];
        }
        EXPECT_TRUE(src.guards_ok());
        EXPECT_TRUE(dst.guards_ok());
    }
};

// Row lengths with and without a partial last vector, unrolled and looped;
// negative NaNs in src and in dst (the sum check and the exact block must
// both keep them).
TEST_P(JitBlocks, JoinsDstAndCatchesNegativeNaN) {
    uint32_t seed = 1;
    for (int64_t n : {16, 32, 48, 56, 64, 96, 128, 160, 256}) {
        if (n > inner_block_max_n(dt())) continue;
        for (bool acc : {false, true}) {
            run(n, 37, acc, {}, {}, seed++);
            run(n, 37, acc, {3}, {}, seed++);
            run(n, 37, acc, {20, 36}, {}, seed++);  // a later block, the remainder
            if (acc) run(n, 37, acc, {}, {5, 17}, seed++);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(All, JitBlocks,
        ::testing::Values(data_type::f32, data_type::bf16, data_type::f16),
        [](const ::testing::TestParamInfo<data_type> &i) {
            return std::string(i.param == data_type::f32 ? "f32" : i.param == data_type::bf16 ? "bf16" : "f16");
        });

} // namespace
} // namespace crest::impl::jit::test
