// The mutations of mutate_test.cpp one at a time, with the status each must
// give: these are the reproducers when the mass test finds something.
#include <initializer_list>
#include <limits>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "crest/crest.hpp"
#include "src/json/graph_json.hpp"

namespace crest {
namespace robustness {
namespace {

using nlohmann::json;

json tensor(size_t id, const json &shape, const json &stride) {
    json t = {{"id", id}, {"dtype", "f32"}, {"shape", shape}, {"layout_type", "strided"},
            {"property_type", "undef"}};
    if (!stride.is_null()) t["stride"] = stride;
    return t;
}

json reduce_op(size_t id, const json &in, const json &out, const json &axes) {
    return {{"id", id}, {"name", "r"}, {"kind", "ReduceMax"},
            {"attrs", {{"axes", {{"type", "s64[]"}, {"value", axes}}},
                              {"keep_dims", {{"type", "bool"}, {"value", 1}}}}},
            {"inputs", json::array({in})}, {"outputs", json::array({out})}};
}

json relu_op(size_t id, const json &in, const json &out) {
    return {{"id", id}, {"name", "u"}, {"kind", "ReLU"}, {"attrs", json::object()},
            {"inputs", json::array({in})}, {"outputs", json::array({out})}};
}

// A vector, not a json: nlohmann reads {x} as a copy of x, not [x].
std::string file(const std::vector<json> &ops) {
    return json {{"version", "3.0.0"}, {"engine_kind", "cpu"}, {"fpmath_mode", "strict"},
            {"graph", json(ops)}}
            .dump(2);
}

// Runs parse, build, finalize and get_partitions; the status of the
// crest::error thrown, or success.
status run(const std::string &text, std::string *message = nullptr) {
    try {
        const auto rec = ::crest::json::parse_graph(text, "targeted.json");
        graph g = ::crest::json::build_graph(rec);
        g.finalize();
        g.get_partitions();
        return status::success;
    } catch (const error &e) {
        if (message) *message = e.what();
        return e.get_status();
    }
}

void expect_status(const std::string &text, std::initializer_list<status> allowed) {
    std::string msg;
    const status s = run(text, &msg);
    bool ok = false;
    for (status a : allowed) ok = ok || a == s;
    EXPECT_TRUE(ok) << "got " << to_string(s) << " (" << msg << ") for\n" << text;
}

const json d4 = {1, 4, 5, 5};
const json s4 = {100, 25, 5, 1};
const json d4r = {1, 1, 5, 5};
const json s4r = {25, 25, 5, 1};

TEST(Targeted, CycleOfTwoOps) {
    const json a = relu_op(1, tensor(10, d4, s4), tensor(11, d4, s4));
    const json b = relu_op(2, tensor(11, d4, s4), tensor(10, d4, s4));
    expect_status(file({a, b}), {status::invalid_graph});
}

TEST(Targeted, SelfLoop) {
    expect_status(file({relu_op(1, tensor(10, d4, s4), tensor(10, d4, s4))}),
            {status::invalid_graph});
}

TEST(Targeted, TwoProducers) {
    const json a = relu_op(1, tensor(10, d4, s4), tensor(12, d4, s4));
    const json b = relu_op(2, tensor(11, d4, s4), tensor(12, d4, s4));
    expect_status(file({a, b}), {status::invalid_graph});
}

TEST(Targeted, DuplicatedOpIds) {
    const json a = relu_op(1, tensor(10, d4, s4), tensor(11, d4, s4));
    const json b = relu_op(1, tensor(11, d4, s4), tensor(12, d4, s4));
    expect_status(file({a, b}), {status::invalid_graph});
}

TEST(Targeted, DanglingInputIsAGraphInput) {
    const json a = relu_op(1, tensor(10, d4, s4), tensor(11, d4, s4));
    const json b = relu_op(2, tensor(99, d4, s4), tensor(12, d4, s4));
    EXPECT_EQ(run(file({a, b})), status::success);
}

TEST(Targeted, AxesOutOfRange) {
    const int64_t big = int64_t(1) << 62;
    const int64_t min = std::numeric_limits<int64_t>::min();
    for (const json &axes : {json {4}, json {-5}, json {big}, json {min}, json {1, 1},
                 json {1, -3}}) {
        SCOPED_TRACE(axes.dump());
        expect_status(file({reduce_op(1, tensor(0, d4, s4), tensor(1, d4r, s4r), axes)}),
                {status::invalid_arguments});
    }
}

TEST(Targeted, HugeDims) {
    const int64_t p62 = int64_t(1) << 62, p40 = int64_t(1) << 40;
    const int64_t max = std::numeric_limits<int64_t>::max();
    for (const json &dims : {json {p62}, json {p40, p40}, json {max, 2}, json {2, max},
                 json {p62, 4}, json {p40, p40, 0}}) {
        for (bool with_stride : {true, false}) {
            SCOPED_TRACE(dims.dump() + (with_stride ? " with stride" : " without stride"));
            json stride = json::array();
            for (size_t i = 0; i < dims.size(); ++i) stride.push_back(1);
            const json t = tensor(0, dims, with_stride ? stride : json());
            const json o = tensor(1, dims, with_stride ? stride : json());
            const std::string text = file({relu_op(1, t, o)});
            std::string msg;
            const status s = run(text, &msg);
            // A zero dim makes the product fit; otherwise it overflows.
            if (dims.size() == 3) continue;
            EXPECT_EQ(s, status::invalid_shape) << msg << "\n" << text;
        }
    }
}

TEST(Targeted, NegativeDimsAndStrides) {
    expect_status(file({relu_op(1, tensor(0, {1, -5}, {5, 1}), tensor(1, {1, 5}, {5, 1}))}),
            {status::invalid_shape});
    expect_status(file({relu_op(1, tensor(0, {1, 5}, {5, -2}), tensor(1, {1, 5}, {5, 1}))}),
            {status::invalid_shape});
}

TEST(Targeted, RankAboveTwelve) {
    const json d = json(std::vector<int64_t>(13, 1));
    const json s = json(std::vector<int64_t>(13, 1));
    expect_status(file({relu_op(1, tensor(0, d, s), tensor(1, d, s))}),
            {status::invalid_shape});
}

TEST(Targeted, ShapeDisagreesWithInference) {
    const json out = tensor(1, {1, 4, 5, 6}, {120, 30, 6, 1});
    expect_status(file({reduce_op(1, tensor(0, d4, s4), out, {1})}),
            {status::invalid_shape});
}

TEST(Targeted, UnknownKindIsUnsupported) {
    json o = relu_op(1, tensor(0, d4, s4), tensor(1, d4, s4));
    o["kind"] = "Convolution";
    const auto rec = ::crest::json::parse_graph(file({o}), "targeted.json");
    graph g = ::crest::json::build_graph(rec);
    g.finalize();
    const auto parts = g.get_partitions();
    ASSERT_EQ(parts.size(), 1u);
    EXPECT_FALSE(parts[0].is_supported());
}

} // namespace
} // namespace robustness
} // namespace crest
