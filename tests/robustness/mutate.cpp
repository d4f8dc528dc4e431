// Generators and mutators of graph files. Every choice comes from the rng,
// so a seed names one case for good.
#include "tests/robustness/mutate.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

#include "tests/case_files.hpp"

namespace crest {
namespace robustness {

using nlohmann::json;

namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

std::vector<int64_t> dense(const std::vector<int64_t> &dims) {
    std::vector<int64_t> s(dims.size());
    int64_t acc = 1;
    for (size_t i = dims.size(); i-- > 0;) {
        s[i] = acc;
        acc *= std::max<int64_t>(dims[i], 1);
    }
    return s;
}

// Strides of a dense tensor whose dims are laid out in a random order.
std::vector<int64_t> permuted(rng &r, const std::vector<int64_t> &dims) {
    std::vector<size_t> order(dims.size());
    std::iota(order.begin(), order.end(), 0);
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[r.below(i)]);
    std::vector<int64_t> s(dims.size());
    int64_t acc = 1;
    for (size_t k = order.size(); k-- > 0;) {
        s[order[k]] = acc;
        acc *= std::max<int64_t>(dims[order[k]], 1);
    }
    return s;
}

json tensor(size_t id, const std::string &dtype, const std::vector<int64_t> &dims,
        const std::vector<int64_t> &strides) {
    return json {{"id", id}, {"dtype", dtype}, {"shape", dims}, {"stride", strides},
            {"layout_type", "strided"}, {"property_type", "undef"}};
}

json make_op(size_t id, const std::string &name, const std::string &kind) {
    return json {{"id", id}, {"name", name}, {"kind", kind}, {"attrs", json::object()},
            {"inputs", json::array()}, {"outputs", json::array()}};
}

json attr(const char *type, const json &value) {
    return json {{"type", type}, {"value", value}};
}

// ---- structural mutations ----

struct node {
    json *self;
    json *parent;  // null for the root
    std::string key;  // in an object parent
    size_t index;  // in an array parent
};

void collect(json &j, json *parent, const std::string &key, size_t index,
        std::vector<node> &out) {
    out.push_back({&j, parent, key, index});
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it)
            collect(it.value(), &j, it.key(), 0, out);
    } else if (j.is_array()) {
        for (size_t i = 0; i < j.size(); ++i) collect(j[i], &j, "", i, out);
    }
}

std::vector<node> nodes_of(json &doc) {
    std::vector<node> out;
    collect(doc, nullptr, "", 0, out);
    return out;
}

// Nodes reached by key, e.g. every "shape".
std::vector<node> with_key(json &doc, const std::string &key) {
    std::vector<node> out;
    for (const node &n : nodes_of(doc))
        if (n.parent && n.parent->is_object() && n.key == key) out.push_back(n);
    return out;
}

// Every logical tensor object (in an inputs or outputs array).
std::vector<json *> tensors_of(json &doc) {
    std::vector<json *> out;
    if (!doc.is_object() || !doc.contains("graph") || !doc["graph"].is_array()) return out;
    for (auto &o : doc["graph"]) {
        if (!o.is_object()) continue;
        for (const char *k : {"inputs", "outputs"})
            if (o.contains(k) && o[k].is_array())
                for (auto &t : o[k])
                    if (t.is_object()) out.push_back(&t);
    }
    return out;
}

json odd_value(rng &r) {
    switch (r.below(16)) {
        case 0: return nullptr;
        case 1: return true;
        case 2: return "x";
        case 3: return 1.5;
        case 4: return -1;
        case 5: return 0;
        case 6: return int64_t(1) << 62;
        case 7: return kI64Min;
        case 8: return std::numeric_limits<uint64_t>::max();
        case 9: return json::array();
        case 10: return json::object();
        case 11: return json {1, 2};
        case 12: return "ReduceMax";
        case 13: return std::string(300, 'z');
        case 14: return -1e300;
        default: return "f32";
    }
}

