// benchgraph: runs oneDNN Graph JSON cases on crest; see
// spec/benchgraph.md and --help.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <algorithm>
#include <string>
#include <vector>

#include "tools/benchgraph/options.hpp"
#include "tools/benchgraph/runner.hpp"

namespace benchgraph {
namespace {

// A kernel that crashes cannot be caught; the handler at least names the
// case in the log (the line is prepared before the case runs) and then lets
// the signal kill the process as usual.
char crash_line[4096];
size_t crash_len = 0;

extern "C" void on_fatal_signal(int sig) {
    if (crash_len) {
        ssize_t w = ::write(STDOUT_FILENO, crash_line, crash_len);
        (void)w;
    }
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

void arm_crash_line(int idx, const std::string &rep) {
    std::fflush(stdout);
    int n = std::snprintf(crash_line, sizeof crash_line,
            "%d:FAILED (crashed: fatal signal) __REPRO: %s\n", idx, rep.c_str());
    crash_len = n > 0 ? std::min(static_cast<size_t>(n), sizeof crash_line - 1) : 0;
}

// Debian's oneDNN runs on libgomp, whose threads spin GOMP_SPINCOUNT pauses
// (300000 by default: ~6 ms here) before they sleep. On a machine shared
// with other processes, a thread spinning at a barrier for a teammate that
// another process has displaced keeps its core until the next scheduler
// tick, and oneDNN's times land on multiples of 4 ms. 1000 pauses (~20 us)
// still bridge the gap between back-to-back calls: on a quiet machine the
// figures match the default's (100, libgomp's own choice when it sees more
// threads than CPUs, triples the cache-sized cases). libgomp reads the
// variable once, when it is loaded, so the driver re-executes itself with
// it set, unless the user chose OMP_WAIT_POLICY or GOMP_SPINCOUNT
// (doc/benchgraph.md).
void bound_openmp_spin(char **argv) {
    if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
    if (::setenv("GOMP_SPINCOUNT", "1000", 1) != 0) return;
    ::execv("/proc/self/exe", argv);
    ::unsetenv("GOMP_SPINCOUNT");  // no exec: libgomp keeps its default
}

struct totals {
    int tests = 0, passed = 0, skipped = 0, mistrusted = 0, unimplemented = 0,
        invalid_arguments = 0, failed = 0, listed = 0;
    bool unexpected_invalid = false;  // INVALID_ARGUMENTS without --expect-error
};

std::string dir_of(const std::string &path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::string csv_field(const std::string &s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

class driver {
public:
    settings s;
    globals g;
    totals t;

    ~driver() {
        if (csv_) std::fclose(csv_);
    }

    void run_words(const std::vector<std::string> &words,
            const std::string &base_dir, int depth) {
        if (depth > 16) throw usage_error {"--batch nested more than 16 deep"};
        for (const auto &w : words) {
            if (w == "--help" || w == "-h") {
                std::fputs(help_text(), stdout);
                std::exit(0);
            }
            if (w.rfind("--batch=", 0) == 0) {
                std::string name = w.substr(8);
                std::string path = resolve_path(name, base_dir);
                if (path.empty()) throw usage_error {"batch file '" + name + "' not found"};
                run_words(read_batch_words(path), dir_of(path), depth + 1);
            } else if (w.rfind("--case=", 0) == 0) {
                run_one(w.substr(7), base_dir);
            } else if (!parse_option(w, s, g)) {
                throw usage_error {"unknown option '" + w + "' (see --help)"};
            }
        }
    }

private:
    FILE *csv_ = nullptr;

    void run_one(const std::string &name, const std::string &base_dir) {
        const int idx = t.tests++;
        const std::string rep = repro(s, name);
        std::string path = resolve_path(name, base_dir);
        case_result r;
        if (path.empty() && s.mode != 'L') {
            r.st = outcome::invalid_arguments;
            r.message = name + ": cannot open the case file";
        } else {
            arm_crash_line(idx, rep);
            r = run_case(path, s, g);
            crash_len = 0;
        }
        if (s.expect_error && r.st != outcome::invalid_arguments
                && r.st != outcome::listed) {
            r.message = std::string("expected an error, got ")
                    + (r.st == outcome::passed ? "none"
                            : r.st == outcome::unimplemented ? "unimplemented: " + r.message
                            : r.message);
            r.st = outcome::failed;
            r.has_perf = false;
        }
        report(idx, rep, r);
    }

    void report(int idx, const std::string &rep, const case_result &r) {
        const char *label = "PASSED";
        switch (r.st) {
            case outcome::passed: ++t.passed; break;
            case outcome::failed: ++t.failed; label = "FAILED"; break;
            case outcome::unimplemented: ++t.unimplemented; label = "UNIMPLEMENTED"; break;
            case outcome::invalid_arguments:
                ++t.invalid_arguments;
                label = "INVALID_ARGUMENTS";
                if (!s.expect_error) t.unexpected_invalid = true;
                break;
            case outcome::listed: ++t.listed; label = "LISTED"; break;
            case outcome::skipped: ++t.skipped; label = "SKIPPED"; break;
            case outcome::mistrusted: ++t.mistrusted; label = "MISTRUSTED"; break;
        }
        if (r.has_perf) {
            print_perf(idx, rep, r.perf);
        } else if (r.message.empty()) {
            std::printf("%d:%s __REPRO: %s\n", idx, label, rep.c_str());
        } else {
            std::string msg = r.message;
            for (auto &c : msg)
                if (c == '\n') c = ' ';
            std::printf("%d:%s (%s) __REPRO: %s\n", idx, label, msg.c_str(), rep.c_str());
        }
        std::fflush(stdout);
    }

    void print_perf(int idx, const std::string &rep, const perf_figures &p) {
        const double pct = p.roofline_gbps > 0 ? 100.0 * p.gbps / p.roofline_gbps : 0;
        char one[64] = "", ratio[64] = "", wait[64] = "-";
        if (p.has_onednn) {
            std::snprintf(one, sizeof one, "%.4g", p.onednn_ms);
            std::snprintf(ratio, sizeof ratio, "%.2f", p.time_ms > 0 ? p.onednn_ms / p.time_ms : 0);
        }
        if (p.cpu_wait_pct >= 0) std::snprintf(wait, sizeof wait, "%.1f", p.cpu_wait_pct);
        const char *machine = p.quiet ? "quiet" : "busy";
        std::printf("%d:PERF time_ms=%.4g bytes=%lld gbps=%.2f roofline_gbps=%.2f "
                    "pct_roofline=%.1f%% onednn_ms=%s onednn_impl=%s "
                    "speedup_vs_onednn=%s%s cpu_wait_pct=%s machine=%s",
                idx, p.time_ms, static_cast<long long>(p.bytes), p.gbps,
                p.roofline_gbps, pct, p.has_onednn ? one : "-",
                p.has_onednn ? p.onednn_impl.c_str() : "-",
                p.has_onednn ? ratio : "-", p.has_onednn ? "x" : "", wait, machine);
        if (g.verbose >= 2) std::printf(" kernel=%s", p.kernel.c_str());
        std::printf(" __REPRO: %s\n", rep.c_str());
        if (g.csv.empty()) return;
        if (!csv_) {
            csv_ = std::fopen(g.csv.c_str(), "w");
            if (!csv_) throw usage_error {"cannot write --csv file '" + g.csv + "'"};
            std::fprintf(csv_, "case,time_ms,bytes,gbps,roofline_gbps,onednn_ms,"
                               "onednn_impl,pct_roofline,speedup_vs_onednn,kernel,"
                               "cpu_wait_pct,machine\n");
        }
        char one_csv[64] = "";
        if (p.has_onednn) std::snprintf(one_csv, sizeof one_csv, "%.6f", p.onednn_ms);
        std::fprintf(csv_, "%s,%.6f,%lld,%.3f,%.3f,%s,%s,%.2f,%s,%s,%s,%s\n",
                csv_field(rep).c_str(), p.time_ms, static_cast<long long>(p.bytes),
                p.gbps, p.roofline_gbps, one_csv,
                csv_field(p.onednn_impl).c_str(), pct, p.has_onednn ? ratio : "",
                csv_field(p.kernel).c_str(), p.cpu_wait_pct >= 0 ? wait : "", machine);
        std::fflush(csv_);
    }
};

} // namespace
} // namespace benchgraph

int main(int argc, char **argv) {
    using namespace benchgraph;
    bound_openmp_spin(argv);
    std::vector<std::string> words(argv + 1, argv + argc);
    if (words.empty()) {
        std::fputs(help_text(), stdout);
        return 2;
    }
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
        std::signal(sig, on_fatal_signal);
    driver d;
    int rc = 0;
    // --csv may come after the cases on the command line; it names the one
    // file of the run, so take it up front.
    for (const auto &w : words)
        if (w.rfind("--csv=", 0) == 0) d.g.csv = w.substr(6);
    try {
        d.run_words(words, "", 0);
    } catch (const usage_error &e) {
        std::fprintf(stderr, "benchgraph: %s\n", e.message.c_str());
        rc = 2;
    }
    const totals &t = d.t;
    std::printf("tests:%d passed:%d skipped:%d mistrusted:%d unimplemented:%d "
                "invalid_arguments:%d failed:%d listed:%d\n",
            t.tests, t.passed, t.skipped, t.mistrusted, t.unimplemented,
            t.invalid_arguments, t.failed, t.listed);
    if (rc) return rc;
    return (t.failed > 0 || t.unexpected_invalid) ? 1 : 0;
}
