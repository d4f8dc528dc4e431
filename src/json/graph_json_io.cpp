// Files and the glue between graph records and crest::graph.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "src/json/graph_json.hpp"

namespace crest {
namespace json {

graph_record read_graph_file(const std::string &path) {
    std::FILE *f = std::fopen(path.c_str(), "rb");
    if (!f)
        throw error(status::invalid_arguments,
                path + ": cannot open: " + std::strerror(errno));
    std::string text;
    char buf[1 << 16];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
    // A directory opens but fails to read (EISDIR).
    const int err = std::ferror(f) ? errno : 0;
    std::fclose(f);
    if (err)
        throw error(status::invalid_arguments,
                path + ": cannot read: " + std::strerror(err));
    return parse_graph(text, path);
}

graph build_graph(const graph_record &g) {
    graph result(g.engine_kind, g.fpmath);
    for (const op &o : g.ops) result.add_op(o);
    return result;
}

graph_record partition_record(const graph_record &g, const partition &p) {
    const std::vector<size_t> ids = p.get_ops();
    const std::unordered_set<size_t> wanted(ids.begin(), ids.end());
    graph_record result;
    result.version = g.version;
    result.engine_kind = g.engine_kind;
    result.fpmath = g.fpmath;
    std::unordered_set<size_t> found;
    for (const op &o : g.ops) {
        if (wanted.count(o.get_id()) && found.insert(o.get_id()).second)
            result.ops.push_back(o);
    }
    for (size_t id : ids) {
        if (!found.count(id))
            throw error(status::invalid_arguments,
                    "partition_record: op " + std::to_string(id) + " of partition "
                            + std::to_string(p.get_id())
                            + " is not in the graph record");
    }
    return result;
}

void write_graph_file(const graph_record &g, const std::string &path) {
    const std::string text = write_graph(g);
    std::FILE *f = std::fopen(path.c_str(), "wb");
    if (!f)
        throw error(status::runtime_error,
                path + ": cannot open for writing: " + std::strerror(errno));
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const int err = ok ? 0 : errno;
    if (std::fclose(f) != 0 || !ok)
        throw error(status::runtime_error,
                path + ": cannot write: " + std::strerror(err ? err : errno));
}

} // namespace json
} // namespace crest
