// Process-wide cache of generated code, keyed by kernel_config. Generation
// happens under the lock: it takes tens of microseconds and only the first
// make of each config pays it; every later lookup is a hash-map hit.
#pragma once

#include <memory>

#include "backend/jit/code_buffer.hpp"
#include "backend/jit/jit_config.hpp"

namespace crest::impl::jit {

struct generated_code {
    kernel_config cfg;
    jit_fn fn = nullptr;
    jit_status_fn status_fn = nullptr;  // kernel_config::block_batch: fn's own code
    int64_t batch_most = 1;             // block_batch: fixed_batch_most (generators.hpp)
    code_buffer code;
};

// Never null; the code lives as long as any holder (and the cache: forever).
std::shared_ptr<const generated_code> get_code(const kernel_config &cfg);
size_t code_cache_size();

} // namespace crest::impl::jit
