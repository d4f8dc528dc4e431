#include "backend/jit/isa.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include <xbyak/xbyak_util.h>

#include "backend/jit/jit_backend.hpp"

namespace crest::impl::jit {

namespace {
// -1: no override.
std::atomic<int> g_override{-1};
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
    static const isa_t detected = [] {
        using C = Xbyak::util::Cpu;
        const C cpu;
        if (cpu.has(C::tAVX512F) && cpu.has(C::tAVX512BW)
                && cpu.has(C::tAVX512VL) && cpu.has(C::tAVX512DQ)
                && cpu.has(C::tBMI2))
            return isa_t::avx512_core;
        if (cpu.has(C::tAVX2) && cpu.has(C::tF16C)) return isa_t::avx2;
        return isa_t::none;
    }();
    return detected;
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
