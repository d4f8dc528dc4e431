// Every refusal of ReduceMax through the public API: the status, and a
// message naming the op (id and name), the tensor or attribute, and the bad
// value (ops.md "Errors"). Refused executions must leave dst untouched.
#include "tests/api/api_test_util.hpp"

namespace crest::api_test {
namespace {

const std::string label = "ReduceMax #3 'pool_max'";

// Refusals are the core's job, before any kernel: use the ref backend so
// that the state of the fast backends cannot blur these tests.
engine ref_engine() {
    return engine(engine::kind::cpu, 0, engine_options {1, "ref"});
}

void add_only(const reduce_graph &rg) {
    graph g(engine::kind::cpu);
    g.add_op(rg.make_op());
}

void add_and_finalize(const reduce_graph &rg) {
    graph g(engine::kind::cpu);
    g.add_op(rg.make_op());
    g.finalize();
}

TEST(ReduceMaxApiErrors, SourceTypeOutsideF32Bf16F16) {
    for (dt t : {dt::s32, dt::f64}) {
        reduce_graph rg = attr_graph(t, {2, 3}, {1}, false);
        expect_error([&] { add_only(rg); }, status::invalid_data_type,
                {label, "'src'", "id 0", to_string(t), "f32"});
    }
}

TEST(ReduceMaxApiErrors, DstTypeDiffersFromSrc) {
    reduce_graph rg = attr_graph(dt::f32, {2, 3}, {1}, false);
    rg.dst = lt(dst_id, dt::bf16, lt::unknown_ndims, ltype::any);
    expect_error([&] { add_only(rg); }, status::invalid_data_type,
            {label, "'dst'", "bf16", "f32"});
}

TEST(ReduceMaxApiErrors, AxesAttrAndInputBothOrNeither) {
    reduce_graph rg = attr_graph(dt::f32, {2, 3}, {1}, false);
    rg.axes_in = lt(axes_id, dt::s32, dims {1}, ltype::strided);
    expect_error([&] { add_only(rg); }, status::invalid_arguments,
            {label, "attr axes", "input 'axes'", "id 2"});
    rg.axes_in.reset();
    rg.axes_attr.reset();
    expect_error([&] { add_only(rg); }, status::invalid_arguments,
            {label, "axes"});
}

TEST(ReduceMaxApiErrors, AxesInputOfWrongTypeOrRank) {
    reduce_graph rg = attr_graph(dt::f32, {2, 3}, {1}, false);
    rg.axes_attr.reset();
    rg.axes_in = lt(axes_id, dt::f32, dims {1}, ltype::strided);
    expect_error([&] { add_only(rg); }, status::invalid_data_type,
            {label, "'axes'", "id 2", "f32", "s32"});
    rg.axes_in = lt(axes_id, dt::s32, {1, 2}, ltype::strided);
    expect_error([&] { add_only(rg); }, status::invalid_shape,
            {label, "'axes'", "id 2", "rank 2"});
}

TEST(ReduceMaxApiErrors, AttrAxesOfWrongType) {
    reduce_graph rg = attr_graph(dt::f32, {2, 3}, {1}, false);
    rg.axes_attr.reset();
    op r = rg.make_op();
    r.set_attr(op::attr::axes, int64_t(1)); // s64, not s64[]
    graph g(engine::kind::cpu);
    expect_error([&] { g.add_op(r); }, status::invalid_graph_op,
            {label, "axes", "s64[]"});
}

TEST(ReduceMaxApiErrors, AxisOutOfRange) {
    reduce_graph rg = attr_graph(dt::f32, {2, 3, 4, 5}, {0, 4}, false);
    expect_error([&] { add_only(rg); }, status::invalid_arguments,
            {"ReduceMax #3 'pool_max': attr axes[1] = 4 is out of range "
             "[-4, 3] for rank 4"});
    rg.axes_attr = std::vector<int64_t> {-5};
    expect_error([&] { add_only(rg); }, status::invalid_arguments,
            {label, "attr axes[0] = -5", "[-4, 3]"});
    // A rank-0 source has no axis at all.
    rg = attr_graph(dt::f32, {}, {0}, false);
    expect_error([&] { add_only(rg); }, status::invalid_arguments,
            {label, "attr axes[0] = 0"});
}

TEST(ReduceMaxApiErrors, RepeatedAxis) {
    reduce_graph rg = attr_graph(dt::f32, {2, 3, 4, 5}, {2, 2}, false);
    expect_error([&] { add_only(rg); }, status::invalid_arguments,
            {label, "attr axes[1] = 2", "axis 2"});
    // The same axis named once positive, once negative.
    rg.axes_attr = std::vector<int64_t> {1, -3};
    expect_error([&] { add_only(rg); }, status::invalid_arguments,
            {label, "attr axes[1] = -3", "axis 1"});
}

TEST(ReduceMaxApiErrors, OutputShapeDisagreesWithInference) {
    // At finalize: the graph's dst.
    reduce_graph rg = attr_graph(dt::f32, {2, 3, 4}, {1}, false);
    rg.dst = lt(dst_id, dt::f32, {2, 3}, ltype::any);
    expect_error([&] { add_and_finalize(rg); }, status::invalid_shape,
            {label, "'dst'", "id 1", "[2,3]", "[2,4]"});
    // keep_dims changes the expected rank.
    rg.dst = lt(dst_id, dt::f32, {2, 4}, ltype::any);
    rg.keep_dims = true;
    expect_error([&] { add_and_finalize(rg); }, status::invalid_shape,
            {label, "'dst'", "[2,4]", "[2,1,4]"});
    // At compile: the dst given to compile.
    rg = attr_graph(dt::f32, {2, 3, 4}, {1}, false);
    graph g(engine::kind::cpu);
    partition p = rg.build(g);
    const lt bad(dst_id, dt::f32, {2, 3}, ltype::any);
    expect_error([&] { p.compile({rg.src}, {bad}, ref_engine()); },
            status::invalid_shape, {label, "dst", "id 1", "[2,3]", "[2,4]"});
}

TEST(ReduceMaxApiErrors, NegativeOrOverflowingDims) {
    reduce_graph rg = attr_graph(dt::f32, {2, -3}, {1}, false);
    expect_error([&] { add_only(rg); }, status::invalid_shape,
            {label, "'src'", "id 0", "-3"});
    const int64_t big = int64_t(1) << 40;
    rg = attr_graph(dt::f32, {big, big}, {1}, false);
    expect_error([&] { add_only(rg); }, status::invalid_shape,
            {label, "'src'", "id 0", std::to_string(big), "overflow"});
    rg = attr_graph(dt::f32, dims(13, 1), {1}, false);
    expect_error([&] { add_only(rg); }, status::invalid_shape,
            {label, "'src'", "rank 13", "12"});
}

TEST(ReduceMaxApiErrors, NegativeOrOverflowingDimsAtCompile) {
    // The graph leaves src's dims unknown; compile gets the bad ones.
    reduce_graph rg = attr_graph(dt::f32, {2, 3}, {1}, false);
    rg.src = lt(src_id, dt::f32, 2, ltype::any);
    graph g(engine::kind::cpu);
    partition p = rg.build(g);
    const int64_t big = int64_t(1) << 40;
    expect_error([&] {
        p.compile({lt(src_id, dt::f32, {big, big}, ltype::strided)},
                {rg.dst}, ref_engine());
    }, status::invalid_shape, {label, "id 0", std::to_string(big)});
    expect_error([&] {
        p.compile({lt(src_id, dt::f32, {2, -3}, ltype::strided)}, {rg.dst},
                ref_engine());
    }, status::invalid_shape, {label, "id 0", "-3"});
}

TEST(ReduceMaxApiErrors, TwoOpsWriteTheSameTensor) {
    graph g(engine::kind::cpu);
    reduce_graph rg = attr_graph(dt::f32, {2, 3}, {1}, false);
    g.add_op(rg.make_op());
    op other(4, op::kind::ReduceMax, {rg.src}, {rg.dst}, "other");
    other.set_attr(op::attr::axes, std::vector<int64_t> {0});
    g.add_op(other);
    expect_error([&] { g.finalize(); }, status::invalid_graph,
            {"tensor id 1", label, "ReduceMax #4 'other'"});
}

TEST(ReduceMaxApiErrors, Cycle) {
    graph g(engine::kind::cpu);
    const lt a(0, dt::f32, {2, 3}, ltype::strided);
    const lt b(1, dt::f32, {2, 3}, ltype::strided);
    op there(3, op::kind::ReduceMax, {a}, {b}, "pool_max");
    there.set_attr(op::attr::axes, std::vector<int64_t> {});
    op back(4, op::kind::ReduceMax, {b}, {a}, "back");
    back.set_attr(op::attr::axes, std::vector<int64_t> {});
    g.add_op(there);
    g.add_op(back);
    expect_error([&] { g.finalize(); }, status::invalid_graph,
            {"cycle", label, "ReduceMax #4 'back'"});
}

// Fixture for refusals at execute: a compiled f32 {2,3,4} -> {2,4}.
class ReduceMaxExecErrors : public ::testing::Test {
protected:
    engine eng = ref_engine();
    stream strm {eng};
    std::vector<float> src = std::vector<float>(24, 1.f);
    guarded out {dt::f32, 8};

