// Reading and writing graph files (src/json): the shared case files, round
// trips, and the error message of every kind of malformed file.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "crest/crest.hpp"
#include "src/json/graph_json.hpp"
#include "tests/case_files.hpp"

namespace crest {
namespace json {
namespace {

using lt = logical_tensor;
using nlohmann::json;

using test::find_case_file;  // benchdnn_inputs/graph, then shared/cases

std::string slurp(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

#define CASE_OR_SKIP(var, name) \
    const std::string var = find_case_file(name); \
    if (var.empty()) GTEST_SKIP() << "case file " name " not found in " \
                                     "benchdnn_inputs/graph or shared/cases"

const char *case_names[] = {"reducemax.json", "max.json",
        "reduction_post_ops_max_chain_fusion.json"};

void expect_same_tensor(const lt &a, const lt &b, const std::string &where) {
    SCOPED_TRACE(where);
    EXPECT_EQ(a.get_id(), b.get_id());
    EXPECT_EQ(a.get_data_type(), b.get_data_type());
    EXPECT_EQ(a.get_ndims(), b.get_ndims());
    EXPECT_EQ(a.get_dims(), b.get_dims());
    EXPECT_EQ(a.get_strides(), b.get_strides());
    EXPECT_EQ(a.get_layout_type(), b.get_layout_type());
    EXPECT_EQ(a.get_property_type(), b.get_property_type());
}

void expect_same_record(const graph_record &a, const graph_record &b) {
    EXPECT_EQ(a.version, b.version);
    EXPECT_EQ(a.engine_kind, b.engine_kind);
    EXPECT_EQ(a.fpmath, b.fpmath);
    ASSERT_EQ(a.ops.size(), b.ops.size());
    for (size_t i = 0; i < a.ops.size(); ++i) {
        const op &x = a.ops[i], &y = b.ops[i];
        SCOPED_TRACE("op " + std::to_string(i));
        EXPECT_EQ(x.get_id(), y.get_id());
        EXPECT_EQ(x.get_kind(), y.get_kind());
        EXPECT_EQ(x.get_kind_name(), y.get_kind_name());
        EXPECT_EQ(x.get_name(), y.get_name());
        EXPECT_EQ(x.get_attrs(), y.get_attrs());
        ASSERT_EQ(x.get_inputs().size(), y.get_inputs().size());
        for (size_t j = 0; j < x.get_inputs().size(); ++j)
            expect_same_tensor(x.get_inputs()[j], y.get_inputs()[j], "input");
        ASSERT_EQ(x.get_outputs().size(), y.get_outputs().size());
        for (size_t j = 0; j < x.get_outputs().size(); ++j)
            expect_same_tensor(x.get_outputs()[j], y.get_outputs()[j], "output");
    }
}

TEST(JsonRead, ReduceMaxFields) {
    CASE_OR_SKIP(path, "reducemax.json");
    const graph_record g = read_graph_file(path);
    EXPECT_EQ(g.version, "3.0.0");
    EXPECT_EQ(g.engine_kind, engine::kind::cpu);
    EXPECT_EQ(g.fpmath, fpmath_mode::strict);
    ASSERT_EQ(g.ops.size(), 1u);
    const op &o = g.ops[0];
    EXPECT_EQ(o.get_id(), 0u);
    EXPECT_EQ(o.get_name(), "REDUCTION_0");
    EXPECT_EQ(o.get_kind(), op::kind::ReduceMax);
    EXPECT_EQ(o.get_kind_name(), "ReduceMax");
    ASSERT_EQ(o.get_attrs().size(), 2u);
    EXPECT_EQ(o.get_attrs().at("axes"), attribute_value(std::vector<int64_t> {1}));
    EXPECT_EQ(o.get_attrs().at("keep_dims"), attribute_value(true));
    ASSERT_EQ(o.get_inputs().size(), 1u);
    ASSERT_EQ(o.get_outputs().size(), 1u);
    const lt &in = o.get_inputs()[0], &out = o.get_outputs()[0];
    EXPECT_EQ(in.get_id(), 0u);
    EXPECT_EQ(in.get_data_type(), lt::data_type::f32);
    EXPECT_EQ(in.get_dims(), (lt::dims {1, 128, 150, 150}));
    EXPECT_EQ(in.get_strides(), (lt::dims {2880000, 22500, 150, 1}));
    EXPECT_EQ(in.get_layout_type(), lt::layout_type::strided);
    EXPECT_EQ(in.get_property_type(), lt::property_type::undef);
    EXPECT_EQ(out.get_id(), 1u);
    EXPECT_EQ(out.get_dims(), (lt::dims {1, 1, 150, 150}));
    EXPECT_EQ(out.get_strides(), (lt::dims {22500, 22500, 150, 1}));
}

TEST(JsonRead, MaxFields) {
    CASE_OR_SKIP(path, "max.json");
    const graph_record g = read_graph_file(path);
    ASSERT_EQ(g.ops.size(), 1u);
    const op &o = g.ops[0];
    EXPECT_EQ(o.get_kind(), op::kind::Maximum);
    EXPECT_EQ(o.get_name(), "BINARY_0");
    EXPECT_EQ(o.get_attrs().at("auto_broadcast"), attribute_value(std::string("numpy")));
    ASSERT_EQ(o.get_inputs().size(), 2u);
    EXPECT_EQ(o.get_inputs()[1].get_dims(), (lt::dims {1, 1, 1, 1}));
    EXPECT_EQ(o.get_inputs()[1].get_strides(), (lt::dims {1, 1, 1, 1}));
    EXPECT_EQ(o.get_outputs()[0].get_id(), 2u);
}

TEST(JsonRead, ChainFields) {
    CASE_OR_SKIP(path, "reduction_post_ops_max_chain_fusion.json");
    const graph_record g = read_graph_file(path);
    ASSERT_EQ(g.ops.size(), 4u);
    const size_t ids[] = {11, 2049, 4097, 6145};
    const op::kind kinds[] = {op::kind::ReduceMax, op::kind::Divide, op::kind::Add,
            op::kind::Multiply};
    for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(g.ops[i].get_id(), ids[i]);
        EXPECT_EQ(g.ops[i].get_kind(), kinds[i]);
    }
    EXPECT_EQ(g.ops[0].get_attrs().at("axes"), attribute_value(std::vector<int64_t> {2, 3}));
    // Channels-last input strides are kept as written.
    EXPECT_EQ(g.ops[0].get_inputs()[0].get_strides(), (lt::dims {980, 1, 140, 20}));
    // The edges: each op's output feeds the next.
    EXPECT_EQ(g.ops[0].get_outputs()[0].get_id(), g.ops[1].get_inputs()[0].get_id());
    EXPECT_EQ(g.ops[1].get_outputs()[0].get_id(), g.ops[2].get_inputs()[0].get_id());
    EXPECT_EQ(g.ops[2].get_outputs()[0].get_id(), g.ops[3].get_inputs()[0].get_id());
    EXPECT_EQ(g.ops[3].get_outputs()[0].get_id(), 6305u);
}

TEST(JsonWrite, CaseFilesAreWrittenBackByteForByte) {
    for (const char *name : case_names) {
        const std::string path = find_case_file(name);
        if (path.empty()) GTEST_SKIP() << name << " not found";
        SCOPED_TRACE(name);
        EXPECT_EQ(write_graph(read_graph_file(path)), slurp(path));
    }
}

TEST(JsonWrite, CaseFilesRoundTrip) {
    for (const char *name : case_names) {
        const std::string path = find_case_file(name);
        if (path.empty()) GTEST_SKIP() << name << " not found";
        SCOPED_TRACE(name);
        const graph_record a = read_graph_file(path);
        const graph_record b = parse_graph(write_graph(a), "written.json");
        expect_same_record(a, b);
    }
}

// Everything the format can say, and crest's unknown-rank extension.
graph_record everything_record() {
    graph_record g;
    g.engine_kind = engine::kind::gpu;
    g.fpmath = fpmath_mode::bf16;
    op a(7, op::kind::Clamp, "clamp \"quoted\" \xc3\xa9");
    a.set_attr("min", attribute_value(0.1f));
    a.set_attr("max", attribute_value(-3.4e38f));
    a.set_attr("some_s64", attribute_value(int64_t(-9223372036854775807LL - 1)));
    a.set_attr("some_f32s", attribute_value(std::vector<float> {1.f, 1e-30f, -0.f}));
    a.set_attr("some_s64s", attribute_value(std::vector<int64_t> {}));
    a.set_attr("flag", attribute_value(false));
    a.set_attr("mode", attribute_value(std::string("")));
    a.add_input(lt(1, lt::data_type::bf16, lt::dims {-1, 3, 0}, lt::layout_type::any,
            lt::property_type::constant));
    a.add_input(lt(2, lt::data_type::s8, lt::dims {}, lt::dims {}));
    a.add_input(lt(3, lt::data_type::u8, lt::unknown_ndims, lt::layout_type::any));
    a.add_output(lt(4, lt::data_type::boolean, lt::dims {2, 3}, lt::dims {1, 2},
            lt::property_type::variable));
    g.ops.push_back(a);
    op b(18446744073709551615ull, std::string("SomeFutureOp"), "");
    b.add_output(lt(5, lt::data_type::s64, lt::dims {4611686018427387904LL},
            lt::layout_type::undef));
    b.add_output(lt(6, lt::data_type::f64, lt::dims {1}, lt::layout_type::strided));
    g.ops.push_back(b);
    return g;
}

TEST(JsonWrite, EverythingRoundTrips) {
    const graph_record a = everything_record();
    const std::string text = write_graph(a);
    const graph_record b = parse_graph(text, "everything.json");
    expect_same_record(a, b);
    // And writing again gives the same text.
    EXPECT_EQ(write_graph(b), text);
    // Floats are written as their shortest decimal.
    EXPECT_NE(text.find("\"value\": 0.1\n"), std::string::npos) << text;
}

TEST(JsonRead, UnknownKindIsKeptByName) {
    const std::string text = R"({"version": "3.0.0", "graph": [
        {"id": 3, "name": "x", "kind": "Convolution", "attrs": {"strides":
            {"type": "s64[]", "value": [1, 1]}}, "inputs": [], "outputs": []}]})";
    const graph_record g = parse_graph(text, "conv.json");
    ASSERT_EQ(g.ops.size(), 1u);
    EXPECT_EQ(g.ops[0].get_kind(), op::kind::Unknown);
    EXPECT_EQ(g.ops[0].get_kind_name(), "Convolution");
    EXPECT_NE(write_graph(g).find("\"kind\": \"Convolution\""), std::string::npos);
}

