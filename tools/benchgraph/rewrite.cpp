#include "tools/benchgraph/rewrite.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <numeric>

#include "crest/error.hpp"

namespace benchgraph {

using crest::logical_tensor;
using dt_t = logical_tensor::data_type;
using dims = logical_tensor::dims;

namespace {

[[noreturn]] void bad(const std::string &msg) {
    throw crest::error(crest::status::invalid_arguments, msg);
}

int64_t to_int(const std::string &s, const std::string &what) {
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || errno != 0)
        bad(what + ": '" + s + "' is not an integer");
    return v;
}

float to_float(const std::string &s, const std::string &what) {
    char *end = nullptr;
    float v = std::strtof(s.c_str(), &end);
    if (s.empty() || *end != '\0') bad(what + ": '" + s + "' is not a number");
    return v;
}

bool is_float(dt_t d) {
    return d == dt_t::f32 || d == dt_t::bf16 || d == dt_t::f16;
}

dt_t dt_from(const std::string &name) {
    dt_t d = dt_t::undef;
    if (!crest::json::dtype_from_name(name, d)) bad("--dt: unknown type " + name);
    return d;
}

// Dense strides with the dims ordered outermost first by `order`.
dims strides_in_order(const dims &d, const std::vector<int> &order) {
    dims s(d.size(), 1);
    int64_t acc = 1;
    for (size_t k = order.size(); k-- > 0;) {
        s[order[k]] = acc;
        acc *= std::max<int64_t>(d[order[k]], 1);
    }
    return s;
}

// The stride order of an existing strided tensor (outermost first; ties
// keep the logical order) so that --mb and tagless --in-shapes keep e.g.
// channels-last strides channels-last.
std::vector<int> stride_order(const dims &strides) {
    std::vector<int> order(strides.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
            [&](int a, int b) { return strides[a] > strides[b]; });
    return order;
}

struct shape_spec {
    dims d;
    std::vector<int> order;  // empty: keep the old order / row-major
};

shape_spec parse_shape(const std::string &text) {
    shape_spec r;
    std::string shape = text, tag;
    auto star = text.find('*');
    if (star != std::string::npos) {
        shape = text.substr(0, star);
        tag = text.substr(star + 1);
    }
    if (shape != "-") {
        for (const auto &x : split(shape, 'x')) {
            int64_t v = to_int(x, "--in-shapes");
            if (v < 0) bad("--in-shapes: negative dim in '" + text + "'");
            r.d.push_back(v);
        }
    }
    if (!tag.empty()) {
        if (tag.size() != r.d.size())
            bad("--in-shapes: tag '" + tag + "' does not match rank "
                    + std::to_string(r.d.size()));
        std::vector<bool> seen(tag.size(), false);
        for (char c : tag) {
            int i = c - 'a';
            if (i < 0 || i >= static_cast<int>(tag.size()) || seen[i])
                bad("--in-shapes: bad tag '" + tag + "'");
            seen[i] = true;
            r.order.push_back(i);
        }
    }
    return r;
}

// The attribute's type: the existing value's, else what the op kinds of
// this project declare.
crest::attribute_value parse_attr(const std::string &name,
        const std::string &value, const crest::attribute_value *old) {
    const std::string what = "--op-attrs " + name;
    int kind = -1;  // index in attribute_value
    if (old) {
        kind = static_cast<int>(old->index());
    } else if (name == "axes") {
        kind = 1;
    } else if (name == "keep_dims" || name == "select_last_index") {
        kind = 4;
    } else if (name == "axis") {
        kind = 0;
    } else if (name == "min" || name == "max" || name == "alpha") {
        kind = 2;
    } else if (name == "auto_broadcast" || name == "mode") {
        kind = 5;
    } else {
        bad(what + ": unknown attribute, its type cannot be guessed");
    }
    switch (kind) {
        case 0: return to_int(value, what);
        case 1: return parse_int_list(value, what);
        case 2: return to_float(value, what);
        case 3: {
            std::vector<float> v;
            if (!value.empty())
                for (const auto &x : split(value, 'x'))
                    v.push_back(to_float(x, what));
            return v;
        }
        case 4:
            if (value == "0" || value == "false") return false;
            if (value == "1" || value == "true") return true;
            bad(what + ": '" + value + "' is not a bool (0 or 1)");
        default: return value;
    }
}

} // namespace

