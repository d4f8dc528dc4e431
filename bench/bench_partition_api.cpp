// Google Benchmark of crest's public API on tiny ReduceMax problems, where
// the cost around the kernel shows. Each row, per case (f32 1x1000 and
// f32 32x128, reduced over axis 1, default engine):
//
//   execute_api      compiled_partition::execute, stream and tensors built
//                    beforehand: what a framework pays per call.
//   execute_direct   the same JIT kernel's execute() called directly (made
//                    with jit::make_reduce_max for the same problem).
//                    execute_api - execute_direct = the API's overhead
//                    (port matching, shape/stride checks).
//   compile_same     partition::compile of the same partition again: the
//                    kernel code is in the process-wide cache (a cache hit).
//                    Like compile_new, times the compile call only.
//   compile_new      partition::compile of a shape never compiled before
//                    (new dims every iteration: 1x(1000+k), or (1+k%32)x128
//                    with a row pitch of 128+k/32): its code config is
//                    cached, the plan and the partition work are new. The
//                    time is the compile only; graph_us is the average time
//                    spent before it building the graph (add_op, finalize,
//                    get_partitions).
//   make_direct      jit::make_reduce_max alone: the backend part of a
//                    compile (plan + code-cache lookup).
//   first_compile    one shot, measured before any benchmark runs: the
//                    first compile in the process (1x1000: every lazy
//                    initialisation plus generating its code), then the
//                    first of 32x128 (generating its code only). graph_us
//                    is the graph build before it; engine_us the engine
//                    construction (0 for 32x128: the engine exists by then).
// jit_make_cached is the JIT make of an already generated config for bf16
// 64x256x56x56 axis 0 (design.md: a cache hit costs < 5 us).
//
// The machine is shared: every row but first_compile runs 5 repetitions and
// reports their mean, median, stddev and cv; read the median.
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "backend/jit/jit_backend.hpp"
#include "backend/kernel.hpp"
#include "crest/crest.hpp"
#include "src/threading.hpp"

namespace {

using namespace crest;
using dt = logical_tensor::data_type;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

const engine &default_engine() {
    static engine e(engine::kind::cpu, 0);
    return e;
}

// The kernel-level pool of the direct rows: as many threads as the engine.
const impl::thread_pool &pool() {
    static impl::thread_pool p(default_engine().get_num_threads());
    return p;
}

// A one-op ReduceMax graph over src (id 0) to dst (id 1, layout any).
struct one_op {
    logical_tensor src, dst;
    graph g {engine::kind::cpu};
    partition part;

    one_op(const logical_tensor::dims &dims, const logical_tensor::dims &strides,
            int64_t axis) {
        src = strides.empty()
                ? logical_tensor(0, dt::f32, dims, logical_tensor::layout_type::strided)
                : logical_tensor(0, dt::f32, dims, strides);
        dst = logical_tensor(1, dt::f32, logical_tensor::unknown_ndims,
                logical_tensor::layout_type::any);
        op r(0, op::kind::ReduceMax, {src}, {dst}, "rmax");
        r.set_attr(op::attr::axes, std::vector<int64_t> {axis});
        r.set_attr(op::attr::keep_dims, false);
        g.add_op(r);
        g.finalize();
        part = g.get_partitions().at(0);
    }