TEST(JsonRead, DefaultsAndLenientValues) {
    // engine_kind, fpmath_mode, name, attrs, stride, layout_type and
    // property_type may be left out; bool may be true/false; unknown keys
    // are ignored.
    const std::string text = R"({"version": "3.1", "extra": [1, {"x": null}],
        "graph": [{"id": 0, "kind": "ReduceMax", "comment": "hi",
            "attrs": {"keep_dims": {"type": "bool", "value": false, "doc": 1},
                      "axes": {"type": "s64[]", "value": [-1]}},
            "inputs": [{"id": 0, "dtype": "f16", "shape": [2, 3]}],
            "outputs": [{"id": 1, "dtype": "f16", "shape": [2], "stride": [5, 1],
                         "layout_type": "strided"}]}]})";
    const graph_record g = parse_graph(text, "lenient.json");
    EXPECT_EQ(g.version, "3.1");
    EXPECT_EQ(g.engine_kind, engine::kind::cpu);
    EXPECT_EQ(g.fpmath, fpmath_mode::strict);
    ASSERT_EQ(g.ops.size(), 1u);
    EXPECT_EQ(g.ops[0].get_name(), "");
    EXPECT_EQ(g.ops[0].get_attrs().at("keep_dims"), attribute_value(false));
    const lt &in = g.ops[0].get_inputs()[0];
    EXPECT_EQ(in.get_layout_type(), lt::layout_type::strided);
    EXPECT_EQ(in.get_strides(), (lt::dims {3, 1}));  // dense, from the core
    // A stride of the wrong length is not used.
    const lt &out = g.ops[0].get_outputs()[0];
    EXPECT_EQ(out.get_dims(), (lt::dims {2}));
    EXPECT_EQ(out.get_strides(), (lt::dims {1}));
}

