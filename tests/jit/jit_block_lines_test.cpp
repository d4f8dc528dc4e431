// AVX-512 inner blocks over rows that split lines, called directly
// (gen_inner_block_lines.cpp): in calls of 1 MiB or more (16-bit: 4
// MiB), blocks of 16 dense rows from a line read as whole lines; other
// calls (fewer bytes, src off a line, padded rows) by vectors. f32 rows
// of 17-127 elements, 16-bit word blocks of 34-62 and of 300 (Intel's,
// inner_blocks_take). Outputs of several rows (an outer reduced dim)
// read a row's block after another, each by lines where it starts on
// one. Each call is checked against the values, whatever path took it.
#include "backend/jit/generators.hpp"
#include "backend/jit/isa.hpp"
#include "backend/jit/kernel_cache.hpp"
#include "backend/jit/plan.hpp"
#include "jit_direct_util.hpp"

namespace crest::impl::jit::test {
namespace {

struct lines_case {
    int n;  // elements a row
    int64_t n_out;
    int src_offset;  // bytes past a line
    int pad;         // elements between rows beyond n
    bool accumulate;
    int64_t nan_at;  // element of src counted from its start (-1: none)
    int rows = 1;    // rows an output, each the n_out outputs' block
    int row_skew = 0;  // bytes past a line where the later rows start
    int64_t negative_out = -1;  // this output's elements negative in every row (-1: none)
};

class JitBlockLines : public ::testing::TestWithParam<data_type> {
protected:
    data_type dt() const { return GetParam(); }

    void run(const lines_case &c, uint32_t seed) {
        SCOPED_TRACE("n=" + std::to_string(c.n) + " n_out=" + std::to_string(c.n_out)
                     + " src_offset=" + std::to_string(c.src_offset) + " pad="
                     + std::to_string(c.pad) + " accumulate=" + std::to_string(c.accumulate)
                     + " nan_at=" + std::to_string(c.nan_at) + " rows=" + std::to_string(c.rows)
                     + " row_skew=" + std::to_string(c.row_skew)
                     + " negative_out=" + std::to_string(c.negative_out));
        plan P;
        ASSERT_TRUE(
                make_plan(make_problem(dt(), {64, c.n}, 0b10), isa_t::avx512_core, 2, &P, nullptr));
        ASSERT_TRUE(P.code);
        std::shared_ptr<const generated_code> code = P.code;
        if (c.n >= inner_block_max_n && dt() != data_type::f32 && !intel_cpu()) {
            // 16-bit rows of 256-512 go by the word blocks on Intel CPUs
            // only: elsewhere made from the plan's config all the same.
            kernel_config cfg = code->cfg;
            cfg.block_n = c.n;
            cfg.fused16 = false;
            code = get_code(cfg);
        }
        ASSERT_EQ(code->cfg.block_n, c.n);  // the blocks
        const int64_t os = c.n + c.pad, n_src = c.n_out * os;
        const size_t es = esize(dt());
        const int64_t row_stride = (n_src * int64_t(es) + 63) / 64 * 64 + c.row_skew;
        guarded src_buf(size_t(row_stride * c.rows) + 64 + c.src_offset),
                dst(size_t(c.n_out) * es);
        uint8_t *const src = past_line(src_buf.data(), c.src_offset);
        std::mt19937 rng(seed);
        // Around and between the rows: values larger than theirs.
        const uint32_t huge = dt() == data_type::f32 ? 0x7f000000u : 0x7f00u;
        for (size_t i = 0; i + es <= src_buf.size(); i += es)
            put(src_buf.data() + i, 0, dt(), huge);
        for (int r = 0; r < c.rows; ++r)
            for (int64_t o = 0; o < c.n_out; ++o)
                for (int64_t j = 0; j < c.n; ++j) {
                    // (No ties there: a -0 max would pass for a +0.)
                    const bool neg = o == c.negative_out;
                    uint32_t b = random_bits(dt(), rng, !neg && rng() % 4 == 0);
                    if (neg) b |= dt() == data_type::f32 ? 0x80000001u : 0x8001u;
                    put(src + r * row_stride, o * os + j, dt(), b);
                }
        // 16-bit: odd NaNs negative (the chains' case), even ones positive.
        if (c.nan_at >= 0)
            put(src, c.nan_at, dt(), c.nan_at % 2 ? negative_nan(dt()) : qnan_bits(dt()));
        for (int64_t o = 0; o < c.n_out; ++o)
            put(dst.data(), o, dt(), random_bits(dt(), rng, false));
        std::vector<uint32_t> want(size_t(c.n_out));
        for (int64_t o = 0; o < c.n_out; ++o)
            want[size_t(o)] = expected_rows(src + o * os * es, c.n, c.rows, row_stride,
                    dst.data() + o * es, c.accumulate, dt());
        const inner_call a{src, dst.data(), c.n_out, int64_t(os * es), int64_t(es), c.rows,
                row_stride, c.n, c.accumulate};
        code->fn(&a);
        for (int64_t o = 0; o < c.n_out; ++o)
            expect_same(get(dst.data(), o, dt()), want[size_t(o)], dt(), o);
        EXPECT_TRUE(src_buf.guards_ok());
        EXPECT_TRUE(dst.guards_ok());
    }

