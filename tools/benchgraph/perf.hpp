// Performance mode: fair timing of several candidates, the read-bandwidth
// roofline and the direct oneDNN primitive that a ReduceMax is measured
// against. doc/benchgraph.md ("Mode P figures") states the timing rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/kernel.hpp"
#include "src/threading.hpp"
#include "tools/benchgraph/data.hpp"

namespace benchgraph {

// One timed figure.
struct timing {
    double ms = 0;            // median of the kept single-call times
    int64_t calls = 0;        // single calls kept
    int blocks = 0;           // blocks run
    int clean_blocks = 0;     // blocks during which no thread waited for a CPU
    int kept_blocks = 0;      // blocks whose calls make the median
    // Time the process's threads spent runnable but waiting for a CPU, as a
    // percentage of the kept blocks' wall time (summed over threads, so it
    // can exceed 100). -1: the kernel does not report it.
    double cpu_wait_pct = -1;
    bool clean() const { return kept_blocks == clean_blocks && clean_blocks > 0; }
};

// Times each of fs (warmed up first) in interleaved blocks, so that every
// candidate sees the same machine: round after round, one block of calls of
// each, each block started once the other threads of the process are asleep
// (an OpenMP team spins for milliseconds after its last region). A block is
// clean when the process's threads waited for a CPU (another process held
// it) for under 2% of its wall time; the figure is the median of the calls
// of clean blocks, or, on a machine that never stays quiet, of the least
// disturbed half of the blocks. Rounds go on until every candidate has >= 20
// calls and >= 0.3 s in >= 3 clean blocks (>= 6 rounds), or for at most
// max(3 s, 2x the time that took) when the machine stays busy.
std::vector<timing> time_interleaved(const std::vector<std::function<void()>> &fs);

// A vector max over a contiguous buffer of `bytes` bytes (written once, at
// construction) on `threads` threads: the read-bandwidth roofline.
class roofline {
public:
    // Runs on `pool`: the crest engine's own arena, so that both share its
    // worker threads (oneTBB has one worker per extra core for all arenas).
    roofline(size_t bytes, const crest::impl::thread_pool &pool);
    void run();
    const char *isa() const { return isa_; }  // "avx512f", "avx2" or "scalar"
    size_t bytes() const { return n_ * sizeof(float); }
    int threads() const { return pool_.size(); }

private:
    using fn_t = float (*)(const float *, size_t);
    fn_t fn_;
    const char *isa_;
    size_t n_;
    buffer buf_;
    const crest::impl::thread_pool &pool_;
    std::vector<float> results_;  // one per thread, a cache line apart
};

// The same reduction as a directly called oneDNN primitive, made with the
// crest engine's pool as the roofline is; its OpenMP team is sized to the
// pool's thread count.
class onednn_reduce {
public:
    onednn_reduce(const crest::impl::reduce_problem &p, const void *src,
            void *dst, const crest::impl::thread_pool &pool);
    bool ok() const { return kernel_ != nullptr; }
    const std::string &impl() const { return impl_; }  // "dnnl:jit:uni", ...
    const std::string &why_not() const { return why_; }
    // oneDNN's CPU runtime ("OMP", "TBB", ...) and, for OMP, the team size
    // it will use.
    const std::string &runtime() const { return runtime_; }
    int omp_threads() const { return omp_threads_; }
    void run();

private:
    const crest::impl::thread_pool &pool_;
    crest::impl::kernel_ptr kernel_;
    std::string impl_, why_, runtime_;
    int omp_threads_ = 0;
    const void *src_;
    void *dst_;
};

} // namespace benchgraph
