#include "tools/benchgraph/options.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#ifndef CREST_INPUTS_DIR
#define CREST_INPUTS_DIR "benchdnn_inputs/graph"
#endif

namespace benchgraph {

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        size_t pos = s.find(sep, start);
        out.push_back(s.substr(start, pos - start));
        if (pos == std::string::npos) break;
        start = pos + 1;
    }
    return out;
}

namespace {

bool starts_with(const std::string &s, const char *prefix, std::string *rest) {
    std::string p(prefix);
    if (s.compare(0, p.size(), p) != 0) return false;
    *rest = s.substr(p.size());
    return true;
}

int64_t parse_int(const std::string &opt, const std::string &v, int64_t lo) {
    char *end = nullptr;
    errno = 0;
    long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno != 0 || x < lo)
        throw usage_error {"bad value '" + v + "' for " + opt
                + " (expected an integer >= " + std::to_string(lo) + ")"};
    return x;
}

bool is_float_dt(const std::string &d) {
    return d == "f32" || d == "bf16" || d == "f16";
}

void check_dt(const std::string &v) {
    if (is_float_dt(v)) return;
    for (const auto &item : split(v, '+')) {
        auto colon = item.find(':');
        if (colon == std::string::npos || colon == 0
                || !is_float_dt(item.substr(colon + 1)))
            throw usage_error {"bad value '" + v
                    + "' for --dt (expected f32|bf16|f16 or ID:DT[+ID:DT])"};
    }
}

bool file_exists(const std::string &p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

} // namespace

bool parse_option(const std::string &w, settings &s, globals &g) {
    std::string v;
    if (w == "--graph") return true;  // the driver's name in benchdnn
    if (w == "--reset") {
        // Where and how the run goes is not part of a case: a batch's
        // --reset must not undo --mode=L or --backend=jit given around it.
        settings d;
        d.mode = s.mode;
        d.backend = s.backend;
        d.threads = s.threads;
        s = d;
        return true;
    }
    if (starts_with(w, "--mode=", &v)) {
        if (v.size() != 1 || std::string("CPLI").find(v[0]) == std::string::npos)
            throw usage_error {"bad value '" + v + "' for --mode (expected C, P, L or I)"};
        s.mode = v[0];
    } else if (starts_with(w, "--dt=", &v)) {
        check_dt(v);
        s.dt = v;
    } else if (starts_with(w, "--in-shapes=", &v)) {
        s.in_shapes = v;
    } else if (starts_with(w, "--op-attrs=", &v)) {
        s.op_attrs = v;
    } else if (starts_with(w, "--input-values=", &v)) {
        s.input_values = v;
    } else if (starts_with(w, "--expected-n-partitions=", &v)) {
        s.expected_n_partitions = parse_int("--expected-n-partitions", v, 0);
    } else if (starts_with(w, "--mb=", &v)) {
        s.mb = parse_int("--mb", v, 0);
    } else if (w == "--nan" || w == "--nan=1" || w == "--nan=true") {
        s.nan = true;
    } else if (w == "--nan=0" || w == "--nan=false") {
        s.nan = false;
    } else if (w == "--negative" || w == "--negative=1" || w == "--negative=true") {
        s.negative = true;
    } else if (w == "--negative=0" || w == "--negative=false") {
        s.negative = false;
    } else if (starts_with(w, "--backend=", &v)) {
        if (v != "any" && v != "ref" && v != "jit" && v != "dnnl")
            throw usage_error {"bad value '" + v
                    + "' for --backend (expected ref, jit, dnnl or any)"};
        s.backend = v;
    } else if (starts_with(w, "--threads=", &v)) {
        s.threads = static_cast<int>(parse_int("--threads", v, 0));
    } else if (starts_with(w, "--fpmath=", &v)) {
        if (v != "strict" && v != "any")
            throw usage_error {"bad value '" + v + "' for --fpmath (expected strict or any)"};
        s.fpmath = v;
    } else if (starts_with(w, "--seed=", &v)) {
        s.seed = static_cast<uint64_t>(parse_int("--seed", v, 0));
    } else if (w == "--expect-error" || w == "--expect-error=1") {
        s.expect_error = true;
    } else if (w == "--expect-error=0") {
        s.expect_error = false;
    } else if (starts_with(w, "--csv=", &v)) {
        g.csv = v;
    } else if (w == "--onednn=0" || w == "--onednn=1") {
        g.onednn = w.back() == '1';
    } else if (w.size() >= 3 && w[0] == '-' && w[1] == 'v'
            && w.find_first_not_of("0123456789", 2) == std::string::npos) {
        g.verbose = std::atoi(w.c_str() + 2);
    } else if (starts_with(w, "--verbose=", &v)) {
        g.verbose = static_cast<int>(parse_int("--verbose", v, 0));
    } else {
        return false;
    }
    return true;
}

std::string repro(const settings &s, const std::string &case_name) {
    const settings d;
    std::ostringstream o;
    o << "--mode=" << s.mode << " --graph";
    if (s.dt != d.dt) o << " --dt=" << s.dt;
    if (s.in_shapes != d.in_shapes) o << " --in-shapes=" << s.in_shapes;
    if (s.op_attrs != d.op_attrs) o << " --op-attrs=" << s.op_attrs;
    if (s.input_values != d.input_values)
        o << " --input-values=" << s.input_values;
    if (s.mb != d.mb) o << " --mb=" << s.mb;
    if (s.expected_n_partitions != d.expected_n_partitions)
        o << " --expected-n-partitions=" << s.expected_n_partitions;
    if (s.fpmath != d.fpmath) o << " --fpmath=" << s.fpmath;
    if (s.nan != d.nan) o << " --nan";
    if (s.negative != d.negative) o << " --negative";
    if (s.backend != d.backend) o << " --backend=" << s.backend;
    if (s.threads != d.threads) o << " --threads=" << s.threads;
    if (s.seed != d.seed) o << " --seed=" << s.seed;
    if (s.expect_error != d.expect_error) o << " --expect-error";
    o << " --case=" << case_name;
    return o.str();
}

