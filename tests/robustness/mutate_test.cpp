// Thousands of mutated graph files through the whole front end: the JSON
// reader, build_graph, finalize, get_partitions and (for small shapes)
// compile. Each must load or throw crest::error; anything else (another
// exception, a crash, a hang, a leak under ASan) is a bug.
//
// Deterministic: case i uses seed kBaseSeed + i, with its own PRNG, so a
// failure prints the seed and the mutated text and can be replayed with
//   CREST_MUTATE_SEED=<seed> ./robustness_tests --gtest_filter=*Replay*
// A longer soak: CREST_MUTATE_CASES=100000 CREST_MUTATE_FIRST=1.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "crest/crest.hpp"
#include "src/json/graph_json.hpp"
#include "tests/robustness/mutate.hpp"

namespace crest {
namespace robustness {
namespace {

using nlohmann::json;
using lt = logical_tensor;

constexpr uint64_t kBaseSeed = 20240601;
constexpr int kCases = 4000;
constexpr int64_t kMaxCompileElems = 1 << 20;
constexpr unsigned kCaseTimeoutSec = 30;

// ---- what is running now, for the crash and hang handlers ----

struct current_case {
    uint64_t seed = 0;
    const char *stage = "";
    const std::string *text = nullptr;
};
current_case g_current;

void print_current(const char *why) {
    // Only async-signal-safe calls: this runs from signal handlers.
    char head[160];
    const int n = std::snprintf(head, sizeof(head),
            "\n*** robustness: %s in stage '%s', seed %llu; mutated text:\n", why,
            g_current.stage, static_cast<unsigned long long>(g_current.seed));
    if (n > 0) (void)!write(2, head, static_cast<size_t>(n));
    if (g_current.text)
        (void)!write(2, g_current.text->data(), g_current.text->size());
    (void)!write(2, "\n*** end of mutated text\n", 25);
}

extern "C" void on_fatal_signal(int sig) {
    if (g_current.text) print_current(sig == SIGALRM ? "hang (timeout)" : "fatal signal");
    std::signal(sig, SIG_DFL);
    if (sig == SIGALRM) _exit(3);
    std::raise(sig);
}

extern "C" void on_sanitizer_death() {
    if (g_current.text) print_current("sanitizer error");
}

// GCC's UBSan runtime is separate from ASan's and ignores the death
// callback: make it abort (UBSAN_OPTIONS still wins), so the SIGABRT
// handler prints the case.
extern "C" const char *__ubsan_default_options() {
    return "abort_on_error=1:print_stacktrace=1";
}

// Provided by the sanitizer runtimes; null without them.
extern "C" void __sanitizer_set_death_callback(void (*)(void)) __attribute__((weak));

void install_handlers() {
    static bool done = false;
    if (done) return;
    done = true;
    std::signal(SIGABRT, on_fatal_signal);
    std::signal(SIGALRM, on_fatal_signal);
    if (__sanitizer_set_death_callback) {
        // ASan reports crashes itself, then calls us.
        __sanitizer_set_death_callback(on_sanitizer_death);
    } else {
        for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, on_fatal_signal);
    }
}

// ---- the pipeline ----

struct tally {
    std::map<std::string, int> by_outcome;  // "finalize:invalid_shape" -> n
    int compiled = 0;
    std::vector<std::string> failures;
};

bool small_known(const lt &t) {
    if (!t.has_known_shape()) return false;
    int64_t n = 1;
    for (auto d : t.get_dims())
        if (__builtin_mul_overflow(n, d, &n) || n > kMaxCompileElems) return false;
    return true;
}

// CREST_MUTATE_BACKEND=ref|jit|dnnl limits compile to one backend.
const engine &cpu_engine() {
    static const engine eng = [] {
        engine_options opts;
        if (const char *b = std::getenv("CREST_MUTATE_BACKEND")) opts.backend = b;
        return engine(engine::kind::cpu, 0, opts);
    }();
    return eng;
}

// Returns where it stopped ("compile:ok", "finalize:invalid_graph", ...);
// adds a failure for anything but crest::error.
std::string run_pipeline(const std::string &text, uint64_t seed, tally &t) {
    install_handlers();
    g_current.seed = seed;
    g_current.text = &text;
    auto fail = [&](const std::string &what) {
        std::ostringstream ss;
        ss << "seed " << seed << ", stage " << g_current.stage << ": " << what
           << "\n--- mutated text ---\n" << text << "\n--- end ---";
        t.failures.push_back(ss.str());
        return std::string(g_current.stage) + ":BUG";
    };
    alarm(kCaseTimeoutSec);
    std::string where;
    try {
        g_current.stage = "parse";
        const ::crest::json::graph_record rec = ::crest::json::parse_graph(text, "mutated.json");
        g_current.stage = "write";
        // What was read can be written and read back.
        ::crest::json::parse_graph(::crest::json::write_graph(rec), "rewritten.json");
        g_current.stage = "build";
        graph g = ::crest::json::build_graph(rec);
        g_current.stage = "finalize";
        g.finalize();
        g_current.stage = "partition";
        const std::vector<partition> parts = g.get_partitions();
        g.get_partitions(partition::policy::debug);
        g_current.stage = "compile";
        for (const partition &p : parts) {
            ::crest::json::partition_record(rec, p);
            if (!p.is_supported()) continue;
            const auto ins = p.get_input_ports();
            const auto outs = p.get_output_ports();
            bool small = true;
            for (const auto &x : ins) small = small && small_known(x);
            if (!small) continue;
            std::vector<lt> out_any;
            for (const auto &o : outs)
                out_any.push_back(o.get_ndims() >= 0
                                ? lt(o.get_id(), o.get_data_type(), o.get_dims(),
                                        lt::layout_type::any)
                                : lt(o.get_id(), o.get_data_type(), lt::unknown_ndims,
                                        lt::layout_type::any));
            p.compile(ins, out_any, cpu_engine());
            ++t.compiled;
        }
        where = "done:ok";
    } catch (const error &e) {
        where = std::string(g_current.stage) + ":" + to_string(e.get_status());
        // CREST_MUTATE_VERBOSE=1 lists every refusal, to review statuses and messages.
        static const bool verbose = std::getenv("CREST_MUTATE_VERBOSE") != nullptr;
        if (verbose) std::printf("seed %llu: %s: %s\n", static_cast<unsigned long long>(seed),
                where.c_str(), e.what());
        // Every message says something.
        if (std::strlen(e.what()) == 0) where = fail("crest::error with an empty message");
    } catch (const std::exception &e) {
        where = fail(std::string("non-crest exception: ") + e.what());
    } catch (...) {
        where = fail("unknown exception");
    }
    alarm(0);
    g_current.text = nullptr;
    ++t.by_outcome[where];
    return where;
}

std::string report(const tally &t) {
    std::ostringstream ss;
    for (const auto &kv : t.by_outcome) ss << "  " << kv.first << ": " << kv.second << "\n";
    ss << "  partitions compiled: " << t.compiled << "\n";
    return ss.str();
}

void expect_no_failures(const tally &t) {
    EXPECT_TRUE(t.failures.empty()) << t.failures.size() << " failures; first:\n"
                                    << (t.failures.empty() ? "" : t.failures[0]);
    for (size_t i = 1; i < t.failures.size() && i < 5; ++i)
        ADD_FAILURE() << t.failures[i];
}

std::vector<json> base_documents() {
    std::vector<json> docs;
    for (const std::string &path : case_files()) {
        std::ifstream in(path);
        std::stringstream ss;
        ss << in.rdbuf();
        docs.push_back(json::parse(ss.str()));
    }
    return docs;
}

// ---- the tests ----

TEST(Robustness, OriginalsLoadAndCompile) {
    const auto docs = base_documents();
    if (docs.empty()) GTEST_SKIP() << "no case files found";
    tally t;
    for (const json &d : docs) {
        const std::string text = d.dump(2);
        EXPECT_EQ(run_pipeline(text, 0, t), "done:ok") << text;
    }
    expect_no_failures(t);
}

TEST(Robustness, GeneratedGraphsLoadAndCompile) {
    // Unmutated generated graphs are valid: all of them must compile.
    tally t;
    for (uint64_t s = 0; s < 200; ++s) {
        rng r(kBaseSeed ^ (s * 0x9e3779b97f4a7c15ull));
        const std::string text = generate_graph(r, /*valid=*/true).dump(2);
        const std::string where = run_pipeline(text, s, t);
        EXPECT_EQ(where, "done:ok") << "generated graph " << s << ":\n" << text;
    }
    expect_no_failures(t);
    std::printf("generated:\n%s", report(t).c_str());
}

TEST(Robustness, ThousandsOfMutations) {
    const std::vector<json> docs = base_documents();
    // CREST_MUTATE_CASES=<n> for a longer soak, CREST_MUTATE_FIRST=<seed> to move on.
    const char *n_env = std::getenv("CREST_MUTATE_CASES");
    const char *first_env = std::getenv("CREST_MUTATE_FIRST");
    const int cases = n_env ? std::atoi(n_env) : kCases;
    const uint64_t first = first_env ? std::strtoull(first_env, nullptr, 10) : kBaseSeed;
    tally t;
    for (int i = 0; i < cases; ++i) {
        const uint64_t seed = first + static_cast<uint64_t>(i);
        const std::string text = mutated_case(seed, docs);
        run_pipeline(text, seed, t);
    }
    std::printf("mutations (%d from seed %llu):\n%s", cases,
            static_cast<unsigned long long>(first), report(t).c_str());
    expect_no_failures(t);
    // The mix reaches every stage.
    int reached_compile = t.by_outcome["done:ok"];
    for (const auto &kv : t.by_outcome)
        if (kv.first.rfind("compile:", 0) == 0) reached_compile += kv.second;
    EXPECT_GT(reached_compile, cases / 20) << report(t);
}

TEST(Robustness, Replay) {
    const char *s = std::getenv("CREST_MUTATE_SEED");
    if (!s) GTEST_SKIP() << "set CREST_MUTATE_SEED=<seed> to replay one case";
    const uint64_t seed = std::strtoull(s, nullptr, 10);
    const std::string text = mutated_case(seed, base_documents());
    tally t;
    std::printf("seed %llu:\n%s\noutcome: %s\n", static_cast<unsigned long long>(seed),
            text.c_str(), run_pipeline(text, seed, t).c_str());
    expect_no_failures(t);
}

} // namespace
} // namespace robustness
} // namespace crest
