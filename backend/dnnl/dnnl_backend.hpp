// oneDNN backend: ReduceMax lowered to dnnl::reduction. All oneDNN version
// differences live in dnnl_compat.hpp behind DNNL_VERSION_MAJOR.
#pragma once

#include <string>

#include "backend/kernel.hpp"

namespace crest::impl::dnnl_backend {

// nullptr (with *why_not set) when oneDNN cannot run the problem, or when
// require_jit is true and oneDNN would pick its reference implementation
// (its implementation info string starts with "ref"). The kernel's name()
// is "dnnl:" followed by oneDNN's implementation info.
kernel_ptr make_reduce_max(const reduce_problem &p, const thread_pool &pool,
        bool require_jit, std::string *why_not);

} // namespace crest::impl::dnnl_backend