int64_t odd_dim(rng &r) {
    const int64_t vals[] = {int64_t(1) << 62, int64_t(1) << 40, int64_t(1) << 31,
            kI64Max, -1, -2, kI64Min, 0, 1 << 20, int64_t(1) << 32, 3};
    return vals[r.below(sizeof(vals) / sizeof(vals[0]))];
}

const std::vector<std::string> &all_kinds() {
    static const std::vector<std::string> kinds = {"ReduceMax", "Maximum", "ArgMax",
            "Add", "Subtract", "Multiply", "Divide", "Minimum", "Abs", "Clamp", "Exp",
            "GELU", "LeakyReLU", "Log", "ReLU", "Sigmoid", "Sqrt", "Square", "Tanh",
            "Wildcard", "End", "Convolution", "", "reducemax"};
    return kinds;
}

void mutate_structure(rng &r, json &doc) {
    std::vector<node> all = nodes_of(doc);
    std::vector<json *> lts = tensors_of(doc);
    json *ops = (doc.is_object() && doc.contains("graph") && doc["graph"].is_array())
            ? &doc["graph"]
            : nullptr;
    switch (r.below(16)) {
        case 0: {  // delete a key or an array element
            const node &n = all[r.below(all.size())];
            if (!n.parent) return;
            if (n.parent->is_object()) n.parent->erase(n.key);
            else n.parent->erase(n.index);
            return;
        }
        case 1: {  // a value of the wrong type
            const node &n = all[r.below(all.size())];
            *n.self = odd_value(r);
            return;
        }
        case 2:
        case 3: {  // huge, negative, zero dims; 2^40 x 2^40
            auto shapes = with_key(doc, "shape");
            if (shapes.empty()) return;
            json &s = *shapes[r.below(shapes.size())].self;
            if (!s.is_array() || s.empty()) return;
            s[r.below(s.size())] = odd_dim(r);
            if (r.percent(40)) s[r.below(s.size())] = int64_t(1) << 40;
            // Without strides the core makes dense ones from these dims.
            json *owner = nullptr;
            for (const node &n : all)
                if (n.self == &s) owner = n.parent;
            if (owner && r.percent(40)) owner->erase("stride");
            else if (owner && r.percent(20)) (*owner)["layout_type"] = "any";
            return;
        }
        case 4: {  // odd strides or strides of the wrong length
            auto strides = with_key(doc, "stride");
            if (strides.empty()) return;
            json &s = *strides[r.below(strides.size())].self;
            if (!s.is_array()) return;
            if (s.empty() || r.percent(30)) {
                if (r.percent(50) && !s.empty()) s.erase(s.size() - 1);
                else s.push_back(1);
            } else {
                const int64_t vals[] = {-1, -5, 0, int64_t(1) << 62, kI64Max, 7};
                s[r.below(s.size())] = vals[r.below(6)];
            }
            return;
        }
        case 5:
        case 6: {  // tensor ids: duplicated, swapped, dangling
            if (lts.empty()) return;
            json &t = *lts[r.below(lts.size())];
            if (r.percent(70)) t["id"] = (*lts[r.below(lts.size())])["id"];
            else t["id"] = r.percent(50) ? json(r.below(1000000)) : json(r.next());
            return;
        }
        case 7: {  // op ids duplicated
            if (!ops || ops->empty()) return;
            json &a = (*ops)[r.below(ops->size())];
            const json &b = (*ops)[r.below(ops->size())];
            if (a.is_object() && b.is_object() && b.contains("id")) a["id"] = b["id"];
            return;
        }
        case 8: {  // a cycle: the first op reads the last op's output
            if (!ops || ops->empty()) return;
            json &first = (*ops)[0];
            json &last = (*ops)[ops->size() - 1];
            if (!first.is_object() || !last.is_object()) return;
            if (!first.contains("inputs") || !first["inputs"].is_array()
                    || first["inputs"].empty() || !last.contains("outputs")
                    || !last["outputs"].is_array() || last["outputs"].empty())
                return;
            json &in = first["inputs"][0];
            const json &out = last["outputs"][0];
            if (in.is_object() && out.is_object() && out.contains("id")) {
                if (r.percent(50)) in = out;  // same shape too: only the cycle is wrong
                else in["id"] = out["id"];
            }
            return;
        }
        case 9: {  // axes and axis out of range, repeated, huge
            auto attrs = with_key(doc, "attrs");
            if (attrs.empty()) return;
            json &a = *attrs[r.below(attrs.size())].self;
            if (!a.is_object()) return;
            const int64_t vals[] = {-10, -5, -4, -1, 0, 1, 3, 4, 5, 9, int64_t(1) << 62,
                    kI64Min, kI64Max};
            if (r.percent(50)) {
                json v = json::array();
                const size_t n = r.below(5);
                for (size_t i = 0; i < n; ++i) v.push_back(vals[r.below(13)]);
                a["axes"] = attr("s64[]", v);
            } else {
                a["axis"] = attr("s64", vals[r.below(13)]);
            }
            return;
        }
        case 10: {  // attributes of another type, unknown ones, odd strings
            auto attrs = with_key(doc, "attrs");
            if (attrs.empty()) return;
            json &a = *attrs[r.below(attrs.size())].self;
            if (!a.is_object()) return;
            const char *types[] = {"s64", "s64[]", "f32", "f32[]", "bool", "string"};
            const char *names[] = {"axes", "keep_dims", "auto_broadcast", "axis",
                    "select_last_index", "min", "max", "alpha", "mode", "unknown_attr"};
            const std::string name = names[r.below(10)];
            const int choice = static_cast<int>(r.below(4));
            if (choice == 0 && a.contains(name) && a[name].is_object())
                a[name]["type"] = types[r.below(6)];
            else if (choice == 1)
                a[name] = attr("string", r.pick(std::vector<std::string> {"none", "numpy",
                                                 "erf", "tanh", "", "x"}));
            else if (choice == 2)
                a[name] = attr("f32", r.pick(std::vector<double> {0.0, -1.0, 1e30, -3.4e38}));
            else
                a.erase(name);
            return;
        }
        case 11: {  // data types, valid and not
            if (lts.empty()) return;
            const std::vector<std::string> dts = {"f32", "bf16", "f16", "s32", "s8", "u8",
                    "boolean", "s64", "f64", "undef", "F32"};
            (*lts[r.below(lts.size())])["dtype"] = r.pick(dts);
            return;
        }
        case 12: {  // layouts, properties and unknown ranks
            if (lts.empty()) return;
            json &t = *lts[r.below(lts.size())];
            switch (r.below(4)) {
                case 0: t["layout_type"] = r.percent(50) ? "any" : "undef"; break;
                case 1: t["property_type"] = r.percent(50) ? "constant" : "variable"; break;
                case 2: t["ndims"] = -1; break;
                default: t["shape"] = json::array(); break;
            }
            return;
        }
        case 13: {  // kinds, known and not
            if (!ops || ops->empty()) return;
            json &o = (*ops)[r.below(ops->size())];
            if (o.is_object()) o["kind"] = r.pick(all_kinds());
            return;
        }
        case 14: {  // whole ops and ports: duplicated, dropped, swapped
            if (!ops || ops->empty()) return;
            const size_t i = r.below(ops->size());
            json &o = (*ops)[i];
            switch (r.below(5)) {
                case 0: ops->push_back(json((*ops)[i])); break;
                case 1: ops->erase(i); break;
                case 2:
                    if (o.is_object() && o.contains("inputs") && o.contains("outputs"))
                        std::swap(o["inputs"], o["outputs"]);
                    break;
                case 3:
                    if (o.is_object() && o.contains("inputs") && o["inputs"].is_array()
                            && !lts.empty())
                        o["inputs"].push_back(json(*lts[r.below(lts.size())]));
                    break;
                default:
                    if (o.is_object()) o[r.percent(50) ? "inputs" : "outputs"] = json::array();
                    break;
            }
            return;
        }
        default: {  // a rank that disagrees: add or drop a dim
            auto shapes = with_key(doc, "shape");
            if (shapes.empty()) return;
            json &s = *shapes[r.below(shapes.size())].self;
            if (!s.is_array()) return;
            if (!s.empty() && r.percent(50)) s.erase(s.size() - 1);
            else
                for (int k = 0, n = r.percent(20) ? 12 : 1; k < n; ++k) s.push_back(2);
            return;
        }
    }
}