// ---- malformed files ----

struct bad_case {
    const char *what;
    std::string text;
    std::vector<std::string> expect;  // substrings of the message
};

std::string with(const std::string &base, const std::string &pointer, const json &v) {
    json j = json::parse(base);
    j[json::json_pointer(pointer)] = v;
    return j.dump(2);
}

std::string without(const std::string &base, const std::string &pointer) {
    json j = json::parse(base);
    const json::json_pointer p(pointer);
    j[p.parent_pointer()].erase(p.back());
    return j.dump(2);
}

TEST(JsonErrors, EachMalformedShapeNamesFileAndPath) {
    CASE_OR_SKIP(path, "reducemax.json");
    const std::string base = slurp(path);
    const std::string in0 = "/graph/0/inputs/0";
    const std::vector<bad_case> cases = {
            {"truncated", base.substr(0, 200), {"parse error at byte 200", "line "}},
            {"empty", "", {"parse error at byte"}},
            {"trailing garbage", base + "}", {"parse error at byte"}},
            {"bad utf-8", "{\"version\": \"\xff\"}", {"parse error"}},
            {"number overflow", "{\"version\": \"3.0.0\", \"graph\": [1e999]}",
                    {"reducemax.json: cannot parse: number overflow"}},
            {"root not object", "[1, 2]", {"(root): expected an object, got array"}},
            {"graph not array", with(base, "/graph", "x"),
                    {"graph: expected an array, got string \"x\""}},
            {"op not object", with(base, "/graph/0", 5),
                    {"graph[0]: expected an object, got integer 5"}},
            {"op id string", with(base, "/graph/0/id", "0"),
                    {"graph[0].id: expected an integer id, got string \"0\""}},
            {"op id negative", with(base, "/graph/0/id", -1),
                    {"graph[0].id: expected a non-negative integer id"}},
            {"dim string", with(base, in0 + "/shape/2", "x"),
                    {"reducemax.json: graph[0].inputs[0].shape[2]: expected an "
                     "integer, got string \"x\""}},
            {"dim fraction", with(base, in0 + "/shape/1", 1.5),
                    {"graph[0].inputs[0].shape[1]: expected an integer, got number 1.5"}},
            {"dim past int64", with(base, in0 + "/shape/0", 18446744073709551615ull),
                    {"graph[0].inputs[0].shape[0]: expected an integer in the int64 range"}},
            {"dim float huge", with(base, in0 + "/shape/0", 1e30),
                    {"graph[0].inputs[0].shape[0]: expected an integer"}},
            {"dim null", with(base, "/graph/0/outputs/0/shape/3", nullptr),
                    {"graph[0].outputs[0].shape[3]: expected an integer, got null"}},
            {"shape object", with(base, in0 + "/shape", json::object()),
                    {"graph[0].inputs[0].shape: expected an array, got object"}},
            {"stride bool", with(base, in0 + "/stride/0", true),
                    {"graph[0].inputs[0].stride[0]: expected an integer, got boolean true"}},
            {"tensor not object", with(base, in0, json::array()),
                    {"graph[0].inputs[0]: expected an object, got array"}},
            {"inputs not array", with(base, "/graph/0/inputs", 1),
                    {"graph[0].inputs: expected an array"}},
            {"missing graph", without(base, "/graph"), {"(root): missing required key \"graph\""}},
            {"missing version", without(base, "/version"), {"missing required key \"version\""}},
            {"missing kind", without(base, "/graph/0/kind"),
                    {"graph[0]: missing required key \"kind\""}},
            {"missing outputs", without(base, "/graph/0/outputs"),
                    {"graph[0]: missing required key \"outputs\""}},
            {"missing dtype", without(base, in0 + "/dtype"),
                    {"graph[0].inputs[0]: missing required key \"dtype\""}},
            {"missing shape", without(base, "/graph/0/outputs/0/shape"),
                    {"graph[0].outputs[0]: missing required key \"shape\""}},
            {"missing tensor id", without(base, in0 + "/id"),
                    {"graph[0].inputs[0]: missing required key \"id\""}},
            {"missing attr value", without(base, "/graph/0/attrs/axes/value"),
                    {"graph[0].attrs.axes: missing required key \"value\""}},
            {"bad dtype", with(base, in0 + "/dtype", "f33"),
                    {"graph[0].inputs[0].dtype: expected one of \"f32\"", "got string \"f33\""}},
            {"dtype number", with(base, in0 + "/dtype", 3),
                    {"graph[0].inputs[0].dtype: expected one of", "got integer 3"}},
            {"bad layout", with(base, in0 + "/layout_type", "blocked"),
                    {"graph[0].inputs[0].layout_type: expected one of \"strided\""}},
            {"bad property", with(base, "/graph/0/outputs/0/property_type", "const"),
                    {"graph[0].outputs[0].property_type: expected one of"}},
            {"bad engine", with(base, "/engine_kind", "tpu"), {"engine_kind: expected one of"}},
            {"bad fpmath", with(base, "/fpmath_mode", 1), {"fpmath_mode: expected one of"}},
            {"bad version", with(base, "/version", "2.0.0"),
                    {"version: expected a version 3.x.y, got string \"2.0.0\""}},
            {"name number", with(base, "/graph/0/name", 1),
                    {"graph[0].name: expected a string, got integer 1"}},
            {"attrs array", with(base, "/graph/0/attrs", json::array()),
                    {"graph[0].attrs: expected an object, got array"}},
            {"bad attr type", with(base, "/graph/0/attrs/axes/type", "s32[]"),
                    {"graph[0].attrs.axes.type: expected one of \"s64\", \"s64[]\"",
                     "got string \"s32[]\""}},
            {"attr type number", with(base, "/graph/0/attrs/axes/type", 1),
                    {"graph[0].attrs.axes.type: expected one of"}},
            {"s64[] given scalar", with(base, "/graph/0/attrs/axes/value", 1),
                    {"graph[0].attrs.axes.value: expected an array, got integer 1"}},
            {"s64[] element float", with(base, "/graph/0/attrs/axes/value/0", 0.5),
                    {"graph[0].attrs.axes.value[0]: expected an integer, got number 0.5"}},
            {"bool value 2", with(base, "/graph/0/attrs/keep_dims/value", 2),
                    {"graph[0].attrs.keep_dims.value: expected a bool", "got integer 2"}},
            {"bool value string", with(base, "/graph/0/attrs/keep_dims/value", "true"),
                    {"graph[0].attrs.keep_dims.value: expected a bool"}},
            {"s64 value float", with(base, "/graph/0/attrs/keep_dims",
                                        json {{"type", "s64"}, {"value", 2.5}}),
                    {"graph[0].attrs.keep_dims.value: expected an integer, got number 2.5"}},
            {"f32 value string", with(base, "/graph/0/attrs/keep_dims",
                                        json {{"type", "f32"}, {"value", "1"}}),
                    {"graph[0].attrs.keep_dims.value: expected an f32 number"}},
            {"f32 out of range", with(base, "/graph/0/attrs/keep_dims",
                                        json {{"type", "f32"}, {"value", 1e39}}),
                    {"graph[0].attrs.keep_dims.value: expected a number in the f32 range"}},
            {"f32[] element null", with(base, "/graph/0/attrs/keep_dims",
                                          json {{"type", "f32[]"}, {"value", {1, nullptr}}}),
                    {"graph[0].attrs.keep_dims.value[1]: expected an f32 number, got null"}},
            {"string value number", with(base, "/graph/0/attrs/keep_dims",
                                           json {{"type", "string"}, {"value", 5}}),
                    {"graph[0].attrs.keep_dims.value: expected a string, got integer 5"}},
            {"deep nesting", std::string(100000, '['), {"parse error"}},
            {"deep nesting in a dim",
                    with(base, in0 + "/shape/0",
                            json::parse(std::string(1000, '[') + std::string(1000, ']'))),
                    {"graph[0].inputs[0].shape[0]: expected an integer, got array of 1"}},
    };
    for (const auto &c : cases) {
        SCOPED_TRACE(c.what);
        try {
            parse_graph(c.text, "reducemax.json");
            ADD_FAILURE() << "no error for: " << c.text.substr(0, 300);
        } catch (const error &e) {
            EXPECT_EQ(e.get_status(), status::invalid_arguments);
            const std::string msg = e.what();
            EXPECT_EQ(msg.rfind("reducemax.json: ", 0), 0u) << msg;
            for (const auto &s : c.expect)
                EXPECT_NE(msg.find(s), std::string::npos) << "message: " << msg
                                                          << "\nmissing: " << s;
        }
    }
}

