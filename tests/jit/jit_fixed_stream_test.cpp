// The fixed blocks (NCHW reducing H of small maps) called directly with
// kernel_config::stream_dst: calls whose dst is dense and on a line go a
// stage of slices at a time through the stack to non-temporal stores
// (gen_vertical_fixed_slices.cpp, fixed_staged); the others, and the slices past
// the last whole stage, as before. Plans reach it only from half the L3's
// size.
#include <numeric>

#include "backend/jit/generators.hpp"
#include "backend/jit/kernel_cache.hpp"
#include "jit_direct_util.hpp"

namespace crest::impl::jit::test {
namespace {

class JitFixedStream : public isa_dt_test {
protected:
    // n_outer dense slices of rows x cols (packed: two slices a ymm, as
    // plans make them for rows of 8-16 bytes); dst at dst_offset bytes
    // past a line, slices dst_pad elements apart beyond their columns.
    // nan_slice >= 0: that slice's last element gets a NaN (f32 positive,
    // 16-bit negative).
    void run(int rows, int cols, bool packed, int64_t n_outer, int dst_offset, int dst_pad,
            int64_t nan_slice, uint32_t seed) {
        SCOPED_TRACE("rows=" + std::to_string(rows) + " cols=" + std::to_string(cols)
                + " packed=" + std::to_string(packed) + " n_outer=" + std::to_string(n_outer)
                + " dst_offset=" + std::to_string(dst_offset)
                + " dst_pad=" + std::to_string(dst_pad)
                + " nan_slice=" + std::to_string(nan_slice));
        const size_t es = esize(dt());
        const int64_t slice = int64_t(rows) * cols, dst_stride = cols + dst_pad;
        kernel_config cfg;
        cfg.isa = isa();
        cfg.family = family_t::vert_reg;
        cfg.src_dt = cfg.dst_dt = dt();
        cfg.unroll = (cols + 15) / 16;  // the general loop's column vectors, as plans set it
        cfg.block_rows = rows;
        cfg.block_cols = cols;
        if (packed) {
            cfg.block_row_stride = static_cast<int>(cols * es);
            cfg.block_slice_stride = static_cast<int>(slice * es);
        }
        cfg.stream_dst = true;
        const auto code = get_code(cfg);
        guarded src(size_t(n_outer * slice) * es), dst_buf(size_t(n_outer * dst_stride) * es + 128);
        uint8_t *const dst = past_line(dst_buf.data(), dst_offset);
        std::mt19937 rng(seed);
        for (int64_t i = 0; i < n_outer * slice; ++i)
            put(src.data(), i, dt(), random_bits(dt(), rng, false));
        if (nan_slice >= 0)
            put(src.data(), nan_slice * slice + slice - 1, dt(),
                    dt() == data_type::f32 ? qnan_bits(dt()) : negative_nan(dt()));
        std::vector<uint32_t> want(size_t(n_outer * cols));
        for (int64_t o = 0; o < n_outer; ++o)
            for (int64_t c = 0; c < cols; ++c)
                want[size_t(o * cols + c)] = expected(
                        src.data() + (o * slice + c) * es, rows, cols, nullptr, false, dt());
        const vert_call a {src.data(), dst, cols, rows, int64_t(cols * es), false, n_outer,
                int64_t(slice * es), int64_t(dst_stride * es), nullptr, nullptr};
        code->fn(&a);
        for (int64_t o = 0; o < n_outer; ++o)
            for (int64_t c = 0; c < cols; ++c)
                expect_same(get(dst, o * dst_stride + c, dt()), want[size_t(o * cols + c)], dt(),
                        o * cols + c);
        EXPECT_TRUE(src.guards_ok());
        EXPECT_TRUE(dst_buf.guards_ok());
    }
};

// Slices of 7x7, 14x14 and 3x3 (stages of 4-32 slices), 5 rows of 13
// (832-byte stages) and 9 of 17 f32 columns (no stage: 1088 bytes); one
// slice short of a stage, a stage, a stage and one, three and a few; dst
// off a line or padded (no stage); a NaN in a staged slice (f32: the
// call redone by the general loop over what it streamed) and in the
// slices after the stages.
TEST_P(JitFixedStream, StagesAndTheRest) {
    if (isa() != isa_t::avx512_core) GTEST_SKIP() << "AVX-512 only";
    const bool narrow = dt() != data_type::f32;  // 16-bit rows of 8-16 bytes: 4-8 columns
    struct block {
        int rows, cols;
        bool packed;
    };
    const std::vector<block> blocks {{7, 7, narrow}, {14, 14, false}, {3, 3, !narrow},
            {5, 13, false}, {9, 17, false}, {2, 5, narrow}};
    uint32_t seed = 900;
    for (const block &b : blocks) {
        const int64_t b_bytes = b.cols * int64_t(esize(dt()));
        const int64_t stage = b_bytes / std::gcd<int64_t>(b_bytes, 64) * 64 / b_bytes;
        for (int64_t n : {stage - 1, stage, stage + 1, 3 * stage + 5}) {
            if (n < 1) continue;
            run(b.rows, b.cols, b.packed, n, 0, 0, -1, seed++);
            run(b.rows, b.cols, b.packed, n, 4, 0, -1, seed++);
            run(b.rows, b.cols, b.packed, n, 0, 3, -1, seed++);
            run(b.rows, b.cols, b.packed, n, 0, 0, n / 2, seed++);
            run(b.rows, b.cols, b.packed, n, 0, 0, n - 1, seed++);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(All, JitFixedStream, every_isa_and_dtype(), isa_dt_name);

} // namespace
} // namespace crest::impl::jit::test