std::vector<std::string> read_batch_words(const std::string &path) {
    std::ifstream in(path);
    if (!in) throw usage_error {"cannot open batch file '" + path + "'"};
    std::vector<std::string> words;
    std::string line;
    while (std::getline(in, line)) {
        auto hash = line.find('#');
        if (hash != std::string::npos) line.erase(hash);
        std::istringstream ls(line);
        std::string w;
        while (ls >> w) words.push_back(w);
    }
    return words;
}

std::string resolve_path(const std::string &name, const std::string &base_dir) {
    if (name.empty()) return "";
    if (name[0] == '/') return file_exists(name) ? name : "";
    std::vector<std::string> candidates;
    if (!base_dir.empty()) candidates.push_back(base_dir + "/" + name);
    candidates.push_back(name);
    candidates.push_back(std::string(CREST_INPUTS_DIR) + "/" + name);
    candidates.push_back(std::string("benchdnn_inputs/graph/") + name);
    for (const auto &c : candidates)
        if (file_exists(c)) return c;
    return "";
}

const char *help_text() {
    return R"(Usage: benchgraph [--graph] [options] --case=FILE ...
       benchgraph [--graph] [options] --batch=FILE ...

Options apply to the --case that follows them and persist until --reset.
Batch files hold the same words; '#' starts a comment; --batch nests;
relative paths are tried against the batch file's folder, the current
folder, then benchdnn_inputs/graph/ of the source tree.

  --mode=C|P|L|I        correctness (default) | performance | list | compile only
  --dt=DT | ID:DT[+..]  rewrite float data types (f32, bf16, f16) of all
                        tensors, or of the tensors with these ids
  --in-shapes=ID:SHAPE[*TAG][+...]
                        rewrite a graph input's shape (2x3x4; '-' rank 0;
                        '0' empty 1-D) and strides (TAG like acdb: dense,
                        'a' = dim 0, listed outermost first); output and
                        intermediate shapes are re-inferred
  --op-attrs=ID:NAME:VALUE[*NAME:VALUE][+...]
                        rewrite attributes of op ID; lists as 1x2 (an empty
                        VALUE is an empty list), bools as 0/1
  --expected-n-partitions=N
                        fail unless the graph gives N partitions (default 1;
                        0 skips the check)
  --mb=N                rewrite dim 0 of every graph input
  --reset               back to the defaults, except --mode, --backend,
                        --threads, -v and --csv, which describe the run
  -vN                   verbosity: 1 partitions and shapes, 2 kernel names

Crest-only options:
  --nan                 also put NaNs into float inputs (--nan=0 to undo)
  --negative            make every float input value negative, -|x|: the
                        max's paths for columns of negatives only
                        (--negative=0 to undo)
  --input-values=ID:V1xV2x...[+...]
                        explicit values of an s32 input (e.g. the axes
                        input of ReduceMax). Without it, the axes input of a
                        ReduceMax is filled with the axes that turn the
                        compiled src shape into the compiled dst shape
                        (dims that become 1 / disappear); other s32 inputs
                        get small random integers.
  --backend=any|ref|jit|dnnl
                        backends compile may choose from (default any);
                        mode C always compares against a ref-only engine
  --threads=N           engine threads (0 = every core, default)
  --fpmath=strict|any   rewrite the graph's fpmath_mode; NaN positions are
                        compared only under strict
  --seed=N              seed of the input filler (default 0)
  --expect-error        negative case: it must end INVALID_ARGUMENTS (still
                        counted so, but the run does not fail for it); if it
                        does not, the case FAILED
  --onednn=0|1          mode P: time the direct oneDNN primitive (default 1)
  --csv=FILE            mode P: write case,time_ms,bytes,gbps,roofline_gbps,
                        onednn_ms,onednn_impl,pct_roofline,speedup_vs_onednn,
                        kernel,cpu_wait_pct,machine (one row per case)
  --help                this text

Exit status: 0 when no case FAILED and no case ended INVALID_ARGUMENTS
without --expect-error; 1 otherwise; 2 for a bad command line.
Comparison (mode C): ReduceMax, Maximum, ArgMax (and partitions of only
these ops) bit-exact, NaN equals NaN, -0 equals +0; partitions with other
post-ops within a relative tolerance per data type (f32 1e-6, 4e-6 for
transcendental ops; bf16 2^-7; f16 2^-10).
Mode P: crest's partitions, the roofline (an AVX-512 or AVX2 max over a
buffer of as many bytes on as many threads) and oneDNN (the same ReduceMax as
a direct primitive, single-ReduceMax partitions only, on as many OpenMP
threads) are timed in interleaved blocks of 50 ms, each started once the
process's other threads sleep; the figures are medians of single calls in
clean blocks, during which the run's threads waited for a CPU < 2% of the
time (>= 3 such blocks, >= 20 calls, >= 0.3 s). machine=busy: other
processes never left the cores free long enough, the figures come from the
least disturbed half of the blocks, and cpu_wait_pct says how disturbed.
bytes = inputs read + outputs written; speedup_vs_onednn = onednn_ms /
time_ms (above 1: crest is faster). The driver re-executes itself with
GOMP_SPINCOUNT=1000 unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set.
)";
}

} // namespace benchgraph
