// Every kernel config a plan can ask for assembles, for every ISA, on any
// machine: the code is generated and sealed, never run. A machine without
// AVX-512 thus still catches an AVX-512 encoding Xbyak refuses (an EVEX-only
// form on ymm, a register past 15 on AVX2) before a machine with it does.
#include <gtest/gtest.h>

#include "backend/jit/generators.hpp"

namespace crest::impl::jit::test {
namespace {

struct config_case {
    isa_t isa;
    family_t family;
    data_type dt;
    int unroll;
    int block_n;
    bool prefetch = false;
    bool fused16 = false;
    int prefetch_bytes = 0;
    bool prefetch_pass = false;
    int block_rows = 0;
    int block_cols = 0;
    int prefetch_l1_bytes = 0;
    int block_row_stride = 0;
    int block_slice_stride = 0;
    bool partial_last = false;
    bool stream_dst = false;
};

// What plan_kernels.cpp can produce: inner unroll 2..8 (AVX2: ..4) with blocks up
// as inner_blocks_take has them (AVX2: from 2 elements; AVX-512's 16-bit
// rows to 512, as on Intel CPUs); vert_reg 1..16 vectors (AVX2:
// ..8; AVX-512's wide columns 17..32, f32 ..50); vert_tile unroll 1, with or without prefetching (16-bit: near or
// far), or prefetching the next pass (AVX2 16-bit: or into L1); fixed blocks of 2-16 rows
// (register columns up to 512 bytes, AVX-512's 16-bit tiles' fixed_code wider;
// rows of 8-16 bytes two slices a ymm; a staged dst).
std::vector<config_case> plannable_configs() {
    std::vector<config_case> r;
    for (isa_t isa : {isa_t::avx2, isa_t::avx512_core}) {
        const bool z = isa == isa_t::avx512_core;
        const int vl = z ? 16 : 8;
        for (data_type dt : {data_type::f32, data_type::bf16, data_type::f16}) {
            for (int u = 2; u <= (z ? 8 : 4); u *= 2) {
                r.push_back({isa, family_t::inner, dt, u, 0, false});
                r.push_back({isa, family_t::inner, dt, u, 0, true});
                // AVX2: tiny rows below a vector, blocks from it
                for (int n = 1; n <= inner_word_block_max_n; ++n)
                    if (inner_blocks_take(dt, n, z) && (z || n >= 2))
                        r.push_back({isa, family_t::inner, dt, u, n});
            }
            // AVX2 register columns past whole vectors (f32 under 7
            // vectors, 16-bit from 4 columns, made for their count).
            if (!z)
                for (int cols = 4; cols <= 64; ++cols) {
                    if (cols % 8 == 0 || (dt == data_type::f32 && cols >= 56)) continue;
                    config_case c {isa, family_t::vert_reg, dt, (cols + 7) / 8, 0};
                    c.partial_last = true;
                    if (dt != data_type::f32) c.block_cols = cols;
                    r.push_back(c);
                }
            for (int u = 1; u <= (z ? 16 : 8); ++u) {
                r.push_back({isa, family_t::vert_reg, dt, u, 0});
                if (z && dt != data_type::f32)
                    r.push_back({isa, family_t::vert_reg, dt, u, 0, false, true});
            }
            // AVX-512 wide columns, 17-32 vectors (f32 up to 50,
            // prefetching or not).
            if (z)
                for (int u = 17; u <= wide_max_cols(dt) / 16; ++u)
                    for (bool pf : {false, true})
                        if (!pf || dt == data_type::f32)
                            r.push_back({isa, family_t::vert_reg, dt, u, 0, pf});
            r.push_back({isa, family_t::vert_tile, dt, 1, 0, false});
            r.push_back({isa, family_t::vert_tile, dt, 1, 0, true});
            r.push_back({isa, family_t::vert_tile, dt, 1, 0, false, false, 0, true});
            r.push_back({isa, family_t::vert_tile, dt, 1, 0, true, false, 16384});
            if (!z && dt != data_type::f32)
                r.push_back(
                        {isa, family_t::vert_tile, dt, 1, 0, false, false, 0, false, 0, 0, 512});
            if (z && dt != data_type::f32) {
                r.push_back({isa, family_t::vert_tile, dt, 1, 0, false, true});
                r.push_back({isa, family_t::vert_tile, dt, 1, 0, true, false, 4096});
            }
            const int esz = dt == data_type::f32 ? 4 : 2;
            for (int rows = 2; rows <= 16; ++rows)
                for (int cols : {1, 4, 5, 7, 8, 9, 16, 17, 24, 31, 32, 33, 56, 64, 100, 128, 255,
                             256, 257, 1000, 14336}) {
                    const bool wide = cols * esz > 512;
                    if (wide && (esz == 4 || !z)) continue;
                    // AVX2: f32 up to 8 vectors (a partial last one below
                    // 7), 16-bit from 4 columns (the tiles' fixed_code).
                    if (!z && esz == 4 && (cols > 64 || (cols % 8 != 0 && cols >= 56))) continue;
                    if (!z && esz == 2 && cols < 4) continue;
                    const int unroll = wide ? 16 : !z && esz == 2 ? 8 : (cols + vl - 1) / vl;
                    // From half the L3: dst staged (stream_dst).
                    for (bool stream : {false, true}) {
                        if (stream && wide) continue;
                        config_case c{isa, family_t::vert_reg, dt, unroll, 0, false, false, 0,
                                false, rows, cols};
                        c.stream_dst = stream;
                        r.push_back(c);
                        // Rows of 8-16 bytes: two slices a ymm, prefetching or not.
                        if (cols * esz >= 8 && cols * esz <= 16 && (z || esz == 2 || cols < 56))
                            for (bool pf : {false, true}) {
                                c.prefetch = pf;
                                c.block_row_stride = cols * esz;
                                c.block_slice_stride = rows * cols * esz;
                                r.push_back(c);
                            }
                    }
                }
        }
    }
    return r;
}

TEST(JitCodegen, EveryPlannableConfigAssembles) {
    int n = 0;
    for (const config_case &c : plannable_configs()) {
        kernel_config cfg;
        cfg.isa = c.isa;
        cfg.family = c.family;
        cfg.src_dt = cfg.dst_dt = c.dt;
        cfg.unroll = c.unroll;
        cfg.block_n = c.block_n;
        cfg.prefetch = c.prefetch;
        cfg.fused16 = c.fused16;
        cfg.prefetch_bytes = c.prefetch_bytes;
        cfg.prefetch_pass = c.prefetch_pass;
        cfg.block_rows = c.block_rows;
        cfg.block_cols = c.block_cols;
        cfg.prefetch_l1_bytes = c.prefetch_l1_bytes;
        cfg.block_row_stride = c.block_row_stride;
        cfg.block_slice_stride = c.block_slice_stride;
        cfg.partial_last = c.partial_last;
        cfg.stream_dst = c.stream_dst;
        code_buffer buf;
        jit_fn fn = nullptr;
        try {
            fn = c.family == family_t::inner ? generate_inner(cfg, buf)
                                             : generate_vertical(cfg, buf);
        } catch (const std::exception &e) {
            ADD_FAILURE() << isa_name(c.isa) << " family " << int(c.family) << " dt "
                          << int(c.dt) << " unroll " << c.unroll << " block_n " << c.block_n
                          << ": " << e.what();
        }
        EXPECT_NE(fn, nullptr);
        ++n;
    }
    EXPECT_GT(n, 500);
}

} // namespace
} // namespace crest::impl::jit::test
