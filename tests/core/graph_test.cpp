// add_op and finalize: schema checks, edges, producers, cycles, shapes.
#include "graph_helpers.hpp"

namespace crest_test {
namespace {

using crest::graph;
using crest::op;
using crest::status;

graph new_graph() { return graph(crest::engine::kind::cpu); }

TEST(Finalize, InfersOutputShapeAlongAChain) {
    auto g = new_graph();
    g.add_op(reduce(0, dense(0, {2, 3, 4, 5}), unknown(1), {1}, true));
    g.add_op(reduce(1, unknown(1), unknown(2), {-1}, false));
    g.finalize();
    const auto ops = g.get_ops();
    EXPECT_EQ(ops[0].get_outputs()[0].get_dims(), (logical_tensor::dims {2, 1, 4, 5}));
    EXPECT_EQ(ops[1].get_inputs()[0].get_dims(), (logical_tensor::dims {2, 1, 4, 5}));
    EXPECT_EQ(ops[1].get_outputs()[0].get_dims(), (logical_tensor::dims {2, 1, 4}));
}

TEST(Finalize, EmptyAxesIsIdentityWhateverKeepDims) {
    for (bool keep : {false, true}) {
        auto g = new_graph();
        g.add_op(reduce(0, dense(0, {2, 3}), unknown(1), {}, keep));
        g.finalize();
        EXPECT_EQ(g.get_ops()[0].get_outputs()[0].get_dims(), (logical_tensor::dims {2, 3}));
    }
}

TEST(Finalize, OutputShapeThatDisagreesWithInferenceIsRefused) {
    auto g = new_graph();
    g.add_op(reduce(3, dense(0, {2, 3, 4}), dense(1, {2, 3}), {1}, false, "rm"));
    expect_error([&] { g.finalize(); }, status::invalid_shape,
            {"ReduceMax #3 'rm'", "'dst' (id 1)", "[2,3]", "[2,4]"});
}

TEST(Finalize, TwoProducersOfOneTensorAreRefused) {
    auto g = new_graph();
    g.add_op(reduce(0, dense(0, {4, 4}), unknown(5), {0}, false, "a"));
    g.add_op(reduce(1, dense(1, {4, 4}), unknown(5), {1}, false, "b"));
    expect_error([&] { g.finalize(); }, status::invalid_graph,
            {"tensor id 5", "ReduceMax #0 'a'", "ReduceMax #1 'b'"});
}

TEST(Finalize, CycleIsRefused) {
    auto g = new_graph();
    g.add_op(reduce(0, dense(10, {4, 4}), dense(11, {4, 4}), {}, false, "a"));
    g.add_op(reduce(1, dense(11, {4, 4}), dense(10, {4, 4}), {}, false, "b"));
    expect_error([&] { g.finalize(); }, status::invalid_graph,
            {"cycle", "ReduceMax #0 'a'", "ReduceMax #1 'b'"});
}

TEST(Finalize, SelfLoopIsACycle) {
    auto g = new_graph();
    g.add_op(reduce(0, dense(7, {4}), dense(7, {4}), {}, false, "self"));
    expect_error([&] { g.finalize(); }, status::invalid_graph, {"cycle", "'self'"});
}

TEST(Finalize, EdgeWithConflictingDataTypeIsRefused) {
    auto g = new_graph();
    g.add_op(reduce(0, dense(0, {4, 4}), unknown(1), {0}));
    g.add_op(reduce(1, unknown(1, dt::bf16), unknown(2, dt::bf16), {0}));
    expect_error([&] { g.finalize(); }, status::invalid_data_type, {"id 1", "bf16", "f32"});
}

TEST(AddOp, DuplicateOpIdIsRefusedUnlessAllowed) {
    auto g = new_graph();
    g.add_op(reduce(4, dense(0, {4}), unknown(1), {0}));
    expect_error([&] { g.add_op(reduce(4, dense(2, {4}), unknown(3), {0})); },
            status::invalid_graph, {"op id 4"});
    EXPECT_NO_THROW(g.add_op(reduce(4, dense(2, {4}), unknown(3), {0}), true));
}

TEST(AddOp, AfterFinalizeIsRefused) {
    auto g = new_graph();
    g.add_op(reduce(0, dense(0, {4}), unknown(1), {0}));
    g.finalize();
    expect_error([&] { g.add_op(reduce(1, dense(2, {4}), unknown(3), {0})); },
            status::invalid_graph, {"after finalize"});
}

TEST(AddOp, AttributeOfTheWrongTypeIsRefused) {
    op o(2, op::kind::ReduceMax, {dense(0, {4})}, {unknown(1)}, "k");
    o.set_attr(op::attr::axes, std::vector<int64_t> {0});
    o.set_attr(op::attr::keep_dims, int64_t(1));
    auto g = new_graph();
    expect_error([&] { g.add_op(o); }, status::invalid_graph_op,
            {"ReduceMax #2 'k'", "keep_dims", "s64", "bool"});
}

TEST(AddOp, WrongArityIsRefused) {
    op o(2, op::kind::ReduceMax, {dense(0, {4})}, {}, "k");
    o.set_attr(op::attr::axes, std::vector<int64_t> {0});
    auto g = new_graph();
    expect_error([&] { g.add_op(o); }, status::invalid_graph_op, {"0 outputs", "expected 1"});
}

TEST(AddOp, NegativeDimIsRefused) {
    auto g = new_graph();
    expect_error([&] { g.add_op(reduce(0, dense(0, {4, -3}), unknown(1), {0})); },
            status::invalid_shape, {"'src'", "dim 1 = -3", "negative"});
}

TEST(AddOp, OverflowingDimsAreRefused) {
    auto g = new_graph();
    const int64_t big = int64_t(1) << 40;
    expect_error([&] { g.add_op(reduce(0, dense(0, {big, big}), unknown(1), {0})); },
            status::invalid_shape, {"overflows"});
}

TEST(AddOp, NegativeStrideIsRefused) {
    auto g = new_graph();
    logical_tensor src(0, dt::f32, {4, 4}, {-4, 1});
    expect_error([&] { g.add_op(reduce(0, src, unknown(1), {0})); },
            status::invalid_shape, {"stride 0 = -4"});
}

TEST(AddOp, UnknownDimsAreAccepted) {
    auto g = new_graph();
    EXPECT_NO_THROW(g.add_op(reduce(0, dense(0, {-1, 4}), unknown(1), {1})));
    g.finalize();
    EXPECT_EQ(g.get_ops()[0].get_outputs()[0].get_dims(), (logical_tensor::dims {-1}));
}

TEST(AddOp, MaximumShapesThatDoNotBroadcastAreRefused) {
    auto g = new_graph();
    g.add_op(op(0, op::kind::Maximum, {dense(0, {2, 3}), dense(1, {4})}, {unknown(2)}, "mx"));
    expect_error([&] { g.finalize(); }, status::invalid_shape,
            {"Maximum #0 'mx'", "[2,3]", "[4]", "do not broadcast"});
}

TEST(AddOp, MaximumBroadcastsNumpyStyle) {
    auto g = new_graph();
    g.add_op(op(0, op::kind::Maximum, {dense(0, {2, 1, 5}), dense(1, {3, 1})}, {unknown(2)}));
    g.finalize();
    EXPECT_EQ(g.get_ops()[0].get_outputs()[0].get_dims(), (logical_tensor::dims {2, 3, 5}));
}

} // namespace
} // namespace crest_test

