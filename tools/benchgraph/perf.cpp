#include "tools/benchgraph/perf.hpp"
#include "tools/benchgraph/roofline_loops.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend/dnnl/dnnl_backend.hpp"
#include "backend/dnnl/dnnl_compat.hpp"

// oneDNN here is built with OpenMP: its team size follows the calling
// thread's omp_set_num_threads, not crest's arena. Weak, so that a TBB-built
// oneDNN links too.
extern "C" void omp_set_num_threads(int) __attribute__((weak));
extern "C" int omp_get_max_threads(void) __attribute__((weak));

namespace benchgraph {

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

float max_scalar(const float *p, size_t n) {
    float r = -__builtin_inff();
    for (size_t i = 0; i < n; ++i) r = p[i] > r ? p[i] : r;
    return r;
}

// ---- what the other threads of the process and of the machine do ----

std::vector<long> thread_ids() {
    std::vector<long> ids;
    if (DIR *d = ::opendir("/proc/self/task")) {
        while (const dirent *e = ::readdir(d))
            if (e->d_name[0] != '.') ids.push_back(std::strtol(e->d_name, nullptr, 10));
        ::closedir(d);
    }
    return ids;
}

// Reads /proc/self/task/<tid>/<file> into buf; false when it is gone.
bool read_task_file(long tid, const char *file, char *buf, size_t size) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/task/%ld/%s", tid, file);
    FILE *f = std::fopen(path, "r");
    if (!f) return false;
    const size_t n = std::fread(buf, 1, size - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    return n > 0;
}

// Per thread: ns spent runnable but not running (the second field of
// schedstat, the scheduler's run delay). Empty when the kernel does not
// report it.
std::map<long, int64_t> run_delays() {
    std::map<long, int64_t> out;
    char buf[128];
    for (long tid : thread_ids()) {
        unsigned long long run = 0, delay = 0;
        if (read_task_file(tid, "schedstat", buf, sizeof buf)
                && std::sscanf(buf, "%llu %llu", &run, &delay) == 2)
            out[tid] = static_cast<int64_t>(delay);
    }
    return out;
}

// ns the process's threads waited for a CPU between two run_delays()
// readings (threads born in between count from zero); -1 when unknown.
int64_t waited_ns(const std::map<long, int64_t> &a, const std::map<long, int64_t> &b) {
    if (a.empty() || b.empty()) return -1;
    int64_t sum = 0;
    for (const auto &kv : b) {
        auto it = a.find(kv.first);
        sum += std::max<int64_t>(0, kv.second - (it == a.end() ? 0 : it->second));
    }
    return sum;
}

// True when a thread other than the caller is runnable (state R): spinning,
// running or waiting for a CPU.
bool other_thread_runnable() {
    const long self = static_cast<long>(::syscall(SYS_gettid));
    char buf[512];
    for (long tid : thread_ids()) {
        if (tid == self || !read_task_file(tid, "stat", buf, sizeof buf)) continue;
        const char *p = std::strrchr(buf, ')');  // the name may hold spaces
        if (p && p[1] == ' ' && p[2] == 'R') return true;
    }
    return false;
}

// Waits (at most 50 ms) until no other thread of the process is runnable.
// After its last region an OpenMP team spins for GOMP_SPINCOUNT pauses
// (libgomp's default: ~6 ms on this machine) before it sleeps, oneTBB's
// workers for a shorter while; either would take a core from the next block.
void settle() {
    const auto t0 = clock_type::now();
    int quiet = 0;
    while (quiet < 2 && ms_since(t0) < 50.0) {
        quiet = other_thread_runnable() ? 0 : quiet + 1;
        if (quiet < 2) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

// ---- the timing rule (doc/benchgraph.md, "Mode P figures") ----

constexpr double warmup_ms = 50;        // per candidate, after >= 3 calls
constexpr double block_ms = 50;         // timed calls per block
constexpr size_t max_block_calls = 100000;
constexpr double recache_below_ms = 5;  // faster calls get one untimed call per block
constexpr double clean_wait = 0.02;     // of the block's wall time
constexpr int min_rounds = 6;
constexpr int min_clean_blocks = 3;
constexpr int64_t min_calls = 20;
constexpr double min_timed_ms = 300;
constexpr double min_budget_ms = 3000;  // busy machine: keep trying this long

struct block {
    std::vector<double> times;  // ms per call
    double wall_ms = 0;
    double wait_ms = -1;  // -1: unknown
    bool clean = true;
};

struct candidate {
    const std::function<void()> *f;
    double call_ms = 0;  // the last warm-up call
    std::vector<block> blocks;

    bool has(bool clean_only, int min_blocks) const {
        int n = 0;
        int64_t calls = 0;
        double ms = 0;
        for (const auto &b : blocks) {
            if (clean_only && !b.clean) continue;
            ++n;
            calls += static_cast<int64_t>(b.times.size());
            ms += b.wall_ms;
        }
        return n >= min_blocks && calls >= min_calls && ms >= min_timed_ms;
    }
};

void warm_up(candidate &c) {
    const auto w0 = clock_type::now();
    for (int i = 0; i < 3 || (i < 1000 && ms_since(w0) < warmup_ms); ++i) {
        const auto s = clock_type::now();
        (*c.f)();
        c.call_ms = ms_since(s);
    }
}

void run_block(candidate &c) {
    settle();
    block b;
    const auto d0 = run_delays();
    const auto t0 = clock_type::now();
    // The other candidates ran in between: caches, TLBs and the sleeping
    // threads of this one are cold again.
    if (c.call_ms < recache_below_ms) (*c.f)();
    const auto t1 = clock_type::now();
    while (b.times.empty()
            || (ms_since(t1) < block_ms && b.times.size() < max_block_calls)) {
        const auto s = clock_type::now();
        (*c.f)();
        b.times.push_back(ms_since(s));
    }
    b.wall_ms = ms_since(t0);
    const int64_t w = waited_ns(d0, run_delays());
    if (w >= 0) {
        b.wait_ms = static_cast<double>(w) * 1e-6;
        b.clean = b.wait_ms <= clean_wait * b.wall_ms;
    }
    c.blocks.push_back(std::move(b));
}

timing summarise(const candidate &c) {
    timing t;
    t.blocks = static_cast<int>(c.blocks.size());
    std::vector<const block *> kept;
    for (const auto &b : c.blocks)
        if (b.clean) kept.push_back(&b);
    t.clean_blocks = static_cast<int>(kept.size());
    if (t.clean_blocks < min_clean_blocks) {
        // Never quiet enough: the least disturbed half of the blocks.
        kept.clear();
        for (const auto &b : c.blocks) kept.push_back(&b);
        std::stable_sort(kept.begin(), kept.end(), [](const block *x, const block *y) {
            return x->wait_ms / x->wall_ms < y->wait_ms / y->wall_ms;
        });
        kept.resize((kept.size() + 1) / 2);
    }
    t.kept_blocks = static_cast<int>(kept.size());
    std::vector<double> times;
    double wall = 0, wait = 0;
    bool wait_known = true;
    for (const block *b : kept) {
        times.insert(times.end(), b->times.begin(), b->times.end());
        wall += b->wall_ms;
        wait += b->wait_ms;
        wait_known = wait_known && b->wait_ms >= 0;
    }
    t.calls = static_cast<int64_t>(times.size());
    if (!times.empty()) {
        auto mid = times.begin() + times.size() / 2;
        std::nth_element(times.begin(), mid, times.end());
        t.ms = *mid;
    }
    if (wait_known && wall > 0) t.cpu_wait_pct = 100.0 * wait / wall;
    return t;
}

} // namespace

std::vector<timing> time_interleaved(const std::vector<std::function<void()>> &fs) {
    std::vector<candidate> cs;
    for (const auto &f : fs) cs.push_back(candidate {&f, 0, {}});
    for (auto &c : cs) {
        settle();
        warm_up(c);
    }
    const auto start = clock_type::now();
    double enough_at = -1;  // when every candidate first had its minimum
    for (int round = 1;; ++round) {
        for (auto &c : cs) run_block(c);
        const bool clean = round >= min_rounds
                && std::all_of(cs.begin(), cs.end(), [](const candidate &c) {
                       return c.has(true, min_clean_blocks);
                   });
        if (clean) break;
        const bool enough = std::all_of(cs.begin(), cs.end(),
                [](const candidate &c) { return c.has(false, min_rounds); });
        if (!enough) continue;
        const double elapsed = ms_since(start);
        if (enough_at < 0) enough_at = elapsed;
        if (elapsed >= std::max(min_budget_ms, 2 * enough_at)) break;
    }
    std::vector<timing> out;
    for (const auto &c : cs) out.push_back(summarise(c));
    return out;
}

roofline::roofline(size_t bytes, const crest::impl::thread_pool &pool)
    : fn_(max_scalar)
    , isa_("scalar")
    , n_(std::max<size_t>(bytes / sizeof(float), 16))
    , buf_(n_ * sizeof(float))
    , pool_(pool) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        fn_ = max_f32_avx512;
        isa_ = "avx512f";
    } else if (__builtin_cpu_supports("avx2")) {
        fn_ = max_f32_avx2;
        isa_ = "avx2";
    }
    auto *p = static_cast<float *>(buf_.data());
    for (size_t i = 0; i < n_; ++i) p[i] = static_cast<float>(i % 1000);
    results_.resize(static_cast<size_t>(pool_.size()) * 16);
}

