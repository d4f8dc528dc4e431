// Mode P (run_state.hpp): crest's partitions, the roofline and the direct
// oneDNN primitive timed in one run.
#include "tools/benchgraph/run_state.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <variant>

#include "src/engine_impl.hpp"
#include "src/lowering.hpp"
#include "tools/benchgraph/perf.hpp"

namespace benchgraph {

using crest::logical_tensor;

namespace {

// The ReduceMax problem of a one-op ReduceMax graph, for the direct oneDNN
// primitive; false for any other graph.
bool single_reduce_max(run_state &st, crest::impl::reduce_problem *prob,
        size_t *src_id, const logical_tensor **dst) {
    if (st.parts.size() != 1 || st.parts[0].get_ops_num() != 1) return false;
    const crest::op *o = find_op(st.rec, st.parts[0].get_ops()[0]);
    if (!o || o->get_kind() != crest::op::kind::ReduceMax) return false;
    const auto &src = st.lts.at(o->get_inputs()[0].get_id());
    *dst = &st.lts.at(o->get_outputs()[0].get_id());
    std::vector<int64_t> axes;
    auto it = o->get_attrs().find("axes");
    if (it != o->get_attrs().end()) {
        if (auto v = std::get_if<std::vector<int64_t>>(&it->second)) axes = *v;
    } else if (o->get_inputs().size() > 1) {
        axes = st.int_values[o->get_inputs()[1].get_id()];
    }
    for (auto &a : axes)
        if (a < 0) a += src.get_ndims();
    std::sort(axes.begin(), axes.end());
    *prob = crest::impl::make_reduce_problem(
            src, **dst, axes, attr_bool(*o, "keep_dims", false));
    *src_id = src.get_id();
    return true;
}

void print_timing(const char *what, const timing &t) {
    char wait[32] = "unknown";
    if (t.cpu_wait_pct >= 0) std::snprintf(wait, sizeof wait, "%.1f%%", t.cpu_wait_pct);
    std::printf("  timing %s: %.4g ms, median of %lld calls in %d of %d blocks"
                " (%d clean), cpu wait %s\n",
            what, t.ms, static_cast<long long>(t.calls), t.kept_blocks, t.blocks,
            t.clean_blocks, wait);
}

} // namespace

// Times the partitions, the roofline and (for a one-op ReduceMax) oneDNN
// against each other in the same run; see time_interleaved for the rule.
void run_perf(run_state &st, const crest::engine &eng,
        const std::vector<crest::compiled_partition> &cps,
        std::map<size_t, buffer_ptr> &outs, case_result &res) {
    perf_figures &pf = res.perf;
    crest::stream strm(eng);
    const auto b = bind_all(st, eng, outs);
    const auto run_all = [&] {
        for (size_t i = 0; i < cps.size(); ++i) cps[i].execute(strm, b.ins[i], b.outs[i]);
    };
    run_all();  // once outside the timing: errors surface here
    for (const auto &p : st.parts) {
        for (const auto &t : p.get_input_ports()) pf.bytes += span_bytes(st.lts.at(t.get_id()));
        for (const auto &t : p.get_output_ports()) pf.bytes += span_bytes(st.lts.at(t.get_id()));
    }
    for (const auto &cp : cps)
        pf.kernel += (pf.kernel.empty() ? "" : ";") + cp.get_kernel_name();

    std::vector<std::function<void()>> fs;
    fs.push_back(run_all);
    const crest::impl::thread_pool &pool = eng.get_impl()->pool;
    roofline roof(static_cast<size_t>(pf.bytes), pool);
    fs.push_back([&] { roof.run(); });

    // The same ReduceMax as a direct oneDNN primitive (one-op partitions).
    crest::impl::reduce_problem prob;
    size_t src_id = 0;
    const logical_tensor *dst = nullptr;
    std::unique_ptr<buffer> dbuf;
    std::unique_ptr<onednn_reduce> one;
    if (st.g.onednn && single_reduce_max(st, &prob, &src_id, &dst)) {
        dbuf = std::make_unique<buffer>(span_bytes(*dst));
        one = std::make_unique<onednn_reduce>(
                prob, st.inputs.at(src_id)->data(), dbuf->data(), pool);
        if (one->ok()) fs.push_back([&] { one->run(); });
        else if (st.g.verbose >= 1)
            std::printf("  onednn: none (%s)\n", one->why_not().c_str());
    }

    const std::vector<timing> ts = time_interleaved(fs);
    pf.time_ms = ts[0].ms;
    pf.gbps = pf.time_ms > 0 ? pf.bytes / (pf.time_ms * 1e6) : 0;
    pf.roofline_gbps = ts[1].ms > 0 ? roof.bytes() / (ts[1].ms * 1e6) : 0;
    pf.has_onednn = ts.size() > 2;
    if (pf.has_onednn) {
        pf.onednn_ms = ts[2].ms;
        pf.onednn_impl = one->impl();
    }
    pf.quiet = true;
    for (const auto &t : ts) {
        pf.quiet = pf.quiet && t.clean();
        pf.cpu_wait_pct = std::max(pf.cpu_wait_pct, t.cpu_wait_pct);
    }
    if (st.g.verbose >= 1) {
        std::printf("  roofline: %s max over %zu bytes on %d thread(s)\n", roof.isa(),
                roof.bytes(), roof.threads());
        if (one && one->ok()) {
            const char *spin = std::getenv("GOMP_SPINCOUNT");
            const char *policy = std::getenv("OMP_WAIT_POLICY");
            std::printf("  onednn: %s, %s runtime, %d OpenMP thread(s), "
                        "GOMP_SPINCOUNT=%s OMP_WAIT_POLICY=%s\n",
                    one->impl().c_str(), one->runtime().c_str(), one->omp_threads(),
                    spin ? spin : "(unset)", policy ? policy : "(unset)");
        }
        print_timing("crest", ts[0]);
        print_timing("roofline", ts[1]);
        if (pf.has_onednn) print_timing("onednn", ts[2]);
    }
    res.has_perf = true;
}

} // namespace benchgraph
