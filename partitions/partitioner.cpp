#include "partitions/partitioner.hpp"

#include <algorithm>
#include <atomic>
#include <set>

#include "partitions/pattern.hpp"

namespace crest::impl {

long graph_view::producer_of(size_t tid) const {
    for (size_t i = 0; i < ops.size(); ++i)
        for (const auto &t : ops[i]->outputs)
            if (t.get_id() == tid) return static_cast<long>(i);
    return -1;
}

std::vector<size_t> graph_view::consumers_of(size_t tid) const {
    std::vector<size_t> out;
    for (size_t i = 0; i < ops.size(); ++i)
        for (const auto &t : ops[i]->inputs)
            if (t.get_id() == tid) {
                out.push_back(i);
                break;
            }
    return out;
}

namespace {

std::vector<pattern> &pattern_table() {
    static std::vector<pattern> t;
    return t;
}

std::string unsupported_reason(const op::impl &o) {
    switch (o.kind) {
        case op::kind::Wildcard:
            return op_label(o) + ": Wildcard ops are not computed by crest; run it elsewhere";
        case op::kind::End:
            return op_label(o) + ": End marks a graph output and computes nothing";
        case op::kind::Unknown:
            return op_label(o) + ": op kind '" + o.kind_name + "' is unknown to crest";
        default:
            return op_label(o) + ": crest has no kernel for " + o.kind_name + " yet";
    }
}

// Ports: inputs are tensors read but not written inside the partition;
// outputs are tensors written inside and read outside or by nobody.
void fill_ports(const graph_view &g, const std::vector<size_t> &members,
        partition::impl &p) {
    std::set<size_t> inside(members.begin(), members.end());
    std::set<size_t> seen;
    for (size_t i : members)
        for (const auto &t : g.ops[i]->inputs) {
            const long prod = g.producer_of(t.get_id());
            if (prod >= 0 && inside.count(static_cast<size_t>(prod))) continue;
            if (seen.insert(t.get_id()).second) p.inputs.push_back(t);
        }
    for (size_t i : members)
        for (const auto &t : g.ops[i]->outputs) {
            const auto users = g.consumers_of(t.get_id());
            const bool external = users.empty()
                    || std::any_of(users.begin(), users.end(),
                            [&](size_t u) { return !inside.count(u); });
            if (external) p.outputs.push_back(t);
        }
}

} // namespace

bool register_pattern(const pattern &p) {
    auto &t = pattern_table();
    t.push_back(p);
    std::stable_sort(t.begin(), t.end(), [](const pattern &a, const pattern &b) {
        return a.priority > b.priority;
    });
    return true;
}

const std::vector<pattern> &registered_patterns() { return pattern_table(); }

std::vector<partition> make_partitions(const graph::impl &g, partition::policy pol) {
    static std::atomic<size_t> next_id {0};
    const graph_view view {g.ops, g.topo_order, g.mode};
    std::vector<bool> taken(g.ops.size(), false);
    std::vector<partition> out;
    for (size_t root : g.topo_order) {
        if (taken[root]) continue;
        auto p = std::make_shared<partition::impl>();
        p->id = next_id++;
        p->ekind = g.ekind;
        p->mode = g.mode;
        std::vector<size_t> members;
        for (const auto &pat : registered_patterns()) {
            if (pat.fuses && pol == partition::policy::debug) continue;
            members = pat.match(view, root, taken);
            if (members.empty()) continue;
            p->supported = true;
            p->pattern_name = pat.name;
            p->compile = pat.compile;
            break;
        }
        if (members.empty()) {
            members = {root};
            p->reason = unsupported_reason(*g.ops[root]);
            p->pattern_name = "unsupported";
        }
        // Members in topological order.
        std::vector<size_t> ordered;
        for (size_t i : g.topo_order)
            if (std::find(members.begin(), members.end(), i) != members.end())
                ordered.push_back(i);
        for (size_t i : ordered) {
            taken[i] = true;
            p->ops.push_back(g.ops[i]);
        }
        fill_ports(view, ordered, *p);
        out.emplace_back(std::shared_ptr<const partition::impl>(std::move(p)));
    }
    return out;
}

} // namespace crest::impl
