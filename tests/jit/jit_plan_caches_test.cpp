// Plans by src size against the caches (plan_prefetch.cpp): which kernels
// prefetch src and which 16-bit kernels read it into both statistics from
// memory (kernel_config::fused16), on either side of the L3's size or half
// of it, as this machine's L3 gives them.
#include "tests/jit/jit_reduce_fixture.hpp"

namespace crest::impl::jit::test {
namespace {

// Vertical tiles and inner rows prefetch only when src is at least the
// L3's size (plan_prefetch.cpp): from the L3 the prefetch costs. 16-bit tiles from
// half of it. The slab stage of a two-stage inner plan follows the rule of
// the tiles.
TEST(JitPlan, TilesPrefetchOnlyPastTheL3) {
    if (max_isa() == isa_t::none) GTEST_SKIP() << "no JIT ISA";
    const int64_t l3 = planned_l3_bytes();
    auto make = [](const dims_t &d, uint32_t mask) {
        return plan_on_two(make_problem(data_type::f32, d, mask));
    };
    // Reducing axis 1 of 1 x rows x 1024 x 1024 f32: rows * 4 MiB of src.
    const int64_t small_rows = 2, big_rows = l3 / (int64_t(4) << 20) + 1;
    const plan small = make({1, small_rows, 1024, 1024}, 0b0010);
    const plan big = make({1, big_rows, 1024, 1024}, 0b0010);
    ASSERT_EQ(small.kind, plan_kind::vertical);
    ASSERT_EQ(big.kind, plan_kind::vertical);
    EXPECT_FALSE(small.code->cfg.prefetch);
    EXPECT_TRUE(big.code->cfg.prefetch);
    // From exactly the L3's size on (whole 4 MiB rows, as the L3s are);
    // inner rows (one stream a thread) only past it.
    const int64_t l3_rows = l3 / (int64_t(4) << 20);
    if (l3 % (int64_t(4) << 20) == 0 && l3_rows >= 2) {
        EXPECT_TRUE(make({1, l3_rows, 1024, 1024}, 0b0010).code->cfg.prefetch);
        EXPECT_FALSE(make({1, l3_rows - 1, 1024, 1024}, 0b0010).code->cfg.prefetch);
        EXPECT_FALSE(make({1, l3_rows, 1024, 1024}, 0b1100).code->cfg.prefetch);
        EXPECT_TRUE(make({1, l3_rows + 1, 1024, 1024}, 0b1100).code->cfg.prefetch);
    }
    // AVX-512's 16-bit tiles over 16 or more rows far apart from half the
    // L3's size on (1 x rows x 256 x 1024 bf16: rows * 512 KiB); AVX2's,
    // and rows close together, as f32's.
    const int64_t half_l3_rows = l3 / 2 / (int64_t(512) << 10);
    if ((l3 / 2) % (int64_t(512) << 10) == 0 && half_l3_rows >= 17) {
        auto make16 = [](const dims_t &d, uint32_t mask) {
            return plan_on_two(make_problem(data_type::bf16, d, mask));
        };
        const plan at = make16({1, half_l3_rows, 256, 1024}, 0b0010);
        ASSERT_EQ(at.code->cfg.family, family_t::vert_tile);
        EXPECT_EQ(at.code->cfg.prefetch, max_isa() == isa_t::avx512_core);
        EXPECT_FALSE(at.code->cfg.fused16);  // implied by the prefetch: one config
        // AVX2's 16-bit passes prefetch into L1 from half the L3's size
        // instead, below the L3's size (which f32 and they prefetch from);
        // planned for AVX2 whatever this machine runs.
        auto l1_bytes = [](data_type dt, const dims_t &d) {
            const plan P = plan_on_two(make_problem(dt, d, 0b0010), isa_t::avx2);
            return P.code ? P.code->cfg.prefetch_l1_bytes : -1;
        };
        EXPECT_EQ(at.code->cfg.prefetch_l1_bytes, max_isa() == isa_t::avx2 ? 512 : 0);
        EXPECT_EQ(l1_bytes(data_type::bf16, {1, half_l3_rows, 256, 1024}), 512);
        EXPECT_EQ(l1_bytes(data_type::f16, {1, half_l3_rows * 2 - 1, 256, 1024}), 512);
        EXPECT_EQ(l1_bytes(data_type::bf16, {1, half_l3_rows - 1, 256, 1024}), 0);
        EXPECT_EQ(l1_bytes(data_type::bf16, {1, half_l3_rows * 2, 256, 1024}), 0);
        EXPECT_EQ(l1_bytes(data_type::f32, {1, half_l3_rows / 2 + 1, 256, 1024}), 0);
        // Tiles of 64 KiB rows prefetch 4 KiB ahead (prefetch_bytes); f32
        // rows of 4 MiB 1 KiB. Rows of 16 KiB one after another, from the
        // L3's size on, prefetch the next pass's rows instead.
        EXPECT_EQ(at.code->cfg.prefetch_bytes, max_isa() == isa_t::avx512_core ? 4096 : 0);
        EXPECT_EQ(big.code->cfg.prefetch_bytes, 0);
        const plan narrow = make16({1, half_l3_rows * 64, 64, 128}, 0b0010);
        ASSERT_EQ(narrow.code->cfg.family, family_t::vert_tile);
        // On either ISA (AVX2's straight 16-bit passes too); AVX-512's
        // 16-bit loads fused besides.
        EXPECT_FALSE(narrow.code->cfg.prefetch);
        EXPECT_TRUE(narrow.code->cfg.prefetch_pass);
        EXPECT_EQ(narrow.code->cfg.fused16, max_isa() == isa_t::avx512_core);
        // Slices of under 16 rows one after another: 16 KiB ahead, from
        // half the L3's size (AVX-512), their 16-bit rows on lines fused
        // (rows of 1024 bytes; not 1000).
        const plan few = make16({half_l3_rows * 64, 14, 512}, 0b010);
        EXPECT_EQ(few.code->cfg.prefetch, max_isa() == isa_t::avx512_core);
        EXPECT_EQ(few.code->cfg.prefetch_bytes, max_isa() == isa_t::avx512_core ? 16384 : 0);
        EXPECT_EQ(few.code->cfg.fused16, max_isa() == isa_t::avx512_core);
        EXPECT_FALSE(make16({half_l3_rows * 66, 14, 500}, 0b010).code->cfg.fused16);
        // The same past the L3's size (f32, twice the bytes and more):
        // AVX-512's slices keep their rule; AVX2, which has none, takes
        // the next pass's rows as rows one after another do.
        const plan few_big = make({half_l3_rows * 256, 14, 512}, 0b010);
        EXPECT_EQ(few_big.code->cfg.prefetch, max_isa() == isa_t::avx512_core);
        EXPECT_EQ(few_big.code->cfg.prefetch_bytes, max_isa() == isa_t::avx512_core ? 16384 : 0);
        EXPECT_EQ(few_big.code->cfg.prefetch_pass, max_isa() != isa_t::avx512_core);
        // Rows of at most 4 KiB one after another, from half the L3's
        // size and below the prefetch: the next pass's rows (16-bit
        // 1 x rows x 1 x 2048 reducing axis 1; rows of 8 KiB do not).
        const plan pass = make16({1, half_l3_rows * 128, 1, 2048}, 0b0010);
        ASSERT_EQ(pass.code->cfg.family, family_t::vert_tile);
        EXPECT_FALSE(pass.code->cfg.prefetch);
        EXPECT_TRUE(pass.code->cfg.prefetch_pass);
        EXPECT_FALSE(make16({1, half_l3_rows * 64, 1, 4096}, 0b0010).code->cfg.prefetch_pass);
        // 16-bit rows of up to 16 KiB but for powers of two take it too
        // (next_pass_from_l3): 6272 B and 10000 B, not 16 KiB or 25088 B,
        // nor f32's 6272 B.
        auto rows_of = [&](data_type dt, int64_t cols) {
            const int64_t rows = l3 / 2 / (cols * int64_t(dt_size(dt))) + 1;
            const plan p = plan_on_two(make_problem(dt, {1, rows, 1, cols}, 0b0010));
            EXPECT_EQ(p.code->cfg.family, family_t::vert_tile) << cols;
            EXPECT_FALSE(p.code->cfg.prefetch) << cols;
            return p.code->cfg.prefetch_pass;
        };
        EXPECT_TRUE(rows_of(data_type::bf16, 3136));
        EXPECT_TRUE(rows_of(data_type::f16, 5000));
        EXPECT_FALSE(rows_of(data_type::bf16, 8192));
        EXPECT_FALSE(rows_of(data_type::f16, 12544));
        EXPECT_FALSE(rows_of(data_type::f32, 1568));
        EXPECT_FALSE(make16({1, 8, 1, 2048}, 0b0010).code->cfg.prefetch_pass);
        EXPECT_FALSE(make16({1, half_l3_rows - 1, 256, 1024}, 0b0010).code->cfg.prefetch);
        // The same bytes in rows of 8 KiB, back to back.
        EXPECT_FALSE(make16({half_l3_rows * 64, 4096}, 0b01).code->cfg.prefetch);
    }
    // NCHW reducing C and W (short rows, far-apart rows dim): two stages.
    const plan slabs = make({big_rows, 64, 256, 64}, 0b1010);
    ASSERT_TRUE(slabs.slab_code);
    EXPECT_TRUE(slabs.slab_code->cfg.prefetch);
    // Long inner rows prefetch in their row loop past the L3 too; short
    // rows (blocks of outputs) are told the same, and keep a register
    // between load and max (gen_inner_blocks.cpp).
    const plan rows_small = make({1, small_rows, 1024, 1024}, 0b1100);
    const plan rows_big = make({1, big_rows, 1024, 1024}, 0b1100);
    ASSERT_EQ(rows_big.kind, plan_kind::inner);
    EXPECT_FALSE(rows_small.code->cfg.prefetch);
    EXPECT_TRUE(rows_big.code->cfg.prefetch);
    const plan blocks_small = make({1, small_rows, 1024 * 16, 64}, 0b1000);
    const plan blocks_big = make({1, big_rows, 1024 * 16, 64}, 0b1000);
    ASSERT_GT(blocks_big.code->cfg.block_n, 0);
    EXPECT_FALSE(blocks_small.code->cfg.prefetch);
    EXPECT_TRUE(blocks_big.code->cfg.prefetch);
}

// A two-stage plan whose slab is the kept dim's whole block (NCHW
// reducing C and W: the slab's rows one after another) prefetches as a
// tile over such rows does (choose_tile_prefetch): the next pass's rows
// from memory (f32 64 x 64 maps), and for 16-bit from half the L3's size
// (56 x 56 maps); below that, neither that nor each row ahead.
TEST(JitPlan, WholeBlockSlabsPrefetchAsTiles) {
    if (max_isa() == isa_t::none) GTEST_SKIP() << "no JIT ISA";
    const int64_t l3 = planned_l3_bytes();
    auto slab = [](data_type dt, const dims_t &d) {
        const plan P = plan_on_two(make_problem(dt, d, 0b1010));
        EXPECT_TRUE(P.slab_code) << describe(make_problem(dt, d, 0b1010));
        EXPECT_FALSE(P.period_code);
        return P.slab_code ? P.slab_code->cfg : kernel_config {};
    };
    const kernel_config mem = slab(data_type::f32, {l3 / (1 << 20) + 1, 64, 64, 64});
    EXPECT_TRUE(mem.prefetch_pass);
    EXPECT_FALSE(mem.prefetch);
    const kernel_config small = slab(data_type::f32, {2, 64, 64, 64});
    EXPECT_FALSE(small.prefetch_pass);
    EXPECT_FALSE(small.prefetch);
    const int64_t half = l3 / 2 / (64 * 56 * 56 * 2) + 1;
    EXPECT_TRUE(slab(data_type::bf16, {half, 64, 56, 56}).prefetch_pass);
    EXPECT_TRUE(slab(data_type::f16, {half, 64, 56, 56}).prefetch_pass);
    EXPECT_FALSE(slab(data_type::bf16, {half / 4, 64, 56, 56}).prefetch_pass);
}

// AVX-512's 16-bit tiles fuse their skewed loads into both statistics
// from half the L3's size on where rows lie a multiple of 64 bytes apart
// (plan_prefetch.cpp, fused_loads16): k x 64 x 3136 bf16 reducing axis 1 (rows
// 6272 B apart), not over rows 6200 B apart, nor below the size, nor
// f32, nor on AVX2; the two-stage plans' slab tiles and a period's
// tile (rows taken several a period) follow the rule.
TEST(JitPlan, SixteenBitTilesFuseLoadsOverAlignedRows) {
    if (max_isa() == isa_t::none) GTEST_SKIP() << "no JIT ISA";
    const int64_t l3 = planned_l3_bytes();
    const int64_t slice = 64 * 3136 * 2, k = l3 / 2 / slice + 1;
    auto cfg = [](data_type dt, const dims_t &d, uint32_t mask) {
        return plan_on_two(make_problem(dt, d, mask)).code->cfg;
    };
    const bool z = max_isa() == isa_t::avx512_core;
    const kernel_config at = cfg(data_type::bf16, {k, 64, 3136}, 0b010);
    ASSERT_EQ(at.family, family_t::vert_tile);
    EXPECT_EQ(at.fused16, z);
    EXPECT_FALSE(at.prefetch);
    EXPECT_EQ(cfg(data_type::f16, {k, 64, 3136}, 0b010).fused16, z);
    EXPECT_FALSE(cfg(data_type::bf16, {k / 4, 64, 3136}, 0b010).fused16);
    EXPECT_FALSE(cfg(data_type::bf16, {2 * k, 64, 3100}, 0b010).fused16);
    EXPECT_FALSE(cfg(data_type::bf16, {k, 12, 3136}, 0b010).fused16);
    EXPECT_FALSE(cfg(data_type::f32, {k, 64, 3136}, 0b010).fused16);
    // NCHW reducing C and W: the slab tiles.
    const plan slabs = plan_on_two(make_problem(data_type::f16, {k, 64, 56, 56}, 0b1010));
    ASSERT_TRUE(slabs.slab_code);
    EXPECT_EQ(slabs.slab_code->cfg.fused16, z);
    // Rows of 1568 bytes, off the lines' grid, taken 8 a period (12544
    // bytes): the period's tile fuses, the plan's own does not.
    const int64_t maps = l3 / 2 / (128 * 784 * 2) + 1;
    const plan periods = plan_on_two(make_problem(data_type::bf16, {maps, 128, 784}, 0b010));
    EXPECT_FALSE(periods.code->cfg.fused16);
    if (z) {
        ASSERT_TRUE(periods.period_code);
        EXPECT_EQ(periods.period, 8 * 784);
        EXPECT_TRUE(periods.period_code->cfg.fused16);
    }
}

// AVX-512's 16-bit register columns read rows into both statistics from
// memory from half the L3's size on where rows start on lines
// (fused_columns16): k x 64 x 64 x 64 reducing axes 0 and 2 (rows of 128
// bytes), not below the size, nor over rows of 120 bytes, nor f32; the
// same for the periodic plans' register columns.
TEST(JitPlan, SixteenBitRegisterColumnsFuseLoadsFromHalfTheL3) {
    if (max_isa() == isa_t::none) GTEST_SKIP() << "no JIT ISA";
    const int64_t l3 = planned_l3_bytes();
    const int64_t k = l3 / 2 / (64 * 64 * 64 * 2) + 1;
    auto cfg = [](data_type dt, const dims_t &d) {
        return plan_on_two(make_problem(dt, d, 0b0101)).code->cfg;
    };
    const bool z = max_isa() == isa_t::avx512_core;
    const kernel_config at = cfg(data_type::f16, {k, 64, 64, 64});
    ASSERT_EQ(at.family, family_t::vert_reg);
    EXPECT_EQ(at.fused16, z);
    EXPECT_EQ(cfg(data_type::bf16, {k, 64, 64, 64}).fused16, z);
    EXPECT_FALSE(cfg(data_type::f16, {k / 4, 64, 64, 64}).fused16);
    EXPECT_FALSE(cfg(data_type::f16, {k, 64, 64, 60}).fused16);
    EXPECT_FALSE(cfg(data_type::f32, {k, 64, 64, 64}).fused16);
    // Rows of 2 columns read as periods of 64 (128 bytes); 5 columns'
    // period of 80 is not a whole number of lines.
    auto period = [](data_type dt, int64_t rows, int64_t cols) {
        const plan P = plan_on_two(make_problem(dt, {1, 1, rows, cols}, 0b0100));
        EXPECT_TRUE(P.period_code) << rows << "x" << cols;
        return P.period_code ? P.period_code->cfg : kernel_config {};
    };
    const int64_t rows = l3 / 2 / 4 + 64;
    const kernel_config two = period(data_type::bf16, rows, 2);
    ASSERT_EQ(two.family, family_t::vert_reg);
    EXPECT_EQ(two.fused16, z);
    EXPECT_FALSE(period(data_type::bf16, rows / 4, 2).fused16);
    EXPECT_FALSE(period(data_type::bf16, rows, 5).fused16);
    EXPECT_FALSE(period(data_type::f32, rows, 2).fused16);
}

// AVX-512's 16-bit long inner rows and word blocks read both statistics
// from memory from half the L3's size on where every output starts on a
// line (fused_rows16): k x 3136 reducing axis 1 (rows of 6272 bytes) and
// rows of 32, not below the size (but from 32 MiB on Intel CPUs), nor
// over rows of 3100 elements, nor f32, nor rows of 16 (no word blocks).
TEST(JitPlan, SixteenBitLongRowsFuseLoadsFromHalfTheL3) {
    if (max_isa() == isa_t::none) GTEST_SKIP() << "no JIT ISA";
    const int64_t l3 = planned_l3_bytes();
    const int64_t k = l3 / 2 / (3136 * 2) + 1;
    auto cfg = [](data_type dt, const dims_t &d) {
        return plan_on_two(make_problem(dt, d, 0b10)).code->cfg;
    };
    const bool z = max_isa() == isa_t::avx512_core;
    const kernel_config at = cfg(data_type::bf16, {k, 3136});
    ASSERT_EQ(at.family, family_t::inner);
    EXPECT_EQ(at.block_n, 0);
    EXPECT_EQ(at.fused16, z);
    EXPECT_EQ(cfg(data_type::f16, {k, 3136}).fused16, z);
    // (On Intel CPUs the long rows fuse from 32 MiB too.)
    const bool quarter_fuses = z && intel_cpu() && k / 4 * 3136 * 2 >= (int64_t(32) << 20);
    EXPECT_EQ(cfg(data_type::bf16, {k / 4, 3136}).fused16, quarter_fuses);
    EXPECT_FALSE(cfg(data_type::bf16, {2 * k, 3100}).fused16);
    EXPECT_FALSE(cfg(data_type::f32, {k, 3136}).fused16);
    const kernel_config words = cfg(data_type::bf16, {k * 98, 32});
    EXPECT_EQ(words.block_n, 32);
    EXPECT_EQ(words.fused16, z);
    EXPECT_FALSE(cfg(data_type::bf16, {k * 196, 16}).fused16);
}

// Transposed outputs (channels-last src reducing N into an NCHW dst)
// stream dst's lines (or prefetch the next chunk's) from half the L3's size on
// (plan::stream_transposed), on every ISA; dense outputs never.
TEST(JitPlan, TransposedOutputsStreamFromHalfTheL3) {
    if (max_isa() == isa_t::none) GTEST_SKIP() << "no JIT ISA";
    const int64_t l3 = planned_l3_bytes();
    const int64_t n_half = (l3 / 2 + (int64_t(1) << 20) - 1) >> 20;  // N x 1 MiB of f32
    auto make = [](int64_t n, bool transposed) {
        const dims_t d = {n, 64, 64, 64};
        return plan_on_two(transposed
                                   ? make_problem(data_type::f32, d, 1, permuted(d, {0, 2, 3, 1}))
                                   : make_problem(data_type::f32, d, 1));
    };
    const plan at = make(n_half, true);
    ASSERT_EQ(at.kind, plan_kind::vertical);
    ASSERT_GT(at.njsub, 1);  // columns scattered in dst
    EXPECT_TRUE(at.stream_transposed);
    const plan below = make(n_half - 1, true);
    ASSERT_GT(below.njsub, 1);
    EXPECT_FALSE(below.stream_transposed);
    EXPECT_FALSE(make(4, true).stream_transposed);
    EXPECT_FALSE(make(n_half, false).stream_transposed);
}

// Large outputs stream (kernel_config::stream_dst) from half the L3's size
// of src and dst together: tiny rows (dst a half to a seventh of src) and
// tiles of under 16 rows, on either ISA (but AVX2's 16-bit tiles); not
// longer rows, not 16 rows.
TEST(JitPlan, LargeOutputsStreamFromHalfTheL3) {
    if (max_isa() == isa_t::none) GTEST_SKIP() << "no JIT ISA";
    const int64_t l3 = planned_l3_bytes();
    const int64_t half = l3 / 2;
    auto streams = [](const dims_t &d, uint32_t mask, isa_t isa) {
        const plan P = plan_on_two(make_problem(data_type::f32, d, mask), isa);
        return P.code && P.code->cfg.stream_dst;
    };
    for (isa_t isa : {isa_t::avx2, isa_t::avx512_core}) {
        if (isa > max_isa()) continue;
        SCOPED_TRACE(isa_name(isa));
        // Rows of 4 reduced: 20 bytes of src and dst an output.
        const int64_t rows_at = (half + 19) / 20;
        EXPECT_TRUE(streams({rows_at, 4}, 0b10, isa));
        EXPECT_FALSE(streams({rows_at - 1, 4}, 0b10, isa));
        EXPECT_FALSE(streams({rows_at, 20}, 0b10, isa));
        // Two rows reduced: 12 bytes a column.
        const int64_t cols_at = (half + 11) / 12;
        EXPECT_TRUE(streams({2, cols_at}, 0b01, isa));
        EXPECT_FALSE(streams({2, cols_at - 1}, 0b01, isa));
        EXPECT_FALSE(streams({16, cols_at}, 0b01, isa));
        // AVX2's 16-bit tiles never (bound by their instructions): bf16,
        // 6 bytes a column.
        const plan bf16 = plan_on_two(
                make_problem(data_type::bf16, {2, (half + 5) / 6}, 0b01), isa);
        ASSERT_TRUE(bf16.code);
        EXPECT_EQ(bf16.code->cfg.stream_dst, isa == isa_t::avx512_core);
    }
}

} // namespace
} // namespace crest::impl::jit::test
