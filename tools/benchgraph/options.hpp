// benchgraph's per-case settings, the parsing of option words and the
// __REPRO string that reproduces a case.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace benchgraph {

// Settings that apply to the next --case and persist until --reset (mode,
// backend and threads survive --reset: they describe the run).
struct settings {
    char mode = 'C';              // C, P, L or I
    std::string dt;               // "", "bf16" or "0:bf16+1:f32"
    std::string in_shapes;        // "0:2x3*ba+1:4"
    std::string op_attrs;         // "0:axes:1x2*keep_dims:0"
    std::string input_values;     // "1:2x3" (values of s32 inputs)
    int64_t expected_n_partitions = 1;
    int64_t mb = 0;               // 0: keep
    bool nan = false;
    bool negative = false;        // every float input value -|x|
    std::string backend = "any";  // any, ref, jit, dnnl
    int threads = 0;              // 0: every core
    std::string fpmath;           // "": as the file says; strict or any
    uint64_t seed = 0;            // 0: the default stream
    bool expect_error = false;
};

// Options that are global to the run (not reset by --reset).
struct globals {
    int verbose = 0;
    std::string csv;
    // Mode P: time the direct oneDNN primitive too. Off (--onednn=0) for
    // A/Bs of crest builds, where oneDNN's reference loop took most of a
    // run (16-bit sweeps: 25 of 27 minutes).
    bool onednn = true;
};

// Thrown for a bad word on the command line or in a batch file.
struct usage_error {
    std::string message;
};

// Applies one option word to s / g. Returns false when the word is not a
// settings option (--case, --batch are handled by the caller). Throws
// usage_error for a known option with a bad value.
bool parse_option(const std::string &word, settings &s, globals &g);

// "--mode=C --graph [non-default options] --case=FILE", options in a fixed
// order so that the string is stable.
std::string repro(const settings &s, const std::string &case_name);

// The words of a batch file: whitespace separated, '#' to end of line is a
// comment.
std::vector<std::string> read_batch_words(const std::string &path);

// Finds a case or batch file: absolute as is; relative against base_dir
// (the batch file's folder, empty on the command line), then the current
// folder, then the inputs folder. Returns "" when none exists.
std::string resolve_path(const std::string &name, const std::string &base_dir);

const char *help_text();

// Splits s at every occurrence of sep (empty pieces kept).
std::vector<std::string> split(const std::string &s, char sep);

} // namespace benchgraph
