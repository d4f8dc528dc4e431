// Same-run A/B of libcrest builds on one ReduceMax problem. This machine's
// bandwidth moves by 2x within minutes, so two builds compare fairly only
// when they take turns in short blocks: one child process per build (its
// libcrest.so chosen by LD_LIBRARY_PATH, which the build tree's RUNPATH
// lets win) and one running the roofline loop (benchgraph's: an AVX-512 max
// over as many bytes); the parent hands each a block of calls in turn,
// rotating the order every round, and sleeps between blocks so that the
// last child's worker threads are asleep. Per build it prints the median
// call, its % of the roofline's median, and the median over rounds of the
// ratio to the roofline's block of the same round.
//
//   ab_builds --shape=32x64x56x56 --order=0,2,3,1 --axes=0 [--dt=f32]
//             [--dst=any|dense] [--fill=ints|mixed|random|negative|masked] [--rounds=100]
//             [--calls=40] [--buffers=1] DIR...
//
// --order lists the dims from outermost to innermost in memory (default:
// the logical order); --dst=dense asks for a dst in the logical order (the
// NCHW-dst case) instead of layout any. Each DIR holds a libcrest.so; the
// same DIR twice shows the noise floor. --fill picks the data: small
// non-negative integers (ints, the default), the same with every other
// one negated (mixed: the 16-bit kernels keep statistics by sign), some
// negated at random (random, as benchgraph's data), all
// negated (negative, as log-probabilities), or
// with half of them -inf (masked, as masked attention scores: bf16 -inf
// beside another element is a NaN dword to the blocks' float maxes).
// --buffers=N gives each child N copies of src, a round's block on the
// next: at 25-32 MiB where one buffer's pages landed moved identical
// builds by 10-50% (doc/performance.md, "How to reproduce").
// Public API only.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>


#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include "crest/crest.hpp"
#include "tools/benchgraph/roofline_loops.hpp"

namespace {

using namespace crest;
using dims = logical_tensor::dims;
using clock_type = std::chrono::steady_clock;

struct options {
    dims shape;
    std::vector<int> order;
    std::vector<int64_t> axes;
    logical_tensor::data_type dt = logical_tensor::data_type::f32;
    bool dense_dst = false;
    enum class fill_kind { ints, mixed, random, negative, masked } fill = fill_kind::ints;
    int rounds = 100, calls = 40;
    int buffers = 1;  // src buffers a child takes in turn, a round each
    std::vector<std::string> dirs;
};

std::vector<int64_t> split(const std::string &s, char sep) {
    std::vector<int64_t> v;
    size_t b = 0;
    while (b <= s.size()) {
        const size_t e = std::min(s.find(sep, b), s.size());
        v.push_back(std::atoll(s.substr(b, e - b).c_str()));
        b = e + 1;
    }
    return v;
}

bool parse(int argc, char **argv, options &o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto val = [&](const char *key) -> const char * {
            const size_t n = std::strlen(key);
            return a.compare(0, n, key) == 0 ? argv[i] + n : nullptr;
        };
        if (const char *v = val("--shape=")) o.shape = split(v, 'x');
        else if (const char *v = val("--order="))
            for (int64_t d : split(v, ',')) o.order.push_back(int(d));
        else if (const char *v = val("--axes=")) o.axes = split(v, 'x');
        else if (const char *v = val("--rounds=")) o.rounds = std::atoi(v);
        else if (const char *v = val("--calls=")) o.calls = std::atoi(v);
        else if (const char *v = val("--buffers=")) o.buffers = std::atoi(v);
        else if (const char *v = val("--dst=")) o.dense_dst = std::strcmp(v, "dense") == 0;
        else if (const char *v = val("--fill=")) {
            if (!std::strcmp(v, "ints")) o.fill = options::fill_kind::ints;
            else if (!std::strcmp(v, "mixed")) o.fill = options::fill_kind::mixed;
            else if (!std::strcmp(v, "random")) o.fill = options::fill_kind::random;
            else if (!std::strcmp(v, "negative")) o.fill = options::fill_kind::negative;
            else if (!std::strcmp(v, "masked")) o.fill = options::fill_kind::masked;
            else return false;
        }
        else if (const char *v = val("--dt=")) {
            o.dt = !std::strcmp(v, "bf16") ? logical_tensor::data_type::bf16
                    : !std::strcmp(v, "f16") ? logical_tensor::data_type::f16
                                             : logical_tensor::data_type::f32;
        } else if (a.rfind("--", 0) == 0) return false;
        else o.dirs.push_back(a);
    }
    if (o.order.empty())
        for (size_t d = 0; d < o.shape.size(); ++d) o.order.push_back(int(d));
    return !o.shape.empty() && o.order.size() == o.shape.size() && !o.axes.empty()
            && !o.dirs.empty() && o.rounds > 0 && o.calls > 2 && o.buffers > 0;
}