std::vector<int64_t> parse_int_list(const std::string &text,
        const std::string &what) {
    std::vector<int64_t> v;
    if (text.empty()) return v;
    // 'x' separates; a leading '-' belongs to the number.
    for (const auto &x : split(text, 'x')) v.push_back(to_int(x, what));
    return v;
}

std::map<size_t, std::vector<int64_t>> parse_input_values(
        const std::string &spec) {
    std::map<size_t, std::vector<int64_t>> r;
    if (spec.empty()) return r;
    for (const auto &item : split(spec, '+')) {
        auto colon = item.find(':');
        if (colon == std::string::npos)
            bad("--input-values: expected ID:V1xV2..., got '" + item + "'");
        int64_t id = to_int(item.substr(0, colon), "--input-values id");
        r[static_cast<size_t>(id)]
                = parse_int_list(item.substr(colon + 1), "--input-values");
    }
    return r;
}

std::set<size_t> produced_ids(const crest::json::graph_record &rec) {
    std::set<size_t> out;
    for (const auto &o : rec.ops)
        for (const auto &t : o.get_outputs()) out.insert(t.get_id());
    return out;
}

std::vector<size_t> graph_input_ids(const crest::json::graph_record &rec) {
    auto produced = produced_ids(rec);
    std::vector<size_t> ids;
    for (const auto &o : rec.ops)
        for (const auto &t : o.get_inputs())
            if (!produced.count(t.get_id())
                    && std::find(ids.begin(), ids.end(), t.get_id()) == ids.end())
                ids.push_back(t.get_id());
    return ids;
}

