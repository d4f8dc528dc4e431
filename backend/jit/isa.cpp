#include "backend/jit/isa.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include <cpuid.h>
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>  // glibc >= 2.33
#define CREST_HAVE_GLIBC_CPU_FEATURES 1
#endif

#include "backend/jit/jit_backend.hpp"

namespace crest::impl::jit {

namespace {
// -1: no override.
std::atomic<int> g_override{-1};

isa_t isa_of(bool os_avx512, bool avx512_core, bool os_avx, bool avx2_f16c) {
    if (os_avx512 && avx512_core) return isa_t::avx512_core;
    if (os_avx && avx2_f16c) return isa_t::avx2;
    return isa_t::none;
}

#ifdef CREST_HAVE_GLIBC_CPU_FEATURES
// glibc read CPUID when the process started (for its own ifuncs), and an
// "active" feature is one the OS also saves the state of. Asking it costs no
// CPUID, and each CPUID exits to the hypervisor in a VM (about 6 us here).
// It also honours GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,... like glibc's
// own string functions do.
isa_t detect_isa() {
    const bool avx512 = CPU_FEATURE_ACTIVE(AVX512F) && CPU_FEATURE_ACTIVE(AVX512BW)
            && CPU_FEATURE_ACTIVE(AVX512VL) && CPU_FEATURE_ACTIVE(AVX512DQ)
            && CPU_FEATURE_ACTIVE(BMI2);
    const bool avx2 = CPU_FEATURE_ACTIVE(AVX2) && CPU_FEATURE_ACTIVE(F16C);
    // "Active" already includes the OS's support: one flag serves as both.
    return isa_of(avx512, avx512, avx2, avx2);
}
#else
// Only the three CPUID leaves the kernels depend on. Xbyak's full probe
// (util::Cpu) walks every cache and topology leaf; each CPUID exits to the
// hypervisor in a VM (about 6 us here), and that probe alone cost some
// 250 us of the first compile in a process.
isa_t detect_isa() {
    unsigned a, b, c, d;
    if (__get_cpuid_max(0, nullptr) < 7) return isa_t::none;
    __cpuid(1, a, b, c, d);
    const bool osxsave = c & (1u << 27), avx = c & (1u << 28), f16c = c & (1u << 29);
    if (!osxsave || !avx) return isa_t::none;
    // XCR0: the OS saves the SSE and AVX state (bits 1, 2), and the opmask
    // and upper ZMM state (bits 5, 6, 7).
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    const bool os_avx = (lo & 0x6) == 0x6, os_avx512 = (lo & 0xe6) == 0xe6;
    __cpuid_count(7, 0, a, b, c, d);
    const auto bit = [&](int n) { return (b >> n) & 1u; };
    const bool avx2 = bit(5), bmi2 = bit(8), f = bit(16), dq = bit(17), bw = bit(30),
               vl = bit(31);
    return isa_of(os_avx512, f && bw && vl && dq && bmi2, os_avx, avx2 && f16c);
}
#endif

} // namespace

const char *isa_name(isa_t isa) {
    switch (isa) {
        case isa_t::avx512_core: return "avx512_core";
        case isa_t::avx2: return "avx2";
        default: return "none";
    }
}

bool parse_isa(const char *s, isa_t *out) {
    if (!s) return false;
    if (!std::strcmp(s, "avx512_core")) *out = isa_t::avx512_core;
    else if (!std::strcmp(s, "avx2")) *out = isa_t::avx2;
    else if (!std::strcmp(s, "none") || !std::strcmp(s, "sse41")) *out = isa_t::none;
    else return false;
    return true;
}

isa_t cpu_isa() {
    static const isa_t detected = detect_isa();
    return detected;
}

namespace {
// Linux's view of one L3 instance: /sys/devices/system/cpu/cpu0/cache/
// index*/ with level 3 (size like "32768K"). 0 when not found.
int64_t sysfs_l3_bytes() {
    for (int i = 0; i < 16; ++i) {
        char path[96];
        std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = std::fopen(path, "r");
        if (!f) break;
        int level = 0;
        const bool read = std::fscanf(f, "%d", &level) == 1;
        std::fclose(f);
        if (!read || level != 3) continue;
        std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (!(f = std::fopen(path, "r"))) return 0;
        long long n = 0;
        char unit = 0;
        const int got = std::fscanf(f, "%lld%c", &n, &unit);
        std::fclose(f);
        if (got < 1 || n <= 0) return 0;
        const int64_t scale = unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1;
        return static_cast<int64_t>(n) * scale;
    }
    return 0;
}

// AMD's own view of the L3 one core shares: CPUID leaf 0x8000001D's
// level-3 entry (with topology extensions). 0 when not reported, as under
// hypervisors that zero the leaf.
int64_t amd_cpuid_l3_bytes() {
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x8000001D) return 0;
    __cpuid(0x80000001, a, b, c, d);
    if (!((c >> 22) & 1u)) return 0;  // no topology extensions
    for (unsigned i = 0; i < 8; ++i) {
        __cpuid_count(0x8000001D, i, a, b, c, d);
        if ((a & 31u) == 0) break;  // no more caches
        if (((a >> 5) & 7u) != 3) continue;
        const int64_t ways = ((b >> 22) & 0x3ff) + 1, parts = ((b >> 12) & 0x3ff) + 1,
                      line = (b & 0xfff) + 1, sets = int64_t(c) + 1;
        return ways * parts * line * sets;
    }
    return 0;
}
} // namespace

