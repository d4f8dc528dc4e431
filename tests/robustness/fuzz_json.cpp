// libFuzzer entry point for the JSON reader and the graph front end. Not part
// of the default build. To build and run it from the repo root:
//
//   CXX=clang++ cmake -S . -B build-fuzz -DCREST_SANITIZE="address;undefined"
//   cmake --build build-fuzz -j2 --target crest
//   clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined
//       -Iinclude -I. tests/robustness/fuzz_json.cpp
//       -Lbuild-fuzz -lcrest -Wl,-rpath,$PWD/build-fuzz -o fuzz_json
//       (one command)
//   ./fuzz_json -max_len=16384 -timeout=10 corpus/ benchdnn_inputs/graph/
//
// (benchdnn_inputs/graph or shared/cases make a good seed corpus.) Anything
// but success or crest::error is a bug: libFuzzer reports the uncaught
// exception, crash, leak or timeout with the input that caused it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "crest/crest.hpp"
#include "src/json/graph_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    try {
        const crest::json::graph_record rec = crest::json::parse_graph(text, "fuzz.json");
        crest::json::parse_graph(crest::json::write_graph(rec), "rewritten.json");
        crest::graph g = crest::json::build_graph(rec);
        g.finalize();
        for (const auto &p : g.get_partitions()) crest::json::partition_record(rec, p);
    } catch (const crest::error &) {
        // A refusal is a fine outcome; other exceptions escape and are reported.
    }
    return 0;
}
