// ISA selection for the JIT backend: what the CPU has, capped by
// CREST_MAX_CPU_ISA (read at each call, so a test can change it), and by a
// test hook that lets one process run every path the machine can.
#pragma once

#include <cstdint>

#include "backend/jit/jit_config.hpp"

namespace crest::impl::jit {

// Best ISA of this CPU, ignoring caps (detected once).
isa_t cpu_isa();
// cpu_isa() capped by the testing override, else by CREST_MAX_CPU_ISA.
isa_t max_isa();
// Bytes of one L3 instance, the cache these cores share, once per process:
// CREST_L3_BYTES when set to a positive number, else pick_l3_bytes of what
// the machine reports; 0 when unknown.
int64_t l3_cache_bytes();
// The L3's size from the machine's reports, each 0 (or less) when it is
// silent, the most specific first: Linux's sysfs, AMD's CPUID
// cache-topology leaf, glibc's sysconf.
int64_t pick_l3_bytes(int64_t sysfs, int64_t amd_topology, int64_t sysconf_bytes);
// The L3's size the plans go by: l3_cache_bytes(), or 32 MiB where that
// is unknown.
inline int64_t planned_l3_bytes() {
    const int64_t b = l3_cache_bytes();
    return b > 0 ? b : int64_t(32) << 20;
}
// Whether the CPU is Intel's (CPUID's vendor), once per process: the
// plan rules measured on Intel's Xeon alone (AVX-512's 16-bit inner rows
// of 256-512 by the word blocks, generators.hpp; its long 16-bit rows
// fused from 32 MiB, plan_prefetch.cpp).
bool intel_cpu();
// Parses "avx512_core", "avx2", "sse41"/"none"; returns false otherwise.
bool parse_isa(const char *s, isa_t *out);
// Overrides CREST_MAX_CPU_ISA for this process; nullptr removes the
// override. Tests only; not synchronised with concurrent make calls.
void set_max_isa_for_testing(const char *isa);

} // namespace crest::impl::jit
