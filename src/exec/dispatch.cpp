#include "src/exec/dispatch.hpp"

#include "backend/dnnl/dnnl_backend.hpp"
#include "backend/jit/jit_backend.hpp"
#include "backend/ref/ref_backend.hpp"
#include "crest/error.hpp"
#include "src/engine_impl.hpp"

namespace crest::impl {

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
    if (try_dnnl && mode == fpmath_mode::any) {
        if (auto k = dnnl_backend::make_reduce_max(p, pool, any, &why_dnnl)) return k;
    }
    const bool try_jit = any || want == "jit";
    if (try_jit) {
        if (auto k = jit::make_reduce_max(p, pool, &why_jit)) return k;
    }
    if (any || want == "ref") return ref::make_reduce_max(p);
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
