// Performance mode: timing, the read-bandwidth roofline and the direct
// oneDNN primitive that a ReduceMax is measured against.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "backend/kernel.hpp"

namespace benchgraph {

// Warms up, then calls f until >= 0.3 s have passed and >= 20 calls were
// made; returns the median of the single-call times in ms.
double time_median_ms(const std::function<void()> &f);

struct roofline_result {
    double ms = 0;
    double gbps = 0;
    const char *isa = "";  // "avx512f", "avx2" or "scalar"
};

// Median time of a vector max over a contiguous buffer of `bytes` bytes on
// `threads` threads (the engine's count), written once before timing.
roofline_result measure_roofline(size_t bytes, int threads);

struct onednn_result {
    bool ok = false;
    double ms = 0;
    std::string impl;  // kernel name, e.g. "dnnl:jit:uni"
    std::string why;   // why there is none
};

// The same reduction as a directly called oneDNN primitive on `threads`
// threads, timed like the crest partition.
onednn_result time_onednn_reduce(const crest::impl::reduce_problem &p,
        const void *src, void *dst, int threads);

} // namespace benchgraph
