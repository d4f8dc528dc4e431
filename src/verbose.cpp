#include "src/verbose.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace crest::impl {

bool verbose_enabled() {
    static const bool on = [] {
        const char *v = std::getenv("CREST_VERBOSE");
        return v && *v && std::strcmp(v, "0") != 0;
    }();
    return on;
}

namespace {
void describe(std::ostringstream &ss, const char *role, const logical_tensor &t) {
    ss << role << t.get_id() << ":" << to_string(t.get_data_type()) << ":";
    const auto &d = t.get_dims();
    for (size_t i = 0; i < d.size(); ++i) ss << (i ? "x" : "") << d[i];
    if (d.empty()) ss << "scalar";
    ss << ":";
    const auto &s = t.get_strides();
    for (size_t i = 0; i < s.size(); ++i) ss << (i ? "x" : "") << s[i];
    ss << " ";
}
} // namespace

std::string describe_tensors(const std::vector<logical_tensor> &ins,
        const std::vector<logical_tensor> &outs) {
    std::ostringstream ss;
    for (const auto &t : ins) describe(ss, "in", t);
    for (const auto &t : outs) describe(ss, "out", t);
    return ss.str();
}

void verbose_exec(const std::string &kernel, const std::string &pattern,
        const std::string &tensors, double ms) {
    std::printf("crest_verbose,exec,cpu,%s,%s,%s,%.4f\n", kernel.c_str(),
            pattern.c_str(), tensors.c_str(), ms);
    std::fflush(stdout);
}

} // namespace crest::impl