// ---- text mutations ----

void mutate_text(rng &r, std::string &text) {
    if (text.empty()) return;
    switch (r.below(6)) {
        case 0: text.resize(r.below(text.size())); return;
        case 1:
            for (int k = 0, n = 1 + static_cast<int>(r.below(4)); k < n; ++k)
                text[r.below(text.size())] = static_cast<char>(r.below(256));
            return;
        case 2: {
            static const char set[] = "{}[],:\"0123456789e.-\\ ";
            text.insert(text.begin() + static_cast<std::ptrdiff_t>(r.below(text.size())),
                    set[r.below(sizeof(set) - 1)]);
            return;
        }
        case 3: {
            const size_t at = r.below(text.size());
            text.erase(at, 1 + r.below(40));
            return;
        }
        case 4: {  // a number replaced by one at or past the limits
            std::vector<size_t> starts;
            for (size_t i = 0; i < text.size(); ++i)
                if (isdigit(static_cast<unsigned char>(text[i]))
                        && (i == 0 || !isdigit(static_cast<unsigned char>(text[i - 1]))))
                    starts.push_back(i);
            if (starts.empty()) return;
            const size_t at = r.pick(starts);
            size_t end = at;
            while (end < text.size() && isdigit(static_cast<unsigned char>(text[end]))) ++end;
            static const std::vector<std::string> nums = {"99999999999999999999999",
                    "1e999", "-0", "1.5", "-9223372036854775809", "18446744073709551615",
                    "4611686018427387904", "9223372036854775807", "1e-999", "0.0"};
            text.replace(at, end - at, r.pick(nums));
            return;
        }
        default: {  // a slice copied elsewhere
            const size_t from = r.below(text.size());
            const std::string slice = text.substr(from, 1 + r.below(80));
            text.insert(r.below(text.size()), slice);
            return;
        }
    }
}

} // namespace

