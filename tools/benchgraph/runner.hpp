// One case: read, rewrite, build, partition, compile, fill, execute, compare
// or time.
#pragma once

#include <cstdint>
#include <string>

#include "tools/benchgraph/options.hpp"

namespace benchgraph {

enum class outcome {
    passed,
    failed,
    unimplemented,
    invalid_arguments,
    listed,
    skipped,
    mistrusted,
};

struct perf_figures {
    double time_ms = 0;
    int64_t bytes = 0;
    double gbps = 0;
    double roofline_gbps = 0;
    bool has_onednn = false;
    double onednn_ms = 0;
    std::string onednn_impl;
    std::string kernel;
    // The process's threads waited for a CPU this % of the timed wall time
    // (the worst of the figures; -1 unknown); quiet: every figure comes from
    // blocks without such waits.
    double cpu_wait_pct = -1;
    bool quiet = true;
};

struct case_result {
    outcome st = outcome::passed;
    std::string message;  // the reason of a non-passed outcome
    bool has_perf = false;
    perf_figures perf;
};

// Never throws: every failure becomes an outcome with a message. Verbose
// output (-v1, -v2) goes to stdout before the caller prints the status line.
case_result run_case(const std::string &path, const settings &s,
        const globals &g);

} // namespace benchgraph