void apply_rewrites(crest::json::graph_record &rec, const settings &s) {
    if (s.fpmath == "strict") rec.fpmath = crest::fpmath_mode::strict;
    if (s.fpmath == "any") rec.fpmath = crest::fpmath_mode::any;

    const bool reshape = !s.in_shapes.empty() || s.mb != 0 || !s.op_attrs.empty();
    if (s.dt.empty() && !reshape) return;

    const auto produced = produced_ids(rec);
    const auto inputs = graph_input_ids(rec);
    std::set<size_t> all_ids;
    for (const auto &o : rec.ops) {
        for (const auto &t : o.get_inputs()) all_ids.insert(t.get_id());
        for (const auto &t : o.get_outputs()) all_ids.insert(t.get_id());
    }

    // --dt
    bool dt_all = false;
    dt_t dt_global = dt_t::undef;
    std::map<size_t, dt_t> dt_by_id;
    if (!s.dt.empty()) {
        if (s.dt.find(':') == std::string::npos) {
            dt_all = true;
            dt_global = dt_from(s.dt);
        } else {
            for (const auto &item : split(s.dt, '+')) {
                auto colon = item.find(':');
                auto id = static_cast<size_t>(to_int(item.substr(0, colon), "--dt id"));
                if (!all_ids.count(id))
                    bad("--dt: no tensor with id " + std::to_string(id));
                dt_by_id[id] = dt_from(item.substr(colon + 1));
            }
        }
    }

    // --in-shapes
    std::map<size_t, shape_spec> shapes;
    if (!s.in_shapes.empty()) {
        for (const auto &item : split(s.in_shapes, '+')) {
            auto colon = item.find(':');
            if (colon == std::string::npos)
                bad("--in-shapes: expected ID:SHAPE[*TAG], got '" + item + "'");
            auto id = static_cast<size_t>(to_int(item.substr(0, colon), "--in-shapes id"));
            if (std::find(inputs.begin(), inputs.end(), id) == inputs.end())
                bad("--in-shapes: tensor " + std::to_string(id)
                        + " is not an input of the graph");
            shapes[id] = parse_shape(item.substr(colon + 1));
        }
    }

    // --op-attrs: op id -> (name, value) in order
    std::map<size_t, std::vector<std::pair<std::string, std::string>>> attrs;
    if (!s.op_attrs.empty()) {
        for (const auto &item : split(s.op_attrs, '+')) {
            auto colon = item.find(':');
            if (colon == std::string::npos)
                bad("--op-attrs: expected ID:NAME:VALUE, got '" + item + "'");
            auto id = static_cast<size_t>(to_int(item.substr(0, colon), "--op-attrs id"));
            bool found = false;
            for (const auto &o : rec.ops) found = found || o.get_id() == id;
            if (!found) bad("--op-attrs: no op with id " + std::to_string(id));
            for (const auto &nv : split(item.substr(colon + 1), '*')) {
                auto c2 = nv.find(':');
                if (c2 == std::string::npos || c2 == 0)
                    bad("--op-attrs: expected NAME:VALUE, got '" + nv + "'");
                attrs[id].emplace_back(nv.substr(0, c2), nv.substr(c2 + 1));
            }
        }
    }

    auto rewrite_lt = [&](const logical_tensor &t) {
        const size_t id = t.get_id();
        dt_t d = t.get_data_type();
        if (dt_by_id.count(id)) d = dt_by_id[id];
        else if (dt_all && is_float(d)) d = dt_global;
        if (produced.count(id) && reshape) {
            // Re-inferred by finalize; the layout is chosen at compile.
            return logical_tensor(id, d, logical_tensor::unknown_ndims,
                    logical_tensor::layout_type::any, t.get_property_type());
        }
        dims nd = t.get_dims();
        dims ns = t.get_strides();
        bool strided = t.get_layout_type() == logical_tensor::layout_type::strided;
        bool changed = false;
        auto it = shapes.find(id);
        if (it != shapes.end()) {
            const auto &sp = it->second;
            std::vector<int> order = sp.order;
            if (order.empty()) {
                if (strided && ns.size() == sp.d.size()
                        && t.has_known_shape())
                    order = stride_order(ns);
                else {
                    order.resize(sp.d.size());
                    std::iota(order.begin(), order.end(), 0);
                }
            }
            nd = sp.d;
            ns = strides_in_order(nd, order);
            strided = strided || !sp.order.empty()
                    || t.get_layout_type() == logical_tensor::layout_type::undef;
            changed = true;
        }
        if (s.mb > 0 && !produced.count(id) && !nd.empty() && nd[0] >= 0) {
            std::vector<int> order = (ns.size() == nd.size())
                    ? stride_order(ns) : std::vector<int>();
            if (order.empty()) {
                order.resize(nd.size());
                std::iota(order.begin(), order.end(), 0);
            }
            nd[0] = s.mb;
            ns = strides_in_order(nd, order);
            changed = true;
        }
        if (!changed && d == t.get_data_type()) return t;
        if (!changed)
            return strided ? logical_tensor(id, d, nd, ns, t.get_property_type())
                           : (t.get_ndims() < 0
                                   ? logical_tensor(id, d, t.get_ndims(),
                                           t.get_layout_type(), t.get_property_type())
                                   : logical_tensor(id, d, nd, t.get_layout_type(),
                                           t.get_property_type()));
        if (strided) return logical_tensor(id, d, nd, ns, t.get_property_type());
        return logical_tensor(id, d, nd, logical_tensor::layout_type::any,
                t.get_property_type());
    };

    std::vector<crest::op> out;
    out.reserve(rec.ops.size());
    for (const auto &o : rec.ops) {
        crest::op n(o.get_id(), o.get_kind_name(), o.get_name());
        for (const auto &kv : o.get_attrs()) n.set_attr(kv.first, kv.second);
        auto ai = attrs.find(o.get_id());
        if (ai != attrs.end()) {
            for (const auto &nv : ai->second) {
                auto old = o.get_attrs().find(nv.first);
                n.set_attr(nv.first,
                        parse_attr(nv.first, nv.second,
                                old == o.get_attrs().end() ? nullptr
                                                           : &old->second));
            }
        }
        for (const auto &t : o.get_inputs()) n.add_input(rewrite_lt(t));
        for (const auto &t : o.get_outputs()) n.add_output(rewrite_lt(t));
        out.push_back(n);
    }
    rec.ops = std::move(out);
}

} // namespace benchgraph
