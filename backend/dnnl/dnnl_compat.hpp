// Every difference between oneDNN 2.x and 3.x that the dnnl backend meets
// lives here, behind DNNL_VERSION_MAJOR. A build against another major
// version touches only this file. Everything else in backend/dnnl uses
// calls that are spelled the same in 2.x and 3.x (memory::desc with strides,
// memory with DNNL_MEMORY_NONE + set_data_handle, dnnl_primitive_execute,
// dnnl_stream_wait, dnnl_version()).
#pragma once

#include <string>

#include <oneapi/dnnl/dnnl.hpp>
#include <oneapi/dnnl/dnnl_version.h>

#if !defined(DNNL_VERSION_MAJOR) || (DNNL_VERSION_MAJOR != 2 && DNNL_VERSION_MAJOR != 3)
#error "crest's dnnl backend knows oneDNN 2.x and 3.x only"
#endif

namespace crest::impl::dnnl_backend::compat {

// Highest rank a oneDNN memory descriptor takes (12 in 2.x and 3.x).
constexpr int max_ndims = DNNL_MAX_NDIMS;

// The CPU engine and an in-order stream on it. Same calls in 2.x and 3.x;
// kept here so a future change of engine/stream creation has one home.
inline dnnl::engine make_cpu_engine() {
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
}
inline dnnl::stream make_stream(const dnnl::engine &eng) {
    return dnnl::stream(eng);
}

// Reduction primitive descriptor. Throws dnnl::error (with .status) when
// oneDNN rejects the problem or has no implementation for it; the caller
// turns that into a reason.
inline dnnl::reduction::primitive_desc make_reduction_pd(
        const dnnl::engine &eng, dnnl::algorithm alg,
        const dnnl::memory::desc &src_md, const dnnl::memory::desc &dst_md,
        float p, float eps, const dnnl::primitive_attr &attr) {
#if DNNL_VERSION_MAJOR == 2
    // 2.x: an op descriptor first, then the primitive descriptor.
    dnnl::reduction::desc d(alg, src_md, dst_md, p, eps);
    return dnnl::reduction::primitive_desc(d, attr, eng);
#else
    // 3.x: op descriptors are gone; the pd takes the engine first.
    return dnnl::reduction::primitive_desc(
            eng, alg, src_md, dst_md, p, eps, attr);
#endif
}

// The implementation oneDNN picked ("jit:uni", "ref:any", ...).
inline std::string impl_info(const dnnl::primitive_desc_base &pd) {
    const char *s = pd.impl_info_str();
    return s ? std::string(s) : std::string();
}

// Scratchpad size in bytes of a pd built with scratchpad_mode::user.
inline size_t scratchpad_bytes(const dnnl::primitive_desc_base &pd) {
    return pd.scratchpad_desc().get_size();
}

// "OMP", "TBB", "SEQ", "THREADPOOL" ...: oneDNN's CPU threading runtime, read
// from the library actually loaded (not the header we compiled against).
inline std::string cpu_runtime_name() {
    const dnnl_version_t *v = dnnl_version();
    if (!v) return "unknown";
    switch (v->cpu_runtime) {
        case DNNL_RUNTIME_OMP: return "OMP";
        case DNNL_RUNTIME_TBB: return "TBB";
        case DNNL_RUNTIME_SEQ: return "SEQ";
        case DNNL_RUNTIME_THREADPOOL: return "THREADPOOL";
        default: return "other(" + std::to_string(v->cpu_runtime) + ")";
    }
}

// "2.6.3" of the loaded library.
inline std::string version_string() {
    const dnnl_version_t *v = dnnl_version();
    if (!v) return "unknown";
    return std::to_string(v->major) + "." + std::to_string(v->minor) + "."
            + std::to_string(v->patch);
}

} // namespace crest::impl::dnnl_backend::compat