TEST(JsonErrors, LongStringValuesAreShortenedInMessages) {
    const std::string text = "{\"version\": \"" + std::string(5000, 'v') + "\"}";
    try {
        parse_graph(text, "long.json");
        FAIL() << "no error";
    } catch (const error &e) {
        EXPECT_LT(std::string(e.what()).size(), 200u) << e.what();
    }
}

TEST(JsonErrors, FileErrors) {
    try {
        read_graph_file("/nonexistent/x.json");
        FAIL() << "no error";
    } catch (const error &e) {
        EXPECT_EQ(e.get_status(), status::invalid_arguments);
        EXPECT_EQ(std::string(e.what()),
                "/nonexistent/x.json: cannot open: No such file or directory");
    }
    try {
        read_graph_file("/");
        FAIL() << "no error";
    } catch (const error &e) {
        EXPECT_EQ(e.get_status(), status::invalid_arguments);
        EXPECT_NE(std::string(e.what()).find("/: cannot"), std::string::npos) << e.what();
    }
    EXPECT_THROW(write_graph_file(graph_record(), "/nonexistent/dir/y.json"), error);
}

TEST(JsonWrite, FileRoundTrip) {
    const std::string path = ::testing::TempDir() + "crest_json_test_everything.json";
    const graph_record a = everything_record();
    write_graph_file(a, path);
    expect_same_record(a, read_graph_file(path));
    std::remove(path.c_str());
}

