// Entry points of the generator families (one .cpp each).
#pragma once

#include <memory>

#include <xbyak/xbyak.h>

#include "backend/jit/jit_config.hpp"

namespace crest::impl::jit {

// Generate the code for cfg; holder keeps the code buffer alive.
jit_fn generate_inner(const kernel_config &cfg,
        std::unique_ptr<Xbyak::CodeGenerator> &holder);
jit_fn generate_vertical(const kernel_config &cfg,
        std::unique_ptr<Xbyak::CodeGenerator> &holder);

// Columns of one vertical tile: the dst tile stays in L1 while rows stream.
constexpr int vertical_tile_cols = 2048;

} // namespace crest::impl::jit
