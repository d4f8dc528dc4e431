#include "tools/benchgraph/runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>
#include <set>

#include "crest/crest.hpp"
#include "src/json/graph_json.hpp"
#include "tools/benchgraph/data.hpp"
#include "tools/benchgraph/rewrite.hpp"
#include "tools/benchgraph/run_state.hpp"

namespace benchgraph {

using crest::logical_tensor;
using dt_t = logical_tensor::data_type;
using ltype = logical_tensor::layout_type;

const crest::op *find_op(const crest::json::graph_record &rec, size_t id) {
    for (const auto &o : rec.ops)
        if (o.get_id() == id) return &o;
    return nullptr;
}

bool attr_bool(const crest::op &o, const char *name, bool dflt) {
    auto it = o.get_attrs().find(name);
    if (it == o.get_attrs().end()) return dflt;
    if (auto b = std::get_if<bool>(&it->second)) return *b;
    if (auto i = std::get_if<int64_t>(&it->second)) return *i != 0;
    return dflt;
}

bindings bind_all(run_state &st, const crest::engine &eng,
        std::map<size_t, buffer_ptr> &outs) {
    bindings b;
    for (const auto &p : st.parts) {
        std::vector<crest::tensor> ti, to;
        for (const auto &t : p.get_input_ports()) {
            auto id = t.get_id();
            void *h = st.inputs.count(id) ? st.inputs[id]->data() : outs.at(id)->data();
            ti.emplace_back(st.lts.at(id), eng, h);
        }
        for (const auto &t : p.get_output_ports())
            to.emplace_back(st.lts.at(t.get_id()), eng, outs.at(t.get_id())->data());
        b.ins.push_back(std::move(ti));
        b.outs.push_back(std::move(to));
    }
    return b;
}

// Runs every compiled partition in order; outputs land in `outs`.
void execute_all(run_state &st, const crest::engine &eng,
        const std::vector<crest::compiled_partition> &cps,
        std::map<size_t, buffer_ptr> &outs) {
    crest::stream strm(eng);
    auto b = bind_all(st, eng, outs);
    for (size_t i = 0; i < cps.size(); ++i) cps[i].execute(strm, b.ins[i], b.outs[i]);
}

namespace {

bool is_float(dt_t d) {
    return d == dt_t::f32 || d == dt_t::bf16 || d == dt_t::f16;
}

struct case_error {
    outcome st;
    std::string message;
};

[[noreturn]] void fail(outcome st, const std::string &m) { throw case_error {st, m}; }

// Partitions in an order where every input exists before it is read.
std::vector<crest::partition> topo_order(const std::vector<crest::partition> &parts,
        std::set<size_t> avail) {
    std::vector<crest::partition> out;
    std::vector<bool> done(parts.size(), false);
    for (size_t round = 0; round < parts.size(); ++round) {
        for (size_t i = 0; i < parts.size(); ++i) {
            if (done[i]) continue;
            bool ready = true;
            for (const auto &t : parts[i].get_input_ports())
                ready = ready && avail.count(t.get_id());
            if (!ready) continue;
            done[i] = true;
            out.push_back(parts[i]);
            for (const auto &t : parts[i].get_output_ports()) avail.insert(t.get_id());
        }
    }
    if (out.size() != parts.size())
        fail(outcome::failed, "partitions have inputs nobody produces");
    return out;
}

// Tolerance of a partition: bit-exact for the max family; post-op chains
// compute in f32 and round once, so within an output-type ulp (f32: a few
// ulps, more for transcendental functions).
compare_rule rule_for(const crest::json::graph_record &rec,
        const crest::partition &p, dt_t dt) {
    compare_rule r;
    r.compare_nan = rec.fpmath == crest::fpmath_mode::strict;
    bool exact = true, transcendental = false;
    for (auto id : p.get_ops()) {
        const crest::op *o = find_op(rec, id);
        if (!o) continue;
        auto k = o->get_kind();
        using K = crest::op::kind;
        if (k == K::ReduceMax || k == K::Maximum || k == K::ArgMax || k == K::End)
            continue;
        exact = false;
        if (k == K::Exp || k == K::GELU || k == K::Log || k == K::Sigmoid
                || k == K::Sqrt || k == K::Tanh)
            transcendental = true;
    }
    if (exact) return r;
    if (dt == dt_t::bf16) r.rel_tol = 1.0 / 128;
    else if (dt == dt_t::f16) r.rel_tol = 1.0 / 1024;
    else r.rel_tol = transcendental ? 4e-6 : 1e-6;
    return r;
}

// For the s32 axes input of a ReduceMax: the axes that turn the compiled src
// shape into the compiled dst shape.
std::vector<int64_t> infer_axes(const logical_tensor &src,
        const logical_tensor &dst, bool keep_dims) {
    const auto &sd = src.get_dims();
    const auto &dd = dst.get_dims();
    std::vector<int64_t> axes;
    const int rs = static_cast<int>(sd.size()), rd = static_cast<int>(dd.size());
    if (keep_dims || rs == rd) {
        for (int i = 0; i < rs && i < rd; ++i)
            if (dd[i] == 1 && sd[i] != 1) axes.push_back(i);
        return axes;
    }
    int j = 0;
    for (int i = 0; i < rs; ++i) {
        const bool must_match = rs - i == rd - j;
        if (j < rd && (must_match || sd[i] == dd[j])) ++j;
        else axes.push_back(i);
    }
    return axes;
}

std::vector<crest::compiled_partition> compile_all(run_state &st,
        const crest::engine &eng, bool is_ref,
        const std::map<size_t, logical_tensor> *out_layouts) {
    std::vector<crest::compiled_partition> cps;
    for (const auto &p : st.parts) {
        std::vector<logical_tensor> ins, outs;
        for (const auto &t : p.get_input_ports()) ins.push_back(st.lts.at(t.get_id()));
        for (const auto &t : p.get_output_ports()) {
            if (out_layouts) {
                outs.push_back(out_layouts->at(t.get_id()));
            } else if (t.get_layout_type() == ltype::strided && t.has_known_shape()) {
                outs.push_back(t);
            } else if (t.get_ndims() >= 0) {
                outs.emplace_back(t.get_id(), t.get_data_type(), t.get_dims(), ltype::any);
            } else {
                outs.emplace_back(t.get_id(), t.get_data_type(), t.get_ndims(), ltype::any);
            }
        }
        cps.push_back(p.compile(ins, outs, eng));
        for (const auto &t : p.get_output_ports())
            if (!out_layouts)
                st.lts[t.get_id()] = cps.back().query_logical_tensor(t.get_id());
        if (st.g.verbose >= 2)
            std::printf("  %s partition %zu: kernel %s\n", is_ref ? "ref" : "test",
                    p.get_id(), cps.back().get_kernel_name().c_str());
    }
    return cps;
}

// Fills graph inputs once (after the test compile, which fixes the shapes
// an axes tensor must agree with).
void fill_inputs(run_state &st) {
    auto given = parse_input_values(st.s.input_values);
    // ReduceMax axes inputs: tensor id -> (src id, dst id, keep_dims)
    std::map<size_t, const crest::op *> axes_of;
    for (const auto &o : st.rec.ops)
        if (o.get_kind() == crest::op::kind::ReduceMax && o.get_inputs().size() > 1)
            axes_of[o.get_inputs()[1].get_id()] = &o;
    for (const auto &kv : given)
        if (!st.lts.count(kv.first))
            fail(outcome::invalid_arguments, "--input-values: tensor "
                    + std::to_string(kv.first) + " is not an input of the graph");
    uint64_t k = 0;
    for (auto &kv : st.inputs) {
        const logical_tensor &lt = st.lts.at(kv.first);
        void *data = kv.second->data();
        ++k;
        if (is_float(lt.get_data_type())) {
            fill_float(lt, data, st.s.seed * 1000003 + kv.first * 7919 + k, st.s.nan,
                    st.s.negative);
            continue;
        }
        std::vector<int64_t> values;
        auto gi = given.find(kv.first);
        auto ai = axes_of.find(kv.first);
        if (gi != given.end()) {
            values = gi->second;
            if (static_cast<int64_t>(values.size()) != std::max<int64_t>(lt.nelems(), 0))
                fail(outcome::invalid_arguments, "--input-values: tensor "
                        + std::to_string(kv.first) + " has " + std::to_string(lt.nelems())
                        + " elements, " + std::to_string(values.size()) + " values given");
        } else if (ai != axes_of.end()) {
            const crest::op &o = *ai->second;
            values = infer_axes(st.lts.at(o.get_inputs()[0].get_id()),
                    st.lts.at(o.get_outputs()[0].get_id()),
                    attr_bool(o, "keep_dims", false));
            if (static_cast<int64_t>(values.size()) != std::max<int64_t>(lt.nelems(), 0))
                fail(outcome::invalid_arguments, "axes tensor "
                        + std::to_string(kv.first) + " has " + std::to_string(lt.nelems())
                        + " elements but the shapes need " + std::to_string(values.size())
                        + " axes; give them with --input-values");
        }
        fill_int(lt, data, values.empty() && lt.nelems() != 0 ? nullptr : &values,
                st.s.seed + kv.first);
        st.int_values[kv.first] = values;
    }
}

std::map<size_t, buffer_ptr> alloc_outputs(run_state &st, unsigned char fill) {
    std::map<size_t, buffer_ptr> outs;
    for (const auto &p : st.parts)
        for (const auto &t : p.get_output_ports())
            outs[t.get_id()] = std::make_shared<buffer>(
                    span_bytes(st.lts.at(t.get_id())), fill);
    return outs;
}

void print_partitions(const run_state &st) {
    for (const auto &p : st.parts) {
        std::printf("  partition %zu: %s ops=%zu pattern='%s'\n", p.get_id(),
                p.is_supported() ? "supported" : "unsupported", p.get_ops_num(),
                p.get_pattern_name().c_str());
        for (const auto &t : p.get_input_ports())
            std::printf("    in  %s\n", lt_str(st.lts.count(t.get_id())
                    ? st.lts.at(t.get_id()) : t).c_str());
        for (const auto &t : p.get_output_ports())
            std::printf("    out %s\n", lt_str(st.lts.count(t.get_id())
                    ? st.lts.at(t.get_id()) : t).c_str());
    }
}

case_result run(const std::string &path, const settings &s, const globals &g) {
    case_result res;
    crest::json::graph_record rec;
    try {
        rec = crest::json::read_graph_file(path);
    } catch (const crest::error &e) {
        fail(outcome::invalid_arguments, e.what());
    } catch (const std::exception &e) {
        fail(outcome::invalid_arguments, path + ": " + e.what());
    }
    apply_rewrites(rec, s);

    crest::graph gr = crest::json::build_graph(rec);
    gr.finalize();
    run_state st {rec, s, g, {}, {}, {}, {}};
    auto parts = gr.get_partitions(crest::partition::policy::fusion);

    for (auto id : graph_input_ids(rec)) {
        for (const auto &o : rec.ops)
            for (const auto &t : o.get_inputs())
                if (t.get_id() == id && !st.lts.count(id)) st.lts[id] = t;
    }
    std::set<size_t> avail;
    for (const auto &kv : st.lts) avail.insert(kv.first);
    st.parts = parts;
    if (g.verbose >= 1) {
        std::printf("  %zu partition(s)\n", parts.size());
        print_partitions(st);
    }
    for (const auto &p : parts)
        if (!p.is_supported())
            fail(outcome::unimplemented, "partition " + std::to_string(p.get_id())
                    + ": " + (p.get_unsupported_reason().empty()
                            ? std::string("unsupported") : p.get_unsupported_reason()));
    if (s.expected_n_partitions != 0
            && static_cast<int64_t>(parts.size()) != s.expected_n_partitions)
        fail(outcome::failed, "expected " + std::to_string(s.expected_n_partitions)
                + " partition(s), got " + std::to_string(parts.size()));
    st.parts = topo_order(parts, avail);

    for (auto &kv : st.lts) {
        const auto &t = kv.second;
        if (!t.has_known_shape())
            fail(outcome::invalid_arguments, "graph input " + std::to_string(kv.first)
                    + " has no known shape");
        if (t.get_layout_type() != ltype::strided)
            kv.second = logical_tensor(t.get_id(), t.get_data_type(), t.get_dims(),
                    crest::dense_strides(t.get_dims()), t.get_property_type());
    }
    for (const auto &kv : st.lts)
        st.inputs[kv.first] = std::make_shared<buffer>(span_bytes(kv.second));

    crest::engine_options eo;
    eo.num_threads = s.threads;
    eo.backend = s.backend == "any" ? "" : s.backend;
    crest::engine eng(crest::engine::kind::cpu, 0, eo);
    auto cps = compile_all(st, eng, false, nullptr);
    if (g.verbose >= 1) {
        std::printf("  compiled:\n");
        print_partitions(st);
    }
    if (s.mode == 'I') return res;

    fill_inputs(st);
    auto outs = alloc_outputs(st, 0x5A);
    if (s.mode == 'P') {
        run_perf(st, eng, cps, outs, res);
        return res;
    }
    execute_all(st, eng, cps, outs);

    // Reference: same inputs, same output layouts, ref backend only.
    crest::engine_options ro;
    ro.num_threads = s.threads;
    ro.backend = "ref";
    crest::engine ref_eng(crest::engine::kind::cpu, 0, ro);
    std::map<size_t, logical_tensor> layouts;
    for (const auto &p : st.parts)
        for (const auto &t : p.get_output_ports()) layouts[t.get_id()] = st.lts.at(t.get_id());
    std::vector<crest::compiled_partition> ref_cps;
    try {
        ref_cps = compile_all(st, ref_eng, true, &layouts);
    } catch (const crest::error &e) {
        fail(outcome::unimplemented, std::string("reference: ") + e.what());
    }
    auto ref_outs = alloc_outputs(st, 0xA5);
    execute_all(st, ref_eng, ref_cps, ref_outs);

    int64_t errors = 0, total = 0;
    for (const auto &p : st.parts) {
        for (const auto &t : p.get_output_ports()) {
            const auto &lt = st.lts.at(t.get_id());
            auto r = compare(lt, outs.at(t.get_id())->data(),
                    ref_outs.at(t.get_id())->data(), rule_for(rec, p, lt.get_data_type()));
            errors += r.errors;
            total += r.total;
            if (g.verbose >= 1)
                for (const auto &smp : r.samples)
                    std::printf("  tensor %zu %s\n", t.get_id(), smp.c_str());
        }
    }
    if (errors)
        fail(outcome::failed, "errors:" + std::to_string(errors)
                + " total:" + std::to_string(total));
    return res;
}

outcome from_status(crest::status st) {
    switch (st) {
        case crest::status::unimplemented: return outcome::unimplemented;
        case crest::status::invalid_arguments:
        case crest::status::invalid_graph:
        case crest::status::invalid_graph_op:
        case crest::status::invalid_shape:
        case crest::status::invalid_data_type: return outcome::invalid_arguments;
        default: return outcome::failed;
    }
}

} // namespace

case_result run_case(const std::string &path, const settings &s, const globals &g) {
    case_result res;
    if (s.mode == 'L') {
        res.st = outcome::listed;
        return res;
    }
    try {
        res = run(path, s, g);
    } catch (const case_error &e) {
        res.st = e.st;
        res.message = e.message;
    } catch (const crest::error &e) {
        res.st = from_status(e.get_status());
        res.message = e.what();
    } catch (const std::bad_alloc &) {
        res.st = outcome::failed;
        res.message = "out of memory";
    } catch (const std::exception &e) {
        res.st = outcome::failed;
        res.message = e.what();
    } catch (...) {
        res.st = outcome::failed;
        res.message = "unknown exception";
    }
    std::fflush(stdout);
    return res;
}

} // namespace benchgraph