// A child's block times go to its parent on this descriptor.
constexpr int results_fd = 3;

// Huge-page backed, as benchgraph's large buffers.
void *big_buffer(size_t bytes) {
    const size_t huge = size_t(2) << 20, size = (bytes + huge - 1) / huge * huge;
    void *p = std::aligned_alloc(huge, size);
    if (!p) std::abort();
    ::madvise(p, size, MADV_HUGEPAGE);
    return p;
}

// A bit of i's hash (splitmix64's finalizer): signs with no pattern
// along any stride.
bool random_bit(uint64_t i) {
    uint64_t z = i + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) >> 63;
}

// Small integers, exact in every dtype: (i * 7919) % 1000, some negated
// or made -inf by `kind`.
void fill(void *p, size_t n, logical_tensor::data_type dt, options::fill_kind kind) {
    constexpr uint16_t sign16 = 0x8000, bf16_neg_inf = 0xff80, f16_neg_inf = 0xfc00;
    for (size_t i = 0; i < n; ++i) {
        const unsigned v = unsigned((i * 7919) % 1000);
        const bool neg = kind == options::fill_kind::negative
                || (kind == options::fill_kind::mixed && (i & 1))
                || (kind == options::fill_kind::random && random_bit(i));
        const bool ninf = kind == options::fill_kind::masked && v % 2;
        if (dt == logical_tensor::data_type::f32) {
            static_cast<float *>(p)[i] = ninf ? -INFINITY : neg ? -float(v) : float(v);
            continue;
        }
        if (ninf) {
            static_cast<uint16_t *>(p)[i] =
                    dt == logical_tensor::data_type::bf16 ? bf16_neg_inf : f16_neg_inf;
            continue;
        }
        uint16_t bits = 0;
        if (dt == logical_tensor::data_type::bf16) {
            const float f = float(v);
            uint32_t u;
            std::memcpy(&u, &f, 4);
            bits = uint16_t(u >> 16);  // truncated: any values do
        } else if (v) {
            int e = 31 - __builtin_clz(v);
            bits = uint16_t(((e + 15) << 10) | ((v << (10 - e)) & 0x3ff));
        }
        static_cast<uint16_t *>(p)[i] = neg ? uint16_t(bits | sign16) : bits;
    }
}

// The libcrest.so this process loaded (LD_LIBRARY_PATH may have missed).
std::string loaded_crest() {
    FILE *f = std::fopen("/proc/self/maps", "r");
    char line[4096];
    std::string path = "?";
    while (f && std::fgets(line, sizeof line, f))
        if (const char *p = std::strstr(line, "/libcrest")) {
            const char *b = std::strchr(line, '/');
            path.assign(b, std::strcspn(b, "\n"));
            (void)p;
            break;
        }
    if (f) std::fclose(f);
    return path;
}

