#include "src/exec/dispatch.hpp"

#include <cstdint>
#include <memory>
#include <utility>

#include "backend/dnnl/dnnl_backend.hpp"
#include "backend/fp_env.hpp"
#include "backend/jit/jit_backend.hpp"
#include "backend/ref/ref_backend.hpp"
#include "crest/error.hpp"
#include "src/engine_impl.hpp"

namespace crest::impl {
namespace {

// oneDNN's kernel where the calling thread masks every floating-point
// exception, crest's exact kernel where it traps on one. oneDNN's OpenMP
// workers keep the floating-point environment of the thread that created
// them: workers created while a caller had FE_INVALID unmasked die of
// SIGFPE on a NaN even when the call itself runs masked (masked_fp_scope
// covers the calling thread only).
class trap_safe_kernel : public kernel {
public:
    trap_safe_kernel(kernel_ptr fast, kernel_ptr exact)
        : fast_(std::move(fast)), exact_(std::move(exact)) {}

    void execute(const void *const *inputs, void *const *outputs) const override {
        (fp_traps_enabled() ? exact_ : fast_)->execute(inputs, outputs);
    }
    // What runs on the calling thread (the verbose log names the kernel
    // of each execution from the thread that ran it).
    std::string name() const override {
        return (fp_traps_enabled() ? exact_ : fast_)->name();
    }

private:
    kernel_ptr fast_, exact_;
};

// oneDNN's jit reduction reads at the roofline only over long rows: on
// Zen 4 (f32, 16 MiB, benchgraph --mode=P, session 27) it read rows of 2
// and 4 at 2-3% of the roofline, 30x slower than crest's kernels, and rows
// of 64, 256 and 1024-8192 elements 4.6x, 1.7x and 1.2-1.3x slower; from
// memory rows of 3136-4096 tie (0.97-1.06x). Where the choice is the
// engine's, oneDNN takes only outputs of at least this many elements.
constexpr int64_t dnnl_min_reduced = 2048;

int64_t reduced_per_output(const reduce_problem &p) {
    int64_t n = 1;
    for (int d = 0; d < p.ndims(); ++d)
        if (p.is_reduced(d)) n *= p.dims[static_cast<size_t>(d)];
    return n;
}

} // namespace

kernel_ptr select_reduce_max_kernel(
        const reduce_problem &p, fpmath_mode mode, const engine &eng) {
    const auto &want = eng.get_options().backend;
    const bool any = want.empty() || want == "any";
    const auto &pool = eng.get_impl()->pool;
    // The reasons are put into words only when no backend fits: appending
    // to a string on every compile cost a fresh process two lazy symbol
    // bindings inside libstdc++ (doc/performance.md, first compile).
    std::string why_dnnl, why_jit;
    const bool try_dnnl = any || want == "dnnl";
    kernel_ptr fast;
    const bool long_rows = !any || reduced_per_output(p) >= dnnl_min_reduced;
    if (try_dnnl && mode == fpmath_mode::any && long_rows)
        fast = dnnl_backend::make_reduce_max(p, pool, any, &why_dnnl);
    if (fast && !any) return fast;
    // crest's own kernel: the choice itself, or beside oneDNN's the one
    // that runs while the calling thread traps (trap_safe_kernel).
    const bool try_jit = any || want == "jit";
    kernel_ptr exact;
    if (try_jit) exact = jit::make_reduce_max(p, pool, &why_jit);
    if (!exact && (any || want == "ref")) exact = ref::make_reduce_max(p);
    if (fast) return std::make_shared<trap_safe_kernel>(std::move(fast), std::move(exact));
    if (exact) return exact;
    std::string reasons;
    if (try_dnnl) {
        reasons += mode == fpmath_mode::any ? " dnnl: " + why_dnnl + ";"
                : std::string(" dnnl: fpmath_mode is ") + to_string(mode)
                        + ", oneDNN may drop NaNs, allowed only under fpmath_mode any;";
    }
    if (try_jit) reasons += " jit: " + why_jit + ";";
    throw error(status::unimplemented,
            "ReduceMax: no kernel of backend '" + want + "' fits:" + reasons);
}

} // namespace crest::impl