    void expect_untouched() {
        for (int64_t i = -guard_elems; i < 8 + guard_elems; ++i)
            EXPECT_TRUE(out.untouched(i)) << "dst offset " << i << " written";
    }
};

TEST_F(ReduceMaxExecErrors, TensorShapeDiffersFromCompiled) {
    compiled_partition cp = attr_graph(dt::f32, {2, 3, 4}, {1}, false).compile(eng);
    const lt dst = cp.query_logical_tensor(dst_id);
    const lt other_src(src_id, dt::f32, {2, 3, 3}, ltype::strided);
    expect_error([&] {
        cp.execute(strm, {tensor(other_src, eng, src.data())},
                {tensor(dst, eng, out.data())});
    }, status::invalid_shape, {label, "id 0", "[2,3,3]", "[2,3,4]"});
    const lt other_dst(dst_id, dt::f32, {2, 1, 4}, ltype::strided);
    expect_error([&] {
        cp.execute(strm, {tensor(cp.query_logical_tensor(src_id), eng, src.data())},
                {tensor(other_dst, eng, out.data())});
    }, status::invalid_shape, {label, "id 1", "[2,1,4]", "[2,4]"});
    expect_untouched();
}

TEST_F(ReduceMaxExecErrors, NullDataHandle) {
    compiled_partition cp = attr_graph(dt::f32, {2, 3, 4}, {1}, false).compile(eng);
    const lt s = cp.query_logical_tensor(src_id);
    const lt d = cp.query_logical_tensor(dst_id);
    expect_error([&] {
        cp.execute(strm, {tensor(s, eng, nullptr)}, {tensor(d, eng, out.data())});
    }, status::invalid_arguments, {label, "id 0", "null"});
    expect_error([&] {
        cp.execute(strm, {tensor(s, eng, src.data())}, {tensor(d, eng, nullptr)});
    }, status::invalid_arguments, {label, "id 1", "null"});
    expect_untouched();
}

TEST_F(ReduceMaxExecErrors, AxesValuesDisagreeWithCompiledShape) {
    reduce_graph rg;
    rg.src = lt(src_id, dt::f32, {2, 3, 4}, ltype::strided);
    rg.axes_in = lt(axes_id, dt::s32, dims {2}, ltype::strided);
    rg.dst = lt(dst_id, dt::f32, dims {3}, ltype::strided);
    compiled_partition cp = rg.compile(eng);
    auto run = [&](std::vector<int32_t> axes) {
        cp.execute(strm,
                {tensor(cp.query_logical_tensor(src_id), eng, src.data()),
                        tensor(cp.query_logical_tensor(axes_id), eng, axes.data())},
                {tensor(cp.query_logical_tensor(dst_id), eng, out.data())});
    };
    // Valid axes, but they give [4], not the compiled [3].
    expect_error([&] { run({0, 1}); }, status::invalid_arguments,
            {label, "axes", "[0,1]", "[4]", "[3]"});
    expect_error([&] { run({0, 7}); }, status::invalid_arguments,
            {label, "axes[1] = 7", "[-3, 2]"});
    expect_error([&] { run({2, -1}); }, status::invalid_arguments,
            {label, "axes[1] = -1", "axis 2"});
    expect_untouched();
    // And the right values still run afterwards.
    run({0, 2});
    EXPECT_EQ(out.at(0), 0x3F800000u);
}

TEST_F(ReduceMaxExecErrors, AxesInputNeedsAKnownOutputShapeAtCompile) {
    reduce_graph rg;
    rg.src = lt(src_id, dt::f32, {2, 3, 4}, ltype::strided);
    rg.axes_in = lt(axes_id, dt::s32, dims {2}, ltype::strided);
    rg.dst = lt(dst_id, dt::f32, lt::unknown_ndims, ltype::any);
    expect_error([&] { rg.compile(eng); }, status::invalid_shape,
            {label, "'dst'", "id 1", "unknown"});
    // Two axes and no keep_dims cannot give a rank-2 dst.
    rg.dst = lt(dst_id, dt::f32, {2, 4}, ltype::strided);
    expect_error([&] { rg.compile(eng); }, status::invalid_shape,
            {label, "'dst'", "rank 2", "rank 1"});
}

} // namespace
} // namespace crest::api_test