    compiled_partition compile(const engine &eng) const {
        return part.compile({src}, {dst}, eng);
    }
};

// The kernel-level problem of a compiled ReduceMax partition over one axis.
impl::reduce_problem problem_of(const compiled_partition &cp, int64_t axis) {
    const logical_tensor s = cp.query_logical_tensor(0);
    impl::reduce_problem p;
    p.dt = s.get_data_type();
    p.dims = s.get_dims();
    p.src_strides = s.get_strides();
    p.reduce_mask = 1u << axis;
    impl::dims_t kd = p.dims;
    kd[axis] = 1;
    p.dst_strides = dense_strides(kd);
    p.dst_strides[axis] = 0;
    return p;
}

struct tiny_case {
    const char *name;
    logical_tensor::dims dims;
    int64_t axis;
};
const tiny_case case_1x1000 {"f32_1x1000_a1", {1, 1000}, 1};
const tiny_case case_32x128 {"f32_32x128_a1", {32, 128}, 1};

std::vector<float> values(int64_t n) {
    std::vector<float> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = float((i * 7919) % 1000) - 500.f;
    return v;
}

void execute_api(benchmark::State &st, const tiny_case &c) {
    one_op g(c.dims, {}, c.axis);
    compiled_partition cp = g.compile(default_engine());
    const logical_tensor src = cp.query_logical_tensor(0), dst = cp.query_logical_tensor(1);
    std::vector<float> in = values(src.nelems()), out(dst.nelems());
    stream s(default_engine());
    const std::vector<tensor> ins {tensor(src, default_engine(), in.data())};
    const std::vector<tensor> outs {tensor(dst, default_engine(), out.data())};
    for (auto _ : st) {
        cp.execute(s, ins, outs);
        benchmark::ClobberMemory();
    }
    st.SetLabel(cp.get_kernel_name());
}

void execute_direct(benchmark::State &st, const tiny_case &c) {
    one_op g(c.dims, {}, c.axis);
    compiled_partition cp = g.compile(default_engine());
    std::string why;
    impl::kernel_ptr k = impl::jit::make_reduce_max(problem_of(cp, c.axis), pool(), &why);
    if (!k) {
        st.SkipWithError(why.c_str());
        return;
    }
    std::vector<float> in = values(cp.query_logical_tensor(0).nelems());
    std::vector<float> out(cp.query_logical_tensor(1).nelems());
    const void *ins[] = {in.data()};
    void *outs[] = {out.data()};
    for (auto _ : st) {
        k->execute(ins, outs);
        benchmark::ClobberMemory();
    }
    st.SetLabel(k->name());
}

void compile_same(benchmark::State &st, const tiny_case &c) {
    one_op g(c.dims, {}, c.axis);
    g.compile(default_engine());  // the code is generated here at the latest
    for (auto _ : st) {
        const auto t0 = clock_type::now();
        compiled_partition cp = g.compile(default_engine());
        st.SetIterationTime(seconds_since(t0));  // as compile_new: not the destruction
        benchmark::DoNotOptimize(cp);
    }
}

// A shape (dims, and for 32x128 the row pitch) not compiled before in this
// process: k counts every compile_new iteration so far.
void new_shape(const tiny_case &c, int64_t k, logical_tensor::dims *dims,
        logical_tensor::dims *strides) {
    if (c.dims[0] == 1) {
        *dims = {1, c.dims[1] + k};
        strides->clear();
    } else {
        *dims = {1 + k % c.dims[0], c.dims[1]};
        *strides = {c.dims[1] + k / c.dims[0], 1};
    }
}

void compile_new(benchmark::State &st, const tiny_case &c) {
    static int64_t k = 0;
    double graph_s = 0;
    std::string kname;
    for (auto _ : st) {
        logical_tensor::dims dims, strides;
        new_shape(c, k++, &dims, &strides);
        const auto t0 = clock_type::now();
        one_op g(dims, strides, c.axis);
        const auto t1 = clock_type::now();
        compiled_partition cp = g.compile(default_engine());
        st.SetIterationTime(seconds_since(t1));
        graph_s += std::chrono::duration<double>(t1 - t0).count();
        if (kname.empty()) kname = cp.get_kernel_name();
    }
    st.counters["graph_us"] = benchmark::Counter(graph_s * 1e6, benchmark::Counter::kAvgIterations);
    st.SetLabel(kname);
}

void make_direct(benchmark::State &st, const tiny_case &c) {
    one_op g(c.dims, {}, c.axis);
    const impl::reduce_problem p = problem_of(g.compile(default_engine()), c.axis);
    std::string why;
    for (auto _ : st) {
        impl::kernel_ptr k = impl::jit::make_reduce_max(p, pool(), &why);
        benchmark::DoNotOptimize(k);
    }
}

void jit_make_cached(benchmark::State &st) {
    impl::reduce_problem p;
    p.dt = dt::bf16;
    p.dims = {64, 256, 56, 56};
    p.src_strides = dense_strides(p.dims);
    p.dst_strides = dense_strides({1, 256, 56, 56});
    p.dst_strides[0] = 0;
    p.reduce_mask = 1;
    std::string why;
    if (!impl::jit::make_reduce_max(p, pool(), &why)) {
        st.SkipWithError(why.c_str());
        return;
    }
    for (auto _ : st) {
        impl::kernel_ptr k = impl::jit::make_reduce_max(p, pool(), &why);
        benchmark::DoNotOptimize(k);
    }
}

// The one-shot measurements, taken in main before anything else runs.
struct first_times {
    double engine_s = 0, graph_s = 0, compile_s = 0;
    std::string kernel;
};
first_times first_1x1000, first_32x128;

first_times measure_first(const tiny_case &c) {
    first_times f;
    auto t0 = clock_type::now();
    default_engine();
    f.engine_s = seconds_since(t0);
    t0 = clock_type::now();
    one_op g(c.dims, {}, c.axis);
    f.graph_s = seconds_since(t0);
    t0 = clock_type::now();
    compiled_partition cp = g.compile(default_engine());
    f.compile_s = seconds_since(t0);
    f.kernel = cp.get_kernel_name();
    return f;
}

void first_compile(benchmark::State &st, const first_times *f) {
    for (auto _ : st) st.SetIterationTime(f->compile_s);
    st.counters["graph_us"] = f->graph_s * 1e6;
    st.counters["engine_us"] = f->engine_s * 1e6;
    st.SetLabel(f->kernel);
}

#define REPEATED Repetitions(5)->ReportAggregatesOnly(true)->Unit(benchmark::kMicrosecond)
#define ONE_SHOT Iterations(1)->Repetitions(1)->UseManualTime()->Unit(benchmark::kMicrosecond)

BENCHMARK_CAPTURE(first_compile, f32_1x1000_a1, &first_1x1000)->ONE_SHOT;
BENCHMARK_CAPTURE(first_compile, f32_32x128_a1, &first_32x128)->ONE_SHOT;
BENCHMARK_CAPTURE(execute_api, f32_1x1000_a1, case_1x1000)->MinTime(0.2)->REPEATED;
BENCHMARK_CAPTURE(execute_direct, f32_1x1000_a1, case_1x1000)->MinTime(0.2)->REPEATED;
BENCHMARK_CAPTURE(execute_api, f32_32x128_a1, case_32x128)->MinTime(0.2)->REPEATED;
BENCHMARK_CAPTURE(execute_direct, f32_32x128_a1, case_32x128)->MinTime(0.2)->REPEATED;
// Fixed iteration counts keep every new shape tiny (k < 5000: at most 36 KB
// of src, below the 64 KiB where kernels split over threads).
#define MANUAL_NEW Iterations(1000)->UseManualTime()->REPEATED
#define MANUAL_SAME MinTime(0.2)->UseManualTime()->REPEATED
BENCHMARK_CAPTURE(compile_new, f32_1x1000_a1, case_1x1000)->MANUAL_NEW;
BENCHMARK_CAPTURE(compile_new, f32_32x128_a1, case_32x128)->MANUAL_NEW;
BENCHMARK_CAPTURE(compile_same, f32_1x1000_a1, case_1x1000)->MANUAL_SAME;
BENCHMARK_CAPTURE(compile_same, f32_32x128_a1, case_32x128)->MANUAL_SAME;
BENCHMARK_CAPTURE(make_direct, f32_1x1000_a1, case_1x1000)->MinTime(0.2)->REPEATED;
BENCHMARK_CAPTURE(make_direct, f32_32x128_a1, case_32x128)->MinTime(0.2)->REPEATED;
BENCHMARK(jit_make_cached)->MinTime(0.2)->REPEATED;

} // namespace

int main(int argc, char **argv) {
    // Before anything else touches crest, so that these are the process's
    // first compiles of each case.
    first_1x1000 = measure_first(case_1x1000);
    first_32x128 = measure_first(case_32x128);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