int64_t pick_l3_bytes(int64_t sysfs, int64_t amd_topology, int64_t sysconf_bytes) {
    // The kernel's answer first, then AMD's CPUID leaf of the cache
    // topology, then glibc's sysconf: it reports what CPUID leaf
    // 0x80000006 says, on AMD EPYC the whole socket's L3 (320 MiB on the
    // Zen 4 VM of session 8; 508 MiB on the Zen 5 VM of session 32, which
    // has neither sysfs cache entries nor leaf 0x8000001D). There it is
    // kept: the from-memory rules that a smaller L3 turns on (prefetch,
    // 16-bit loads into both statistics, non-temporal stores) were tuned
    // on Zen 4 and read worse on that Zen 5 at 25-200 MB, whose two vCPUs
    // each have an L3 of their own (doc/performance.md, session 32).
    if (sysfs > 0) return sysfs;
    if (amd_topology > 0) return amd_topology;
    return sysconf_bytes > 0 ? sysconf_bytes : 0;
}

int64_t l3_cache_bytes() {
    static const int64_t bytes = [] {  // once per process
        if (const char *env = std::getenv("CREST_L3_BYTES")) {
            char *end = nullptr;
            const long long b = std::strtoll(env, &end, 10);
            if (end != env && *end == '\0' && b > 0) return static_cast<int64_t>(b);
        }
        return pick_l3_bytes(
                sysfs_l3_bytes(), amd_cpuid_l3_bytes(), ::sysconf(_SC_LEVEL3_CACHE_SIZE));
    }();
    return bytes;
}

bool intel_cpu() {
    static const bool intel = [] {
        unsigned a, b, c, d;
        if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
        char vendor[13];
        std::memcpy(vendor, &b, 4);
        std::memcpy(vendor + 4, &d, 4);
        std::memcpy(vendor + 8, &c, 4);
        vendor[12] = '\0';
        return std::strcmp(vendor, "GenuineIntel") == 0;
    }();
    return intel;
}

isa_t max_isa() {
    isa_t cap = isa_t::avx512_core;
    const int o = g_override.load(std::memory_order_relaxed);
    if (o >= 0) {
        cap = static_cast<isa_t>(o);
    } else if (const char *env = std::getenv("CREST_MAX_CPU_ISA")) {
        isa_t e;
        if (parse_isa(env, &e)) cap = e;  // an unknown value caps nothing
    }
    const isa_t have = cpu_isa();
    return static_cast<int>(cap) < static_cast<int>(have) ? cap : have;
}

void set_max_isa_for_testing(const char *isa) {
    isa_t v;
    g_override.store(isa && parse_isa(isa, &v) ? static_cast<int>(v) : -1);
}

const char *max_isa_name() { return isa_name(max_isa()); }

} // namespace crest::impl::jit
