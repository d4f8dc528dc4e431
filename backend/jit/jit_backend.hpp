// JIT backend: Xbyak kernels generated per canonicalised problem, cached by
// their config, run on the engine's thread pool.
#pragma once

#include <string>

#include "backend/kernel.hpp"

namespace crest::impl::jit {

// The best ISA this machine offers, capped by CREST_MAX_CPU_ISA
// ("avx512_core", "avx2", "sse41"/"none"). Returns "none" when no JIT path
// can run.
const char *max_isa_name();

// nullptr (with *why_not set) when no JIT kernel fits the problem or the
// ISA. The kernel keeps a pointer to pool: the pool must outlive it.
kernel_ptr make_reduce_max(const reduce_problem &p, const thread_pool &pool,
        std::string *why_not);

} // namespace crest::impl::jit
