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
    std::string why, reasons;
    if (any || want == "dnnl") {
        if (mode == fpmath_mode::any) {
            if (auto k = dnnl_backend::make_reduce_max(p, pool, any, &why)) return k;
            reasons += " dnnl: " + why + ";";
        } else {
            reasons += std::string(" dnnl: fpmath_mode is ") + to_string(mode)
                    + ", oneDNN may drop NaNs, allowed only under fpmath_mode any;";
        }
    }
    if (any || want == "jit") {
        if (auto k = jit::make_reduce_max(p, pool, &why)) return k;
        reasons += " jit: " + why + ";";
    }
    if (any || want == "ref") return ref::make_reduce_max(p);
    throw error(status::unimplemented,
            "ReduceMax: no kernel of backend '" + want + "' fits:" + reasons);
}

} // namespace crest::impl
