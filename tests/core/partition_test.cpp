// The partitioner: every op in exactly one partition, topological order,
// unsupported partitions with a reason, ports.
#include <set>

#include "graph_helpers.hpp"

namespace crest_test {
namespace {

using crest::graph;
using crest::op;
using crest::partition;
using crest::status;

TEST(Partitions, NeedFinalize) {
    graph g(crest::engine::kind::cpu);
    g.add_op(reduce(0, dense(0, {4}), unknown(1), {0}));
    expect_error([&] { g.get_partitions(); }, status::invalid_graph, {"finalize"});
}

// A mixed graph: ReduceMax -> Wildcard -> ReduceMax, an unknown kind, End.
graph mixed_graph() {
    graph g(crest::engine::kind::cpu);
    g.add_op(op(9, op::kind::End, {unknown(4)}, {}, "end"));
    g.add_op(reduce(1, dense(2, {8, 8}), unknown(3), {0}, false, "second"));
    op w(5, op::kind::Wildcard, {unknown(1)}, {dense(2, {8, 8})}, "wild");
    g.add_op(w);
    g.add_op(reduce(0, dense(0, {8, 8, 8}), unknown(1), {2}, false, "first"));
    op conv(7, "Convolution", "conv");
    conv.add_input(unknown(3));
    conv.add_output(unknown(4));
    g.add_op(conv);
    g.finalize();
    return g;
}

TEST(Partitions, EveryOpInExactlyOnePartitionInTopologicalOrder) {
    auto g = mixed_graph();
    const auto parts = g.get_partitions();
    std::vector<size_t> order;
    for (const auto &p : parts)
        for (size_t id : p.get_ops()) order.push_back(id);
    EXPECT_EQ(order, (std::vector<size_t> {0, 5, 1, 7, 9}));
    EXPECT_EQ(std::set<size_t>(order.begin(), order.end()).size(), 5u);
}

TEST(Partitions, UnsupportedOnesSayWhy) {
    auto g = mixed_graph();
    const auto parts = g.get_partitions();
    ASSERT_EQ(parts.size(), 5u);
    EXPECT_TRUE(parts[0].is_supported());
    EXPECT_TRUE(parts[0].get_unsupported_reason().empty());
    EXPECT_FALSE(parts[1].is_supported());
    EXPECT_THAT(parts[1].get_unsupported_reason(), ::testing::HasSubstr("Wildcard"));
    EXPECT_THAT(parts[3].get_unsupported_reason(),
            ::testing::HasSubstr("'Convolution' is unknown"));
    EXPECT_THAT(parts[4].get_unsupported_reason(), ::testing::HasSubstr("End"));
    crest::engine eng(crest::engine::kind::cpu, 0);
    expect_error(
            [&] { parts[1].compile(parts[1].get_input_ports(), parts[1].get_output_ports(), eng); },
            status::unimplemented, {"Wildcard"});
}

TEST(Partitions, PortsCarryInferredShapes) {
    auto g = mixed_graph();
    const auto parts = g.get_partitions();
    ASSERT_EQ(parts[0].get_input_ports().size(), 1u);
    EXPECT_EQ(parts[0].get_input_ports()[0].get_id(), 0u);
    ASSERT_EQ(parts[0].get_output_ports().size(), 1u);
    EXPECT_EQ(parts[0].get_output_ports()[0].get_dims(), (logical_tensor::dims {8, 8}));
}

TEST(Partitions, MaximumIsUnsupportedForNow) {
    graph g(crest::engine::kind::cpu);
    g.add_op(op(0, op::kind::Maximum, {dense(0, {2, 3}), dense(1, {1})}, {unknown(2)}, "mx"));
    g.finalize();
    const auto parts = g.get_partitions(partition::policy::debug);
    ASSERT_EQ(parts.size(), 1u);
    EXPECT_FALSE(parts[0].is_supported());
    EXPECT_THAT(parts[0].get_unsupported_reason(), ::testing::HasSubstr("no kernel for Maximum"));
}

TEST(Compile, LayoutAnyResolvesToDenseRowMajor) {
    graph g(crest::engine::kind::cpu);
    g.add_op(reduce(0, dense(0, {3, 4, 5}), unknown(1), {1}, true));
    g.finalize();
    const auto parts = g.get_partitions();
    crest::engine eng(crest::engine::kind::cpu, 0);
    auto cp = parts[0].compile(parts[0].get_input_ports(), parts[0].get_output_ports(), eng);
    const auto q = cp.query_logical_tensor(1);
    EXPECT_EQ(q.get_layout_type(), lt_layout::strided);
    EXPECT_EQ(q.get_dims(), (logical_tensor::dims {3, 1, 5}));
    EXPECT_EQ(q.get_strides(), (logical_tensor::dims {5, 5, 1}));
}

TEST(Compile, MissingInputPortIsRefused) {
    graph g(crest::engine::kind::cpu);
    g.add_op(reduce(0, dense(0, {3, 4}), unknown(1), {1}));
    g.finalize();
    const auto parts = g.get_partitions();
    crest::engine eng(crest::engine::kind::cpu, 0);
    expect_error([&] { parts[0].compile({dense(5, {3, 4})}, parts[0].get_output_ports(), eng); },
            status::invalid_arguments, {"port id 0"});
}

TEST(Compile, BackendFilterRefNamesTheRefKernel) {
    graph g(crest::engine::kind::cpu);
    g.add_op(reduce(0, dense(0, {3, 4}), unknown(1), {1}));
    g.finalize();
    const auto parts = g.get_partitions();
    crest::engine_options opts;
    opts.backend = "ref";
    crest::engine eng(crest::engine::kind::cpu, 0, opts);
    auto cp = parts[0].compile(parts[0].get_input_ports(), parts[0].get_output_ports(), eng);
    EXPECT_EQ(cp.get_kernel_name(), "ref:reduce_max");
}

TEST(Engine, UnknownBackendIsRefused) {
    crest::engine_options opts;
    opts.backend = "gpu-magic";
    expect_error([&] { crest::engine eng(crest::engine::kind::cpu, 0, opts); },
            status::invalid_arguments, {"gpu-magic"});
}

} // namespace
} // namespace crest_test
