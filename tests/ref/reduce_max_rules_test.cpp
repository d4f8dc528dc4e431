// Every ReduceMax rule of ops.md that the kernel owns, pinned with small
// hand-made cases. Each output buffer is guarded: anything written outside
// the expected offsets fails.
#include <vector>

#include <gtest/gtest.h>

#include "backend/ref/ref_backend.hpp"
#include "crest/error.hpp"
#include "tests/ref/ref_test_util.hpp"

namespace crest::ref_test {
namespace {

const data_type all_dts[] = {data_type::f32, data_type::bf16, data_type::f16};

// Dense row-major src; dst dense over the kept dims, stride 0 on reduced.
reduce_problem dense(data_type dt, const dims_t &dims, uint32_t mask) {
    reduce_problem p;
    p.dt = dt;
    p.dims = dims;
    p.reduce_mask = mask;
    p.src_strides.assign(dims.size(), 0);
    p.dst_strides.assign(dims.size(), 0);
    int64_t s = 1, t = 1;
    for (int d = int(dims.size()) - 1; d >= 0; --d) {
        p.src_strides[d] = s;
        s *= dims[d];
        if (!p.is_reduced(d)) {
            p.dst_strides[d] = t;
            t *= dims[d];
        }
    }
    return p;
}

std::vector<uint8_t> make_src(data_type dt, const std::vector<uint32_t> &v) {
    std::vector<uint8_t> b(std::max<size_t>(v.size(), 1) * elem_size(dt));
    for (size_t i = 0; i < v.size(); ++i) write_bits(dt, b, int64_t(i), v[i]);
    return b;
}

// Runs the ref kernel with a guarded dst of dst_elems elements and checks
// that exactly the offsets 0..expect.size()-1 hold the expected bits.
void run_expect(const reduce_problem &p, const std::vector<uint32_t> &src,
        int64_t dst_elems, const std::vector<uint32_t> &expect) {
    SCOPED_TRACE(dt_name(p.dt));
    const auto s = make_src(p.dt, src);
    guarded dst(p.dt, dst_elems);
    impl::ref::reduce_max(p, s.data(), dst.data());
    for (int64_t i = -guard_elems; i < dst_elems + guard_elems; ++i) {
        if (i >= 0 && i < int64_t(expect.size()))
            EXPECT_EQ(dst.at(i), expect[i]) << "dst offset " << i;
        else
            EXPECT_TRUE(dst.untouched(i)) << "wrote dst offset " << i;
    }
}

// Bit patterns of a few values in each dtype.
struct vals {
    uint32_t one, two, three, seven, m1, pz, nz, pinf, ninf, qnan, qnan2,
            lowest;
};
vals of(data_type dt) {
    if (dt == data_type::f32)
        return {0x3F800000, 0x40000000, 0x40400000, 0x40E00000, 0xBF800000,
                0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000,
                0xFFC12345, 0xFF7FFFFF};
    if (dt == data_type::bf16)
        return {0x3F80, 0x4000, 0x4040, 0x40E0, 0xBF80, 0, 0x8000, 0x7F80,
                0xFF80, 0x7FC0, 0xFFC5, 0xFF7F};
    return {0x3C00, 0x4000, 0x4200, 0x4700, 0xBC00, 0, 0x8000, 0x7C00, 0xFC00,
            0x7E00, 0xFE15, 0xFBFF};
}

TEST(RefReduceMaxRules, EmptyMaskIsIdentityOverPermutedStrides) {
    for (data_type dt : all_dts) {
        reduce_problem p = dense(dt, {2, 3, 4}, 0);
        p.src_strides = {1, 8, 2}; // dim 0 innermost, dim 2 outer: a permute
        const vals v = of(dt);
        std::vector<uint32_t> src(24), expect(24);
        // Distinct finite values, so that a misplaced element shows.
        for (int i = 0; i < 24; ++i)
            src[i] = dt == data_type::f32 ? v.one + (uint32_t(i) << 16)
                                          : v.one + uint32_t(i);
        src[5] = v.qnan;
        src[6] = v.nz;
        for (int a = 0; a < 2; ++a)
            for (int b = 0; b < 3; ++b)
                for (int c = 0; c < 4; ++c)
                    expect[a * 12 + b * 4 + c] = src[a + b * 8 + c * 2];
        run_expect(p, src, 24, expect);
    }
}

TEST(RefReduceMaxRules, EmptyReductionGivesNegInf) {
    for (data_type dt : all_dts) {
        const uint32_t ni = neg_inf(dt);
        EXPECT_EQ(ni, dt == data_type::f32 ? 0xFF800000u
                        : dt == data_type::bf16 ? 0xFF80u : 0xFC00u);
        run_expect(dense(dt, {3, 0}, 0b10), {}, 3, {ni, ni, ni});
        run_expect(dense(dt, {0}, 0b1), {}, 1, {ni});
        run_expect(dense(dt, {0, 0}, 0b11), {}, 1, {ni});
        // Only one reduced dim is empty; the other reduced dim is not.
        run_expect(dense(dt, {2, 0, 3}, 0b011), {}, 3, {ni, ni, ni});
        run_expect(dense(dt, {2, 0, 3}, 0b010), {}, 6,
                {ni, ni, ni, ni, ni, ni});
    }
}

TEST(RefReduceMaxRules, ZeroSizeKeptDimWritesNothing) {
    for (data_type dt : all_dts) {
        const vals v = of(dt);
        run_expect(dense(dt, {0, 4}, 0b10), {v.one, v.two, v.one, v.one}, 8,
                {});
        run_expect(dense(dt, {0, 0}, 0b10), {}, 8, {});
        run_expect(dense(dt, {3, 0}, 0b00), {}, 8, {});
        run_expect(dense(dt, {2, 3, 0}, 0b011), {}, 8, {});
    }
}

TEST(RefReduceMaxRules, NaNFirstMiddleLastPropagates) {
    for (data_type dt : all_dts) {
        const vals v = of(dt);
        for (int pos = 0; pos < 5; ++pos) {
            std::vector<uint32_t> row = {v.pinf, v.two, v.ninf, v.seven, v.m1};
            row[pos] = v.qnan2; // negative quiet NaN with a payload
            SCOPED_TRACE("NaN at " + std::to_string(pos));
            run_expect(dense(dt, {5}, 1), row, 1, {v.qnan2});
        }
        // Two NaNs: the first one's bits are written.
        run_expect(dense(dt, {4}, 1), {v.one, v.qnan2, v.qnan, v.two}, 1,
                {v.qnan2});
        // The NaN stays in its own row.
        run_expect(dense(dt, {2, 3}, 0b10),
                {v.one, v.qnan, v.two, v.three, v.m1, v.one}, 2,
                {v.qnan, v.three});
        // ... and in its own column when the outer dim is reduced.
        run_expect(dense(dt, {2, 3}, 0b01),
                {v.one, v.qnan, v.two, v.three, v.m1, v.one}, 3,
                {v.three, v.qnan, v.two});
    }
}

TEST(RefReduceMaxRules, SignalingNaNIsWrittenQuiet) {
    run_expect(dense(data_type::f32, {3}, 1), {0x3F800000, 0x7F800001, 0},
            1, {0x7FC00001});
    run_expect(dense(data_type::bf16, {2}, 1), {0xFF81, 0x7F80}, 1, {0xFFC1});
    run_expect(dense(data_type::f16, {2}, 1), {0x7C01, 0x3C00}, 1, {0x7E01});
}

TEST(RefReduceMaxRules, TiesAndSignedZeros) {
    for (data_type dt : all_dts) {
        const vals v = of(dt);
        run_expect(dense(dt, {5}, 1), {v.three, v.seven, v.seven, v.m1,
                v.seven}, 1, {v.seven});
        run_expect(dense(dt, {3}, 1), {v.m1, v.m1, v.m1}, 1, {v.m1});
        run_expect(dense(dt, {2}, 1), {v.nz, v.nz}, 1, {v.nz});
        run_expect(dense(dt, {2}, 1), {v.m1, v.nz}, 1, {v.nz});
        // max(-0, +0) may be either zero.
        for (auto row : {std::vector<uint32_t>{v.nz, v.pz},
                     std::vector<uint32_t>{v.pz, v.nz}}) {
            const auto s = make_src(dt, row);
            guarded dst(dt, 1);
            impl::ref::reduce_max(dense(dt, {2}, 1), s.data(), dst.data());
            EXPECT_TRUE(is_zero(dt, dst.at(0))) << std::hex << dst.at(0);
            EXPECT_TRUE(dst.untouched(-1) && dst.untouched(1));
        }
    }
}

TEST(RefReduceMaxRules, Infinities) {
    for (data_type dt : all_dts) {
        const vals v = of(dt);
        run_expect(dense(dt, {3}, 1), {v.one, v.pinf, v.seven}, 1, {v.pinf});
        run_expect(dense(dt, {2}, 1), {v.ninf, v.ninf}, 1, {v.ninf});
        run_expect(dense(dt, {3}, 1), {v.ninf, v.lowest, v.ninf}, 1,
                {v.lowest});
        run_expect(dense(dt, {3}, 1), {v.pinf, v.pinf, v.qnan}, 1, {v.qnan});
    }
}

TEST(RefReduceMaxRules, RankZeroIsOneElement) {
    for (data_type dt : all_dts) {
        const vals v = of(dt);
        run_expect(dense(dt, {}, 0), {v.seven}, 1, {v.seven});
        run_expect(dense(dt, {}, 0), {v.qnan2}, 1, {v.qnan2});
        run_expect(dense(dt, {}, 0), {v.nz}, 1, {v.nz});
    }
}

TEST(RefReduceMaxRules, RankTwelveMatchesNaive) {
    const dims_t dims(12, 2);
    const uint32_t masks[] = {0u, 0xFFFu, 0x555u, 0xAAAu, 0x800u, 0x001u,
            0x7FEu};
    for (data_type dt : all_dts) {
        const vals v = of(dt);
        std::vector<uint32_t> src(4096);
        const uint32_t pool[] = {v.one, v.m1, v.two, v.nz, v.three, v.ninf};
        for (int i = 0; i < 4096; ++i) src[i] = pool[(i * 2654435761u) % 6];
        src[4095] = v.seven; // one unique max in the last element
        src[1234] = v.qnan; // and one NaN
        for (uint32_t m : masks) {
            SCOPED_TRACE("mask " + std::to_string(m));
            const reduce_problem p = dense(dt, dims, m);
            const auto s = make_src(dt, src);
            const auto naive = naive_reduce_max(p, s);
            std::vector<uint32_t> expect;
            for (auto &kv : naive) expect.push_back(kv.second);
            ASSERT_EQ(int64_t(expect.size()),
                    int64_t(1) << (12 - __builtin_popcount(m)));
            run_expect(p, src, int64_t(expect.size()), expect);
        }
        // Everything reduced: the NaN wins.
        run_expect(dense(dt, dims, 0xFFF), src, 1, {v.qnan});
    }
}

TEST(RefReduceMaxRules, SizeOneDims) {
    for (data_type dt : all_dts) {
        const vals v = of(dt);
        const std::vector<uint32_t> src = {v.one, v.seven, v.m1, v.two, v.pz};
        run_expect(dense(dt, {1, 5, 1}, 0b101), src, 5, src);
        run_expect(dense(dt, {1, 5, 1}, 0b111), src, 1, {v.seven});
        run_expect(dense(dt, {1, 5, 1}, 0b010), src, 1, {v.seven});
        run_expect(dense(dt, {1, 1, 1}, 0b111), {v.m1}, 1, {v.m1});
    }
}

TEST(RefReduceMaxRules, SubnormalsOrderExactly) {
    // f16: subnormals are where a careless decoder flushes or misplaces.
    run_expect(dense(data_type::f16, {5}, 1),
            {0x0001, 0x0003, 0x8005, 0x03FF, 0x0002}, 1, {0x03FF});
    run_expect(dense(data_type::f16, {3}, 1), {0x03FF, 0x0400, 0x0001}, 1,
            {0x0400});
    run_expect(dense(data_type::f16, {2}, 1), {0x8002, 0x8001}, 1, {0x8001});
    run_expect(dense(data_type::bf16, {3}, 1), {0x0001, 0x007F, 0x0080}, 1,
            {0x0080});
    run_expect(dense(data_type::f32, {2}, 1), {0x00000002, 0x00000001}, 1,
            {0x00000002});
}

TEST(RefReduceMaxRules, PaddedDstGapsAreNotWritten) {
    for (data_type dt : all_dts) {
        const vals v = of(dt);
        reduce_problem p = dense(dt, {2, 3}, 0b10);
        p.dst_strides = {3, 0}; // outputs at 0 and 3; 1, 2 and 4.. are padding
        const auto s = make_src(dt, {v.one, v.two, v.m1, v.seven, v.pz, v.m1});
        guarded dst(dt, 6);
        impl::ref::reduce_max(p, s.data(), dst.data());
        EXPECT_EQ(dst.at(0), v.two);
        EXPECT_EQ(dst.at(3), v.seven);
        for (int64_t i = -guard_elems; i < 6 + guard_elems; ++i)
            if (i != 0 && i != 3) {
                EXPECT_TRUE(dst.untouched(i)) << i;
            }
    }
}

TEST(RefReduceMaxKernel, NamedAndRunsTheProblem) {
    const reduce_problem p = dense(data_type::f32, {2, 3}, 0b01);
    impl::kernel_ptr k = impl::ref::make_reduce_max(p);
    ASSERT_TRUE(k);
    EXPECT_EQ(k->name(), "ref:reduce_max");
    const auto s = make_src(data_type::f32,
            {0x3F800000, 0x40E00000, 0xBF800000, 0x40000000, 0, 0xFF800000});
    guarded dst(data_type::f32, 3);
    const void *in[] = {s.data()};
    void *out[] = {dst.data()};
    k->execute(in, out);
    EXPECT_EQ(dst.at(0), 0x40000000u);
    EXPECT_EQ(dst.at(1), 0x40E00000u);
    EXPECT_EQ(dst.at(2), 0xBF800000u);
    EXPECT_TRUE(dst.untouched(-1) && dst.untouched(3));
}

TEST(RefReduceMaxKernel, RefusesMalformedProblems) {
    reduce_problem ok = dense(data_type::f32, {2, 3}, 0b01);
    auto refused = [](const reduce_problem &p, const char *what) {
        try {
            impl::ref::make_reduce_max(p);
            ADD_FAILURE() << "accepted " << what;
        } catch (const crest::error &e) {
            EXPECT_EQ(e.get_status(), status::invalid_arguments) << what;
            EXPECT_NE(std::string(e.what()).find("ref:reduce_max"),
                    std::string::npos) << e.what();
        }
    };
    reduce_problem p = ok;
    p.dt = data_type::s32;
    refused(p, "s32");
    p = dense(data_type::f32, dims_t(13, 1), 1);
    refused(p, "rank 13");
    p = ok;
    p.src_strides.pop_back();
    refused(p, "short src_strides");
    p = ok;
    p.dims[1] = -1;
    refused(p, "negative dim");
    p = ok;
    p.reduce_mask = 0b100;
    refused(p, "mask beyond rank");
    const int64_t big = int64_t(1) << 40;
    p = ok; // 2^80 elements: the last offset is about 2^80
    p.dims = {big, big};
    p.src_strides = {big, 1};
    refused(p, "offsets beyond int64");
    p = ok;
    p.src_strides[0] = int64_t(1) << 62;
    p.dims[0] = 4;
    refused(p, "stride times size beyond int64");
    EXPECT_NO_THROW(impl::ref::make_reduce_max(dense(data_type::f16,
            dims_t(12, 1), 0xFFF)));
}

} // namespace
} // namespace crest::ref_test
