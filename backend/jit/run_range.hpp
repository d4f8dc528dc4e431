// Walking a plan's outputs (reduce_kernel.cpp's threads call run_range
// on their ranges): the kernel calls for a range of outputs, with the
// two-stage slabs, periods, column chunks and scattered dst they take.
#pragma once

#include <cstdint>

#include "backend/jit/plan.hpp"

namespace crest::impl::jit {

// The reduced dims' index ranges a call covers: extra dims, then rows,
// then (inner) the row elements.
struct red_ranges {
    int64_t lo[max_dims + 2];
    int64_t hi[max_dims + 2];
};

// Where outputs go: real dst (problem strides) or a dense partial.
struct dst_view {
    char *base;
    int64_t ods[max_dims];  // per outer dim, bytes
    int64_t jds;            // along jd, bytes
    bool sub;               // scatter along P.jsub instead of jds
    int64_t dsz;
    jit_fn fn;
};

// Every reduced dim whole.
red_ranges full_ranges(const plan &P);

// The problem's own dst at dst, as P's outputs see it.
dst_view plan_dst_view(const plan &P, char *dst);

// Offsets of flat output o over `kept` dims (outer to inner).
struct odometer {
    const loop_dim *dims;
    int nd;
    int64_t idx[2 * max_dims];
    int64_t soff = 0, doff = 0;
    odometer(const loop_dim *d, int n, int64_t flat) : dims(d), nd(n) {
        for (int k = nd - 1; k >= 0; --k) {
            idx[k] = flat % dims[k].n;
            flat /= dims[k].n;
            soff += idx[k] * dims[k].ss;
            doff += idx[k] * dims[k].ds;
        }
    }
    void next() {
        for (int k = nd - 1; k >= 0; --k) {
            soff += dims[k].ss;
            doff += dims[k].ds;
            if (++idx[k] < dims[k].n) return;
            soff -= idx[k] * dims[k].ss;
            doff -= idx[k] * dims[k].ds;
            idx[k] = 0;
        }
    }
};

// Calls f with `bytes` of stack at a 4 KiB boundary, or null for none.
template <typename F>
void with_stack_scratch(int64_t bytes, const F &f) {
    if (!bytes) return f(nullptr);
    auto room = reinterpret_cast<uintptr_t>(__builtin_alloca(bytes + 4095));
    f(reinterpret_cast<void *>((room + 4095) & ~uintptr_t(4095)));
}
// The tile scratch the plan's kernels take (plan::tile_scratch_bytes):
// up to 68 KiB, 20 KiB for 16 KiB of columns (decisions.md, Stack).
template <typename F>
void with_tile_scratch(const plan &P, const F &f) {
    with_stack_scratch(P.tile_scratch_bytes, f);
}

// Outputs [b, e) in the flat order (outer dims, then jd), reduced over
// R, into D, with the tile scratch the plan takes.
void run_range(const plan &P, const char *src, const dst_view &D, int64_t b,
        int64_t e, const red_ranges &R, void *scratch);

} // namespace crest::impl::jit
