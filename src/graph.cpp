// graph: add_op validates each op against its schema; finalize resolves
// edges, refuses two producers and cycles, and infers shapes in
// topological order.
#include <algorithm>
#include <optional>

#include "partitions/partitioner.hpp"
#include "src/graph_impl.hpp"
#include "src/op_schema.hpp"

namespace crest {

namespace ci = ::crest::impl;
using ci::dims_t;

namespace {

[[noreturn]] void graph_error(status st, const std::string &what) {
    throw error(st, "graph: " + what);
}

std::string tensor_label(const op::impl &o, bool is_input, size_t port) {
    const auto *s = ci::find_op_schema(o.kind);
    const auto &ports = is_input ? (s ? s->inputs : std::vector<ci::port_spec> {})
                                 : (s ? s->outputs : std::vector<ci::port_spec> {});
    const auto &t = is_input ? o.inputs[port] : o.outputs[port];
    std::string name = port < ports.size() ? "'" + ports[port].name + "'"
                                           : std::to_string(port);
    return std::string(is_input ? "input " : "output ") + name + " (id "
            + std::to_string(t.get_id()) + ")";
}

// Known dims of a and b agree (unknown dims match anything).
bool dims_compatible(const dims_t &a, const dims_t &b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i] >= 0 && b[i] >= 0 && a[i] != b[i]) return false;
    return true;
}

logical_tensor with_dims(const logical_tensor &t, const dims_t &d) {
    if (t.get_layout_type() == logical_tensor::layout_type::strided) {
        bool known = true;
        for (auto s : t.get_strides()) known = known && s >= 0;
        const auto &st = t.get_strides().size() == d.size() && known
                ? t.get_strides() : dense_strides(d);
        return logical_tensor(t.get_id(), t.get_data_type(), d, st,
                t.get_property_type());
    }
    const auto lt = t.get_layout_type() == logical_tensor::layout_type::undef
            ? logical_tensor::layout_type::any : t.get_layout_type();
    return logical_tensor(t.get_id(), t.get_data_type(), d, lt,
            t.get_property_type());
}

} // namespace

const char *to_string(fpmath_mode m) {
    switch (m) {
        case fpmath_mode::strict: return "strict";
        case fpmath_mode::bf16: return "bf16";
        case fpmath_mode::f16: return "f16";
        case fpmath_mode::tf32: return "tf32";
        case fpmath_mode::any: return "any";
    }
    return "?";
}

graph::graph(engine::kind ekind, fpmath_mode mode)
    : impl_(std::make_shared<impl>()) {
    if (ekind != engine::kind::cpu)
        graph_error(status::invalid_arguments,
                std::string("engine kind '") + to_string(ekind)
                        + "' is not supported; crest runs on cpu only");
    impl_->ekind = ekind;
    impl_->mode = mode;
}

void graph::add_op(const op &aop, bool allow_exists) {
    if (impl_->finalized)
        graph_error(status::invalid_graph,
                "add_op after finalize; build a new graph instead");
    for (const auto &o : impl_->ops) {
        if (o->id != aop.get_id()) continue;
        if (allow_exists) return;
        graph_error(status::invalid_graph,
                "op id " + std::to_string(o->id) + " is used by "
                        + ci::op_label(*o) + " and by "
                        + ci::op_label(aop.get_impl())
                        + "; expected unique op ids");
    }
    auto copy = std::make_shared<op::impl>(aop.get_impl());
    ci::validate_op(*copy);
    impl_->ops.push_back(std::move(copy));
}

