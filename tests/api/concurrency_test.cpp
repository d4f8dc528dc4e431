// Concurrency through the public API (also run under ThreadSanitizer, so the
// tensors stay small):
// - one compiled_partition executed from 4 threads at once, each with its
//   own tensors and data, against serial executions of the same partition,
//   byte for byte, for shapes that reach each JIT kernel kind and for ref;
// - compiles of many distinct problems from 4 threads at once, each thread
//   with its own graphs, every result checked against the ref backend.
#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backend/jit/jit_backend.hpp"
#include "backend/jit/plan.hpp"
#include "tests/api/api_test_util.hpp"

namespace crest::api_test {
namespace {

constexpr int n_threads = 4;
constexpr int n_reps = 3;

// Spins until every one of n threads has arrived, so that they start
// their work together.
class start_line {
public:
    explicit start_line(int n) : left_(n) {}
    void arrive_and_wait() {
        left_.fetch_sub(1);
        while (left_.load() > 0) std::this_thread::yield();
    }

private:
    std::atomic<int> left_;
};

struct shape_case {
    const char *name;
    dims src_dims;
    dims src_strides;  // empty: dense
    std::vector<int64_t> axes;
    bool keep;
    const char *kernel;  // expected kind in the JIT kernel's name
};

// Big enough (>= 64 KiB of src in bf16) that the JIT kernels split the work
// over the engine's threads, so that a kernel's own threads and the callers'
// threads are both in play. The vertical kernels need more than 8192 output
// columns not to take the two-level path.
const shape_case shape_cases[] = {
    {"inner", {64, 600}, {}, {1}, false, "reduce_inner"},
    {"vertical", {8, 8320}, {}, {0}, false, "reduce_vertical"},
    {"two_level", {1, 1, 512, 512}, {}, {2}, true, "reduce_all"},
    // A transposed 600x64: the reduced dim is the contiguous one.
    {"transposed", {600, 64}, {1, 600}, {0}, true, "reduce_inner"},
    // NCHW dims over NHWC memory, reduced over H and W.
    {"nhwc", {2, 4160, 2, 2}, {16640, 1, 8320, 4160}, {2, 3}, true, "reduce_vertical"},
    // Every other element of a 64x1200 buffer.
    {"strided", {64, 600}, {1200, 2}, {1}, false, "reduce_strided"},
};

lt src_lt(dt t, const dims &d, const dims &strides) {
    return strides.empty() ? lt(src_id, t, d, ltype::strided)
                           : lt(src_id, t, d, strides);
}

compiled_partition compile_one(dt t, const dims &d, const dims &strides,
        const std::vector<int64_t> &axes, bool keep, const engine &eng) {
    reduce_graph rg;
    rg.src = src_lt(t, d, strides);
    rg.dst = lt(dst_id, t, lt::unknown_ndims, ltype::any);
    rg.axes_attr = axes;
    rg.keep_dims = keep;
    return rg.compile(eng);
}

// The src span of the compiled partition: random finite bits of any sign and
// exponent (so that different seeds give different maxima), with one quiet
// NaN at the middle element when asked.
std::vector<uint8_t> make_src(const compiled_partition &cp, uint64_t seed,
        bool plant_nan) {
    const lt src = cp.query_logical_tensor(src_id);
    const dt t = src.get_data_type();
    const int64_t n = span(src.get_dims(), src.get_strides());
    std::vector<uint8_t> b(std::max<int64_t>(n, 1) * elem_size(t));
    std::mt19937_64 rng(seed);
    const uint32_t exp_mask = t == dt::f32 ? 0x7F800000u : t == dt::bf16 ? 0x7F80u : 0x7C00u;
    for (int64_t i = 0; i < n; ++i) {
        uint32_t v;
        do v = t == dt::f32 ? uint32_t(rng()) : uint32_t(rng() & 0xFFFFu);
        while ((v & exp_mask) == exp_mask);
        write_bits(t, b, i, v);
    }
    int64_t mid = 0;  // the element at the middle coordinates
    for (size_t d = 0; d < src.get_dims().size(); ++d)
        mid += src.get_dims()[d] / 2 * src.get_strides()[d];
    if (plant_nan && n > 0)
        write_bits(t, b, mid, t == dt::f32 ? 0x7FC00000u : t == dt::bf16 ? 0x7FC0u : 0x7E00u);
    return b;
}

int64_t dst_elems(const compiled_partition &cp) {
    const lt dst = cp.query_logical_tensor(dst_id);
    return std::max<int64_t>(span(dst.get_dims(), dst.get_strides()), 1);
}

// Executes cp into out (re-filled with guard bytes first).
void run(const compiled_partition &cp, const engine &eng, stream &s,
        const std::vector<uint8_t> &src, guarded &out) {
    std::fill(out.buf.begin(), out.buf.end(), guard_byte);
    cp.execute(s,
            {tensor(cp.query_logical_tensor(src_id), eng, const_cast<uint8_t *>(src.data()))},
            {tensor(cp.query_logical_tensor(dst_id), eng, out.data())});
}

bool guards_intact(const guarded &g) {
    for (int64_t i = 1; i <= guard_elems; ++i)
        if (!g.untouched(-i) || !g.untouched(g.capacity() - 1 + i)) return false;
    return true;
}

// Same element values: equal bits, or both NaN, or both zero (the JIT may
// write another NaN of the row than ref, and either zero on a ±0 tie).
int64_t mismatches(dt t, const guarded &a, const guarded &b) {
    int64_t bad = 0;
    for (int64_t i = 0; i < a.capacity(); ++i) {
        const uint32_t x = a.at(i), y = b.at(i);
        const bool nan = std::isnan(decode(t, x)) && std::isnan(decode(t, y));
        if (x != y && !nan && !(is_zero(t, x) && is_zero(t, y))) ++bad;
    }
    return bad;
}

// One compiled partition, 4 threads executing it at once, n_reps times each,
// each thread with its own stream, tensors and data (thread 2's holds a NaN).
// Every execution must equal, byte for byte, the serial execution of the
// same data before the threads started.
void hammer(const compiled_partition &cp, const engine &eng) {
    const dt t = cp.query_logical_tensor(src_id).get_data_type();
    const int64_t nd = dst_elems(cp);
    std::vector<std::vector<uint8_t>> src;
    std::vector<guarded> serial, out;
    stream s(eng);
    for (int k = 0; k < n_threads; ++k) {
        src.push_back(make_src(cp, 1000 + k, k == 2));
        serial.emplace_back(t, nd);
        out.emplace_back(t, nd);
        run(cp, eng, s, src[k], serial[k]);
        ASSERT_TRUE(guards_intact(serial[k]));
    }
    // Different data gives different results, so a thread that read or
    // wrote another thread's tensors would show.
    EXPECT_NE(serial[0].buf, serial[1].buf);
    bool any_nan = false;
    for (int64_t i = 0; i < nd; ++i) any_nan = any_nan || std::isnan(decode(t, serial[2].at(i)));
    EXPECT_TRUE(any_nan) << "the planted NaN did not propagate";

    std::vector<int> bad(n_threads, 0), errors(n_threads, 0);
    start_line line(n_threads);
    std::vector<std::thread> th;
    for (int k = 0; k < n_threads; ++k)
        th.emplace_back([&, k] {
            stream my(eng);
            line.arrive_and_wait();
            for (int rep = 0; rep < n_reps; ++rep) {
                try {
                    run(cp, eng, my, src[k], out[k]);
                } catch (const std::exception &) {
                    ++errors[k];
                    continue;
                }
                if (out[k].buf != serial[k].buf) ++bad[k];
            }
        });
    for (auto &x : th) x.join();
    for (int k = 0; k < n_threads; ++k) {
        EXPECT_EQ(errors[k], 0) << "thread " << k << ": execute threw";
        EXPECT_EQ(bad[k], 0) << "thread " << k << ": " << bad[k] << " of " << n_reps
                             << " executions differ from the serial one (dst or guards)";
    }
}

bool jit_available() { return std::string(impl::jit::max_isa_name()) != "none"; }

TEST(ApiConcurrency, OneJitPartitionFourThreads) {
    if (!jit_available()) GTEST_SKIP() << "no JIT ISA on this CPU (or capped)";
    // Most of these shapes (130-600 KiB) run inline by default (below
    // 512 KiB); above 64 KiB they all take the engine's pool, so
    // concurrent callers share its arena.
    const impl::jit::inline_bytes_for_testing split(64 * 1024);
    engine jit(engine::kind::cpu, 0, engine_options {0, "jit"});
    engine ref(engine::kind::cpu, 0, engine_options {0, "ref"});
    for (const auto &c : shape_cases)
        for (dt t : {dt::f32, dt::bf16}) {
            SCOPED_TRACE(std::string(c.name) + " " + dt_name(t));
            compiled_partition cp = compile_one(t, c.src_dims, c.src_strides, c.axes, c.keep, jit);
            const std::string kname = cp.get_kernel_name();
            EXPECT_EQ(kname.rfind("jit:", 0), 0u) << kname;
            EXPECT_NE(kname.find(c.kernel), std::string::npos) << kname;
            hammer(cp, jit);
            // The serial results themselves are right: same values as ref.
            compiled_partition rp = compile_one(t, c.src_dims, c.src_strides, c.axes, c.keep, ref);
            const auto src = make_src(cp, 1002, true);
            guarded a(t, dst_elems(cp)), b(t, dst_elems(rp));
            stream s1(jit), s2(ref);
            run(cp, jit, s1, src, a);
            run(rp, ref, s2, src, b);
            EXPECT_EQ(mismatches(t, a, b), 0) << kname << " vs " << rp.get_kernel_name();
        }
}

TEST(ApiConcurrency, OneRefPartitionFourThreads) {
    engine ref(engine::kind::cpu, 0, engine_options {0, "ref"});
    for (int i : {0, 4}) {
        const auto &c = shape_cases[i];
        for (dt t : {dt::f32, dt::bf16}) {
            SCOPED_TRACE(std::string(c.name) + " " + dt_name(t));
            compiled_partition cp = compile_one(t, c.src_dims, c.src_strides, c.axes, c.keep, ref);
            EXPECT_EQ(cp.get_kernel_name().rfind("ref:", 0), 0u) << cp.get_kernel_name();
            hammer(cp, ref);
        }
    }
}

// A distinct small problem per (thread, i); some configs repeat across
// threads (the JIT code cache is shared), every shape is new.
struct small_problem {
    dt t;
    dims d;
    dims strides;
    std::vector<int64_t> axes;
    bool keep;
};

small_problem problem_for(int thread, int i) {
    static const dt dts[] = {dt::f32, dt::bf16, dt::f16};
    static const std::vector<int64_t> axes[] = {{0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1, 2}};
    small_problem p;
    p.t = dts[(i + thread) % 3];
    p.d = {2 + thread, 5 + i, 3 + (i * 7) % 29};
    p.axes = axes[i % 6];
    p.keep = (i / 6) % 2 == 0;
    if (i % 5 == 4)  // dims 0 and 2 swapped in memory
        p.strides = {1, p.d[2] * p.d[0], p.d[0]};
    return p;
}

TEST(ApiConcurrency, CompilesOfDistinctProblemsFromFourThreads) {
    if (!jit_available()) GTEST_SKIP() << "no JIT ISA on this CPU (or capped)";
    constexpr int per_thread = 24;
    engine jit(engine::kind::cpu, 0, engine_options {0, "jit"});
    engine ref(engine::kind::cpu, 0, engine_options {0, "ref"});
    std::vector<std::vector<compiled_partition>> made(n_threads);
    std::vector<std::string> failures(n_threads);
    start_line line(n_threads);
    std::vector<std::thread> th;
    for (int k = 0; k < n_threads; ++k)
        th.emplace_back([&, k] {
            line.arrive_and_wait();
            for (int i = 0; i < per_thread; ++i) {
                const small_problem p = problem_for(k, i);
                try {
                    made[k].push_back(compile_one(p.t, p.d, p.strides, p.axes, p.keep, jit));
                    // Run it at once too, while other threads still compile.
                    const auto &cp = made[k].back();
                    guarded out(p.t, dst_elems(cp));
                    stream s(jit);
                    run(cp, jit, s, make_src(cp, k * 100 + i, i % 3 == 0), out);
                } catch (const std::exception &e) {
                    failures[k] += "problem " + std::to_string(i) + ": " + e.what() + "\n";
                }
            }
        });
    for (auto &x : th) x.join();
    for (int k = 0; k < n_threads; ++k) {
        EXPECT_TRUE(failures[k].empty()) << "thread " << k << ":\n" << failures[k];
        ASSERT_EQ(made[k].size(), size_t(per_thread));
        for (int i = 0; i < per_thread; ++i) {
            const small_problem p = problem_for(k, i);
            SCOPED_TRACE("thread " + std::to_string(k) + " problem " + std::to_string(i));
            const compiled_partition &cp = made[k][i];
            EXPECT_EQ(cp.get_kernel_name().rfind("jit:", 0), 0u) << cp.get_kernel_name();
            compiled_partition rp = compile_one(p.t, p.d, p.strides, p.axes, p.keep, ref);
            const auto src = make_src(cp, k * 100 + i, i % 3 == 0);
            guarded a(p.t, dst_elems(cp)), b(p.t, dst_elems(rp));
            stream s1(jit), s2(ref);
            run(cp, jit, s1, src, a);
            run(rp, ref, s2, src, b);
            EXPECT_TRUE(guards_intact(a));
            EXPECT_EQ(mismatches(p.t, a, b), 0) << cp.get_kernel_name();
        }
    }
}

} // namespace
} // namespace crest::api_test