std::vector<std::string> case_files() {
    std::vector<std::string> out;
    for (const char *name : {"reducemax.json", "max.json",
                 "reduction_post_ops_max_chain_fusion.json"}) {
        std::string p = test::find_case_file(name);
        if (!p.empty()) out.push_back(std::move(p));
    }
    return out;
}

json generate_graph(rng &r, bool valid) {
    (void)valid;  // mutations do the breaking
    json ops = json::array();
    size_t next_tid = 0, next_oid = 1;
    const std::vector<std::string> float_dts = {"f32", "f32", "f32", "bf16", "f16"};
    const std::string dtype = r.pick(float_dts);

    const int64_t rank = r.between(0, 5);
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < rank; ++i) dims.push_back(r.percent(4) ? 0 : r.between(1, 6));
    const json src =
            tensor(next_tid++, dtype, dims, r.percent(60) ? dense(dims) : permuted(r, dims));

    const bool arg_max = rank > 0 && r.percent(15);
    std::vector<int64_t> reduced;
    std::vector<int64_t> out_dims;
    const bool keep = r.percent(50);
    if (arg_max) {
        reduced.push_back(r.between(0, rank - 1));
    } else {
        for (int64_t a = 0; a < rank; ++a)
            if (r.percent(50)) reduced.push_back(a);
        if (reduced.empty() && rank > 0 && r.percent(80)) reduced.push_back(r.between(0, rank - 1));
    }
    for (int64_t d = 0; d < rank; ++d) {
        const bool red = std::find(reduced.begin(), reduced.end(), d) != reduced.end();
        if (!red) out_dims.push_back(dims[d]);
        else if (keep) out_dims.push_back(1);
    }
    // Empty axes mean identity (ops.md).
    if (!arg_max && reduced.empty()) out_dims = dims;
    std::vector<int64_t> axes = reduced;
    for (auto &a : axes)
        if (r.percent(30)) a -= rank;  // the negative spelling

    json first = make_op(next_oid, arg_max ? "ARGMAX_0" : "REDUCTION_0",
            arg_max ? "ArgMax" : "ReduceMax");
    next_oid += 2048;
    if (arg_max) {
        first["attrs"]["axis"] = attr("s64", axes[0]);
        first["attrs"]["keep_dims"] = attr("bool", keep ? 1 : 0);
        if (r.percent(30)) first["attrs"]["select_last_index"] = attr("bool", true);
    } else {
        first["attrs"]["axes"] = attr("s64[]", axes);
        first["attrs"]["keep_dims"] = attr("bool", keep ? 1 : 0);
    }
    first["inputs"].push_back(src);
    size_t cur = next_tid++;
    first["outputs"].push_back(tensor(cur, arg_max ? (r.percent(50) ? "s64" : "s32") : dtype,
            out_dims, dense(out_dims)));
    ops.push_back(first);

    // Post-ops only after a float result.
    const int n_post = arg_max ? 0 : static_cast<int>(r.below(4));
    const std::vector<std::string> binaries = {"Add", "Subtract", "Multiply", "Divide",
            "Maximum", "Minimum"};
    const std::vector<std::string> unaries = {"ReLU", "Abs", "Exp", "Sigmoid", "Tanh",
            "Sqrt", "Square", "Log", "GELU", "Clamp", "LeakyReLU"};
    for (int k = 0; k < n_post; ++k) {
        const bool binary = r.percent(60);
        const std::string kind = binary ? r.pick(binaries) : r.pick(unaries);
        json o = make_op(next_oid, (binary ? "BINARY_" : "UNARY_") + std::to_string(k + 1),
                kind);
        next_oid += 2048;
        o["inputs"].push_back(tensor(cur, dtype, out_dims, dense(out_dims)));
        if (binary) {
            o["attrs"]["auto_broadcast"] = attr("string", "numpy");
            std::vector<int64_t> d1;
            const size_t skip = r.percent(20) ? r.below(out_dims.size() + 1) : 0;
            for (size_t i = skip; i < out_dims.size(); ++i)
                d1.push_back(r.percent(50) ? 1 : out_dims[i]);
            o["inputs"].push_back(tensor(next_tid++, dtype, d1, dense(d1)));
        } else if (kind == "Clamp") {
            o["attrs"]["min"] = attr("f32", -1.0);
            o["attrs"]["max"] = attr("f32", 1.5);
        } else if (kind == "LeakyReLU") {
            o["attrs"]["alpha"] = attr("f32", 0.01);
        } else if (kind == "GELU") {
            o["attrs"]["mode"] = attr("string", r.percent(50) ? "erf" : "tanh");
        }
        cur = next_tid++;
        o["outputs"].push_back(tensor(cur, dtype, out_dims, dense(out_dims)));
        ops.push_back(o);
    }
    return json {{"version", "3.0.0"}, {"engine_kind", "cpu"}, {"fpmath_mode", "strict"},
            {"graph", ops}};
}

std::string mutated_case(uint64_t seed, const std::vector<json> &docs) {
    rng r(seed);
    json doc = (docs.empty() || r.percent(40)) ? generate_graph(r, true)
                                               : docs[r.below(docs.size())];
    const int structural = r.percent(85) ? 1 + static_cast<int>(r.below(3)) : 0;
    for (int i = 0; i < structural; ++i) mutate_structure(r, doc);
    std::string text = doc.dump(r.percent(50) ? 2 : -1, ' ', false,
            json::error_handler_t::replace);
    if (structural == 0 || r.percent(15)) mutate_text(r, text);
    return text;
}

} // namespace robustness
} // namespace crest