void graph::finalize() {
    if (impl_->finalized) return;
    auto &ops = impl_->ops;
    const size_t n = ops.size();

    // Edges: exactly one producer per tensor id.
    std::map<size_t, std::pair<size_t, size_t>> producer;  // tid -> (op, port)
    for (size_t i = 0; i < n; ++i)
        for (size_t p = 0; p < ops[i]->outputs.size(); ++p) {
            const size_t tid = ops[i]->outputs[p].get_id();
            auto [it, fresh] = producer.emplace(tid, std::make_pair(i, p));
            if (!fresh)
                graph_error(status::invalid_graph,
                        "tensor id " + std::to_string(tid) + " is written by "
                                + ci::op_label(*ops[it->second.first]) + " and by "
                                + ci::op_label(*ops[i])
                                + "; expected one producer per tensor");
        }

    // Topological order (Kahn), stable in insertion order.
    std::vector<std::vector<size_t>> users(n);
    std::vector<size_t> pending(n, 0);
    for (size_t i = 0; i < n; ++i)
        for (const auto &t : ops[i]->inputs) {
            auto it = producer.find(t.get_id());
            if (it == producer.end()) continue;
            users[it->second.first].push_back(i);
            ++pending[i];
        }
    std::vector<size_t> order;
    std::vector<bool> done(n, false);
    while (order.size() < n) {
        size_t next = n;
        for (size_t i = 0; i < n && next == n; ++i)
            if (!done[i] && pending[i] == 0) next = i;
        if (next == n) {
            std::string names;
            for (size_t i = 0; i < n; ++i)
                if (!done[i]) names += (names.empty() ? "" : ", ") + ci::op_label(*ops[i]);
            graph_error(status::invalid_graph,
                    "the ops " + names
                            + " form a cycle (or depend on one); expected an acyclic graph");
        }
        done[next] = true;
        order.push_back(next);
        for (size_t u : users[next]) --pending[u];
    }

    // Shapes, in topological order.
    for (size_t i : order) {
        auto &o = *ops[i];
        for (size_t p = 0; p < o.inputs.size(); ++p) {
            auto it = producer.find(o.inputs[p].get_id());
            if (it == producer.end()) continue;
            const auto &src = ops[it->second.first]->outputs[it->second.second];
            auto &dst = o.inputs[p];
            if (src.get_data_type() != dst.get_data_type())
                ci::fail(status::invalid_data_type, o,
                        tensor_label(o, true, p) + " has data type "
                                + to_string(dst.get_data_type()) + " but "
                                + ci::op_label(*ops[it->second.first])
                                + " writes it as " + to_string(src.get_data_type()));
            if (src.get_ndims() < 0) continue;
            if (dst.get_ndims() >= 0 && !dims_compatible(src.get_dims(), dst.get_dims()))
                ci::fail(status::invalid_shape, o,
                        tensor_label(o, true, p) + " has shape "
                                + ci::dims_to_string(dst.get_dims()) + " but "
                                + ci::op_label(*ops[it->second.first])
                                + " writes it with shape "
                                + ci::dims_to_string(src.get_dims()));
            if (!dst.has_known_shape()) dst = with_dims(dst, src.get_dims());
        }
        const auto *s = ci::find_op_schema(o.kind);
        if (!s || !s->infer) continue;
        std::vector<std::optional<dims_t>> in;
        for (const auto &t : o.inputs)
            in.push_back(t.get_ndims() >= 0 ? std::optional<dims_t>(t.get_dims())
                                            : std::nullopt);
        const auto out = s->infer(o, in);
        for (size_t p = 0; p < o.outputs.size() && p < out.size(); ++p) {
            if (!out[p]) continue;
            auto &t = o.outputs[p];
            if (t.get_ndims() >= 0 && !dims_compatible(t.get_dims(), *out[p]))
                ci::fail(status::invalid_shape, o,
                        tensor_label(o, false, p) + " has shape "
                                + ci::dims_to_string(t.get_dims())
                                + " but shape inference gives "
                                + ci::dims_to_string(*out[p]));
            if (!t.has_known_shape()) t = with_dims(t, *out[p]);
        }
    }
    impl_->topo_order = std::move(order);
    impl_->finalized = true;
}

bool graph::is_finalized() const { return impl_->finalized; }

std::vector<partition> graph::get_partitions(partition::policy pol) {
    if (!impl_->finalized)
        graph_error(status::invalid_graph,
                "get_partitions before finalize; call finalize() first");
    return ci::make_partitions(*impl_, pol);
}

engine::kind graph::get_engine_kind() const { return impl_->ekind; }
fpmath_mode graph::get_fpmath_mode() const { return impl_->mode; }

std::vector<op> graph::get_ops() const {
    std::vector<op> out;
    for (const auto &o : impl_->ops) {
        op copy(o->id, o->kind_name, o->name);
        copy.add_inputs(o->inputs);
        copy.add_outputs(o->outputs);
        for (const auto &[k, v] : o->attrs) copy.set_attr(k, v);
        out.push_back(std::move(copy));
    }
    return out;
}

} // namespace crest