// ---- with the core: build, finalize, partitions ----

TEST(JsonGraph, BuildFinalizeAndDumpPartitions) {
    for (const char *name : case_names) {
        const std::string path = find_case_file(name);
        if (path.empty()) GTEST_SKIP() << name << " not found";
        SCOPED_TRACE(name);
        const graph_record rec = read_graph_file(path);
        graph g = build_graph(rec);
        EXPECT_FALSE(g.is_finalized());
        EXPECT_EQ(g.get_ops().size(), rec.ops.size());
        g.finalize();
        const std::vector<partition> parts = g.get_partitions();
        size_t nops = 0;
        for (const partition &p : parts) {
            const graph_record sub = partition_record(rec, p);
            ASSERT_EQ(sub.ops.size(), p.get_ops_num());
            nops += sub.ops.size();
            // A partition dump loads back and builds a graph of its own.
            const graph_record again = parse_graph(write_graph(sub), "partition.json");
            expect_same_record(sub, again);
            graph sg = build_graph(again);
            sg.finalize();
            EXPECT_FALSE(sg.get_partitions().empty());
        }
        EXPECT_EQ(nops, rec.ops.size());
    }
}

TEST(JsonGraph, UnknownKindBecomesUnsupportedPartition) {
    const std::string text = R"({"version": "3.0.0", "engine_kind": "cpu", "graph": [
        {"id": 5, "name": "conv", "kind": "Convolution", "attrs": {},
         "inputs": [{"id": 0, "dtype": "f32", "shape": [1, 2], "stride": [2, 1],
                     "layout_type": "strided", "property_type": "undef"}],
         "outputs": [{"id": 1, "dtype": "f32", "shape": [1, 2], "stride": [2, 1],
                      "layout_type": "strided", "property_type": "undef"}]}]})";
    const graph_record rec = parse_graph(text, "conv.json");
    graph g = build_graph(rec);
    g.finalize();
    const auto parts = g.get_partitions();
    ASSERT_EQ(parts.size(), 1u);
    EXPECT_FALSE(parts[0].is_supported());
    EXPECT_EQ(parts[0].get_ops(), std::vector<size_t> {5});
    const graph_record sub = partition_record(rec, parts[0]);
    ASSERT_EQ(sub.ops.size(), 1u);
    EXPECT_EQ(sub.ops[0].get_kind_name(), "Convolution");
}

TEST(JsonGraph, BuildKeepsEngineAndFpmath) {
    graph_record rec;
    rec.fpmath = fpmath_mode::bf16;
    graph g = build_graph(rec);
    EXPECT_EQ(g.get_engine_kind(), engine::kind::cpu);
    EXPECT_EQ(g.get_fpmath_mode(), fpmath_mode::bf16);
}

} // namespace
} // namespace json
} // namespace crest
