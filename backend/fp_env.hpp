// The caller's SSE floating-point environment (MXCSR) around code whose
// maxes raise the invalid flag on NaN, which traps where the caller has
// unmasked FE_INVALID (feenableexcept). crest's JIT kernels keep it in
// their own prologue (jit_generator::fp_env_enter); this is the C++ side,
// for oneDNN's primitives. x87 state is not touched: no kernel uses x87.
#pragma once

#include <xmmintrin.h>

namespace crest::impl {

constexpr unsigned mxcsr_exception_masks = 0x1F80;  // IM DM ZM OM UM PM
constexpr unsigned mxcsr_exception_flags = 0x3F;

// Whether the calling thread traps on any SSE floating-point exception.
inline bool fp_traps_enabled() {
    return (_mm_getcsr() & mxcsr_exception_masks) != mxcsr_exception_masks;
}

// Every exception masked and the flags clear for the scope; the caller's
// masks and flags back at its end. Covers the calling thread only.
class masked_fp_scope {
public:
    masked_fp_scope() : saved_(_mm_getcsr()) {
        _mm_setcsr((saved_ | mxcsr_exception_masks) & ~mxcsr_exception_flags);
    }
    ~masked_fp_scope() { _mm_setcsr(saved_); }
    masked_fp_scope(const masked_fp_scope &) = delete;
    masked_fp_scope &operator=(const masked_fp_scope &) = delete;

private:
    unsigned saved_;
};

} // namespace crest::impl