namespace crest_test {
namespace {

TEST(LogicalTensor, DenseStridesThatOverflowBecomeUnknownAndAreRefused) {
    const int64_t big = int64_t(1) << 40;
    const logical_tensor t(0, dt::f32, logical_tensor::dims {big, big, big}, lt_layout::strided);
    EXPECT_EQ(t.get_strides()[2], 1);
    EXPECT_EQ(t.get_strides()[1], big);
    EXPECT_EQ(t.get_strides()[0], logical_tensor::unknown_dim);
    crest::graph g(crest::engine::kind::cpu);
    expect_error([&] { g.add_op(reduce(0, t, unknown(1), {0})); },
            crest::status::invalid_shape, {"overflows"});
}

// A braced list is dims, whatever its length: {2} is rank 1, not a rank
// of 2 with unknown dims; a plain integer is still the rank.
TEST(LogicalTensor, BracedListIsDimsAndAnIntegerIsTheRank) {
    const logical_tensor one(0, dt::f32, {2}, lt_layout::strided);
    EXPECT_EQ(one.get_ndims(), 1);
    EXPECT_EQ(one.get_dims(), logical_tensor::dims {2});
    EXPECT_EQ(one.get_strides(), logical_tensor::dims {1});
    const logical_tensor two(0, dt::f32, {2, 3}, lt_layout::any);
    EXPECT_EQ(two.get_dims(), (logical_tensor::dims {2, 3}));
    const int32_t rank = 2;
    const logical_tensor unknown_dims(0, dt::f32, rank, lt_layout::any);
    EXPECT_EQ(unknown_dims.get_ndims(), 2);
    EXPECT_EQ(unknown_dims.get_dims(),
            (logical_tensor::dims{logical_tensor::unknown_dim, logical_tensor::unknown_dim}));
}

} // namespace
} // namespace crest_test