// A child: waits for 'r', runs a block of calls, writes their times back.
// dir: the build whose libcrest.so this process must have loaded, or
// "roof".
int child(const options &o, const std::string &dir) {
    const bool roof = dir == "roof";
    const int n = int(o.shape.size());
    dims strides(n);
    int64_t acc = 1;
    for (int k = n - 1; k >= 0; --k) {
        strides[o.order[k]] = acc;
        acc *= o.shape[o.order[k]];
    }
    const size_t elems = size_t(acc), esz = o.dt == logical_tensor::data_type::f32 ? 4 : 2;
    // --buffers: each round's block reads the next of several copies of
    // src, so that where one buffer's pages landed does not decide the
    // child's every round.
    std::vector<void *> srcs;
    for (int b = 0; b < o.buffers; ++b) {
        void *p = big_buffer(elems * esz);
        // The roofline reads as many bytes, as f32.
        if (roof)
            fill(p, elems * esz / 4, logical_tensor::data_type::f32, options::fill_kind::ints);
        else fill(p, elems, o.dt, o.fill);
        srcs.push_back(p);
    }
    void *src = srcs[0];
    engine eng(engine::kind::cpu, 0);
    stream strm(eng);
    compiled_partition cp;
    std::vector<tensor> ins, outs;
    std::vector<char> dst;
    if (!roof) {
        const logical_tensor s(0, o.dt, o.shape, strides);
        dims kept = o.shape;
        for (int64_t a : o.axes) kept[size_t(a)] = 1;
        const logical_tensor d = o.dense_dst
                ? logical_tensor(1, o.dt, kept, logical_tensor::layout_type::strided)
                : logical_tensor(1, o.dt, logical_tensor::unknown_ndims,
                        logical_tensor::layout_type::any);
        op r(0, op::kind::ReduceMax, {s}, {d}, "rmax");
        r.set_attr(op::attr::axes, o.axes);
        r.set_attr(op::attr::keep_dims, true);
        graph g(engine::kind::cpu);
        g.add_op(r);
        g.finalize();
        cp = g.get_partitions().at(0).compile({s}, {d}, eng);
        const logical_tensor dq = cp.query_logical_tensor(1);
        dst.resize(size_t(dq.get_mem_size()) + 64);
        ins.emplace_back(cp.query_logical_tensor(0), eng, src);
        outs.emplace_back(dq, eng, dst.data() + 64 - reinterpret_cast<uintptr_t>(dst.data()) % 64);
        const std::string lib = loaded_crest();
        char *want = realpath(dir.c_str(), nullptr);
        const bool ok = want && lib.rfind(std::string(want) + "/", 0) == 0;
        std::free(want);
        std::fprintf(stderr, "%s: %s\n", lib.c_str(), cp.get_kernel_name().c_str());
        if (!ok) {
            std::fprintf(stderr, "%s: no libcrest.so loaded from there\n", dir.c_str());
            return 1;
        }
    }
    const bool avx512 = __builtin_cpu_supports("avx512f");
    const size_t nf = elems * esz / 4;
    const int nt = eng.get_num_threads();
    const size_t chunk = nf / size_t(nt) / 16 * 16;
    tbb::task_arena arena(nt);
    std::vector<float> sink(size_t(nt) * 16);
    auto roofline = [&] {
        // As crest's thread pool: an arena of the engine's size, static chunks.
        arena.execute([&] {
            tbb::parallel_for(
                    tbb::blocked_range<int>(0, nt, 1),
                    [&](const tbb::blocked_range<int> &r) {
                        for (int t = r.begin(); t < r.end(); ++t) {
                            const float *p = static_cast<const float *>(src) + size_t(t) * chunk;
                            const size_t len = t == nt - 1 ? nf - size_t(t) * chunk : chunk;
                            sink[size_t(t) * 16] = avx512 ? benchgraph::max_f32_avx512(p, len)
                                                          : benchgraph::max_f32_avx2(p, len);
                        }
                    },
                    tbb::static_partitioner());
        });
    };
    std::vector<double> ts(size_t(o.calls));
    char c;
    for (size_t round = 0; read(0, &c, 1) == 1 && c == 'r'; ++round) {
        src = srcs[round % srcs.size()];
        if (!roof) ins[0].set_data_handle(src);
        for (double &t : ts) {
            const auto t0 = clock_type::now();
            if (roof) roofline();
            else cp.execute(strm, ins, outs);
            t = std::chrono::duration<double>(clock_type::now() - t0).count();
        }
        if (write(results_fd, ts.data(), ts.size() * sizeof(double)) < 0) return 1;
    }
    return 0;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
    options o;
    const bool is_child = argc > 1 && !std::strcmp(argv[1], "--child");
    if (!parse(argc - is_child, argv + is_child, o)) {
        std::fprintf(stderr,
                "usage: ab_builds --shape=AxBx.. [--order=..] --axes=AxB.. "
                "[--dt=f32|bf16|f16] [--dst=any|dense] [--fill=ints|mixed|random|negative|masked]\n"
                "       [--rounds=N] [--calls=N] [--buffers=N] DIR...\n");
        return 2;
    }
    if (is_child) {
        try {
            return child(o, o.dirs[0]);
        } catch (const std::exception &e) {
            std::fprintf(stderr, "%s: %s\n", o.dirs[0].c_str(), e.what());
            return 1;
        }
    }
    signal(SIGPIPE, SIG_IGN);  // a child that ended shows as a failed write
    std::vector<std::string> names {"roof"};
    names.insert(names.end(), o.dirs.begin(), o.dirs.end());
    const size_t nc = names.size();
    std::vector<int> to(nc), from(nc);
    std::vector<pid_t> pids(nc);
    for (size_t c = 0; c < nc; ++c) {
        int a[2], b[2];
        if (pipe(a) || pipe(b)) return 1;
        pids[c] = fork();
        if (pids[c] == 0) {
            // Times go back on fd 3; stdout joins stderr, so that what the
            // library prints (CREST_VERBOSE) never mixes with them.
            dup2(a[0], 0);
            dup2(b[1], results_fd);
            dup2(2, 1);
            if (c > 0) setenv("LD_LIBRARY_PATH", names[c].c_str(), 1);
            std::vector<char *> args {argv[0], const_cast<char *>("--child")};
            for (int i = 1; i < argc; ++i)
                if (argv[i][0] == '-') args.push_back(argv[i]);
            args.push_back(const_cast<char *>(names[c].c_str()));
            args.push_back(nullptr);
            execv("/proc/self/exe", args.data());
            _exit(127);
        }
        close(a[0]);
        close(b[1]);
        to[c] = a[1];
        from[c] = b[0];
    }
    std::vector<std::vector<double>> all(nc), block_median(nc);
    std::vector<double> buf(size_t(o.calls));
    for (int r = 0; r < o.rounds; ++r)
        for (size_t j = 0; j < nc; ++j) {
            const size_t c = (j + size_t(r)) % nc;
            usleep(3000);
            if (write(to[c], "r", 1) != 1) {
                std::fprintf(stderr, "child %s ended\n", names[c].c_str());
                return 1;
            }
            size_t got = 0;
            auto *p = reinterpret_cast<char *>(buf.data());
            while (got < buf.size() * sizeof(double)) {
                const ssize_t k = read(from[c], p + got, buf.size() * sizeof(double) - got);
                if (k <= 0) {
                    std::fprintf(stderr, "child %s ended\n", names[c].c_str());
                    return 1;
                }
                got += size_t(k);
            }
            // The first two calls of a block refill the caches.
            const std::vector<double> timed(buf.begin() + 2, buf.end());
            all[c].insert(all[c].end(), timed.begin(), timed.end());
            block_median[c].push_back(median(timed));
        }
    for (size_t c = 0; c < nc; ++c) {
        (void)!write(to[c], "q", 1);
        close(to[c]);
    }
    while (wait(nullptr) > 0) {}
    const double roof = median(all[0]);
    for (size_t c = 0; c < nc; ++c) {
        std::vector<double> ratio;
        for (int r = 0; r < o.rounds; ++r)
            ratio.push_back(100 * block_median[0][size_t(r)] / block_median[c][size_t(r)]);
        std::printf("%-24s %9.2f us  %5.1f%% of roofline  per-round median %5.1f%%\n",
                names[c].c_str(), median(all[c]) * 1e6, 100 * roof / median(all[c]), median(ratio));
    }
    return 0;
}