    std::vector<int> row_lengths() const {
        if (dt() == data_type::f32) return {17, 20, 28, 40, 56, 100, 127};
        return {34, 40, 56, 62, 300};
    }

    // Outputs enough for a call that goes by lines (f32 1 MiB, 16-bit 4
    // MiB), and some past it.
    int64_t big(int n) const {
        const int64_t bytes = dt() == data_type::f32 ? int64_t(1) << 20 : int64_t(4) << 20;
        return bytes / (n * int64_t(esize(dt()))) + 37;
    }
};

// Blocks and the outputs past them, in calls of 1 MiB and more and in
// small ones, from a line or off one, dense or padded, fresh and
// accumulating.
TEST_P(JitBlockLines, RowsThatSplitLines) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 6100;
    for (int n : row_lengths()) {
        for (bool acc : {false, true}) {
            run({n, big(n), 0, 0, acc, -1}, ++seed);
            run({n, big(n), 4, 0, acc, -1}, ++seed);
            run({n, big(n), 0, 2, acc, -1}, ++seed);
            run({n, 37, 0, 0, acc, -1}, ++seed);
        }
        // Several rows: each row's block by lines, the later ones off a
        // line too; a NaN in a later row.
        for (int rows : {2, 3})
            for (int skew : {0, 8}) {
                run({n, big(n), 0, 0, false, -1, rows, skew}, ++seed);
                run({n, 100, 0, 0, true, -1, rows, skew}, ++seed);
            }
        const int64_t es = int64_t(esize(dt())), row = (big(n) * n * es + 63) / 64 * 64 / es;
        for (int64_t at : {row + 3 * n + 1, 2 * row + 16 * n - 1})
            run({n, big(n), 0, 0, false, at, 3, 0}, ++seed);
    }
}

// Later rows whose stride is off the lines' grid by any whole number of
// elements (their blocks shifted out of the aligned lines around them),
// or by a part of one (16-bit, an odd byte: by vectors): fresh and
// accumulating, a NaN where a later row's block starts or ends, an
// output of negatives only.
TEST_P(JitBlockLines, LaterRowsOffTheGrid) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 6400;
    const bool f32 = dt() == data_type::f32;
    const int64_t es = int64_t(esize(dt()));
    const std::vector<int> skews = f32 ? std::vector<int> {4, 36, 60}
                                       : std::vector<int> {2, 34, 62, 1};
    for (int n : f32 ? std::vector<int> {17, 25, 100, 127} : std::vector<int> {34, 62}) {
        const int64_t nout = big(n), row = (nout * n * es + 63) / 64 * 64;
        for (int skew : skews) run({n, nout, 0, 0, false, -1, 3, skew}, ++seed);
        run({n, nout, 4, 0, true, -1, 2, skews[1]}, ++seed);
        const int skew = skews[0];
        const int64_t stride = (row + skew) / es;  // elements
        for (int64_t at : {stride + 16 * n, 2 * stride + 17 * n - 1})
            run({n, nout, 0, 0, false, at, 3, skew}, ++seed);
        lines_case c {n, nout, 0, 0, false, -1, 3, skew};
        c.negative_out = 20;
        run(c, ++seed);
    }
}

// A NaN where a row starts, ends, in a line two rows share, or in the
// outputs past the last whole block: its output gets it.
TEST_P(JitBlockLines, NaNInAnyRow) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 6200;
    for (int n : row_lengths()) {
        const int64_t nout = big(n);
        for (int64_t at : {int64_t(0), int64_t(n - 1), int64_t(n), int64_t(3 * n + 5),
                     int64_t(16 * n - 1), int64_t(1000 * n + 2), nout * n - 1})
            for (bool acc : {false, true}) run({n, nout, 0, 0, acc, at}, ++seed);
    }
}

// AVX-512's word blocks of several rows an output over rows that split
// lines and do not go by lines (odd lengths, or calls under 4 MiB) take
// their rows in ymm halves (word_halves): every row and output, an
// output of negatives only (its halves' max must not meet the zeroed
// high halves), a negative NaN in a later row, padded rows, src off a
// line.
TEST_P(JitBlockLines, WordHalvesOfSeveralRows) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    if (dt() == data_type::f32) GTEST_SKIP() << "16-bit only";
    uint32_t seed = 6300;
    for (int n : {33, 49, 65, 81, 121, 127}) {
        for (int rows : {2, 3}) {
            for (bool acc : {false, true}) {
                run({n, 37, 0, 0, acc, -1, rows}, ++seed);
                run({n, 100, 4, 2, acc, -1, rows, 8}, ++seed);
                for (int64_t neg : {5, 20, 35}) {
                    lines_case c {n, 37, 0, 0, acc, -1, rows};
                    c.negative_out = neg;
                    run(c, ++seed);
                }
            }
            const int64_t row = (37 * n * 2 + 63) / 64 * 64 / 2;
            for (int64_t at : {row + 3 * n + 1, (rows - 1) * row + 16 * n - 1})
                run({n, 37, 0, 0, false, at, rows}, ++seed);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(All, JitBlockLines,
        ::testing::Values(data_type::f32, data_type::bf16, data_type::f16),
        dt_name);

} // namespace
} // namespace crest::impl::jit::test