void roofline::run() {
    const int64_t nt = pool_.size();
    const auto *p = static_cast<const float *>(buf_.data());
    const size_t chunk = (n_ / nt + 15) / 16 * 16;
    pool_.parallel_for(nt, [&](int64_t t) {
        const size_t b = std::min(n_, static_cast<size_t>(t) * chunk);
        const size_t e = t == nt - 1 ? n_ : std::min(n_, b + chunk);
        results_[static_cast<size_t>(t) * 16] = fn_(p + b, e - b);
    });
}

onednn_reduce::onednn_reduce(const crest::impl::reduce_problem &p,
        const void *src, void *dst, const crest::impl::thread_pool &pool)
    : pool_(pool), src_(src), dst_(dst) {
    namespace dnnl_backend = crest::impl::dnnl_backend;
    // Same thread count as the crest engine, set before the primitive is
    // made (oneDNN reads it when it plans the work).
    runtime_ = dnnl_backend::compat::cpu_runtime_name();
    if (runtime_ == "OMP" && omp_set_num_threads) {
        omp_set_num_threads(pool_.size());
        omp_threads_ = omp_get_max_threads ? omp_get_max_threads() : pool_.size();
    }
    kernel_ = dnnl_backend::make_reduce_max(p, pool_, false, &why_);
    if (kernel_) impl_ = kernel_->name();
}

void onednn_reduce::run() {
    const void *in[] = {src_};
    void *out[] = {dst_};
    kernel_->execute(in, out);
}

} // namespace benchgraph
