// Canonicalisation: size-1 dims dropped, permuted and split dense groups
// merged, padding keeps dims apart, dst strides constrain kept merges.
#include "backend/jit/canonical.hpp"
#include "tests/jit/jit_test_util.hpp"

namespace crest::impl::jit::test {
namespace {

std::string shape(const canonical &c) {
    std::string r;
    for (const auto &d : c.dims)
        r += (d.reduced ? "R" : "K") + std::to_string(d.n) + "/" + std::to_string(d.ss) + " ";
    return r;
}

TEST(JitCanonical, MergesAndDrops) {
    // NCHW, reduce H and W: one kept group and one contiguous reduced group.
    auto c = canonicalize(make_problem(data_type::f32, {2, 3, 4, 5}, 0b1100));
    EXPECT_EQ(shape(c), "K6/20 R20/1 ");
    // Size-1 dims vanish wherever they are.
    c = canonicalize(make_problem(data_type::f32, {1, 3, 1, 5, 1}, 0b00110));
    EXPECT_EQ(shape(c), "R3/5 K5/1 ");
    // Channels-last, reduce H and W: dense HW reduced group outside C.
    const dims_t d = {2, 8, 4, 5};
    c = canonicalize(make_problem(data_type::f32, d, 0b1100, permuted(d, {0, 2, 3, 1})));
    EXPECT_EQ(shape(c), "K2/160 R20/8 K8/1 ");
    // Padding keeps H and W apart.
    c = canonicalize(
            make_problem(data_type::f32, d, 0b1100, permuted(d, {0, 1, 2, 3}, {0, 0, 0, 3})));
    EXPECT_EQ(shape(c), "K16/32 R4/8 R5/1 ");
    // All reduced: one group.
    c = canonicalize(make_problem(data_type::f32, {2, 3, 4}, 7));
    EXPECT_EQ(shape(c), "R24/1 ");
    EXPECT_EQ(c.num_outputs(), 1);
}

TEST(JitCanonical, DstStridesBlockKeptMerges) {
    // src dense, dst transposed: kept dims cannot merge.
    reduce_problem p = make_problem(data_type::f32, {3, 4}, 0);
    p.dst_strides = {1, 3};
    EXPECT_EQ(shape(canonicalize(p)), "K3/4 K4/1 ");
}

TEST(JitCanonical, ZeroSizes) {
    EXPECT_EQ(
            canonicalize(make_problem(data_type::f32, {3, 0}, 1)).k, canonical::kind::empty_output);
    EXPECT_EQ(
            canonicalize(make_problem(data_type::f32, {3, 0}, 2)).k, canonical::kind::fill_neg_inf);
    EXPECT_EQ(canonicalize(make_problem(data_type::f32, {}, 0)).dims.size(), 0u);
}

} // namespace
} // namespace crest::impl::jit::test
