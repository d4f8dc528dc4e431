// AVX-512 tiny rows' permute trees (and 16-bit rows of 3, the dwords)
// read from whole lines, called directly (gen_inner_tiny.cpp,
// gen_inner_tiny_dwords.cpp): rows of n elements, n not a power of 2, from a
// src on a line, take a group's n lines each once (over every row of an
// output) and shift each window out of them; calls of one row under 1
// MiB, and src off a line, take the split loads (or, with several rows,
// the other paths); the dwords take outputs of 2-7 rows too, each raw
// vector maxed over the rows as two vectors of dwords. Each call is
// checked against the values, whatever path took it.
#include <algorithm>

#include "backend/jit/kernel_cache.hpp"
#include "backend/jit/plan.hpp"
#include "jit_direct_util.hpp"

namespace crest::impl::jit::test {
namespace {

struct tiny_case {
    int n;  // elements a row
    int64_t n_out;
    int rows;         // rows an output, row_stride apart
    int src_offset;   // bytes past a line
    int row_pad;      // bytes between one row's outputs and the next row's
    bool negative;    // every value's sign set (16-bit: the keys' forms)
    int64_t nan_at;   // element of src counted over the rows (-1: none)
};

class JitTinyLines : public ::testing::TestWithParam<data_type> {
protected:
    data_type dt() const { return GetParam(); }

    void run(const tiny_case &c, uint32_t seed) {
        SCOPED_TRACE("n=" + std::to_string(c.n) + " n_out=" + std::to_string(c.n_out)
                     + " rows=" + std::to_string(c.rows) + " src_offset="
                     + std::to_string(c.src_offset) + " row_pad=" + std::to_string(c.row_pad)
                     + " negative=" + std::to_string(c.negative)
                     + " nan_at=" + std::to_string(c.nan_at));
        plan P;
        ASSERT_TRUE(
                make_plan(make_problem(dt(), {64, c.n}, 0b10), isa_t::avx512_core, 2, &P, nullptr));
        ASSERT_TRUE(P.code);
        ASSERT_EQ(P.code->cfg.block_n, c.n);  // the tiny rows
        const size_t es = esize(dt());
        const int64_t row_bytes = c.n_out * c.n * int64_t(es);
        const int64_t row_stride = row_bytes + c.row_pad;
        guarded src_buf(size_t(row_stride * c.rows) + 64 + size_t(c.src_offset)),
                dst(size_t(c.n_out) * es);
        uint8_t *const src = past_line(src_buf.data(), c.src_offset);
        std::mt19937 rng(seed);
        const uint32_t sign = c.negative ? (dt() == data_type::f32 ? 0x80000000u : 0x8000u) : 0;
        // Around and between the rows: values larger than theirs.
        const uint32_t huge = dt() == data_type::f32 ? 0x7f000000u : 0x7f00u;
        for (size_t i = 0; i + es <= src_buf.size(); i += es)
            put(src_buf.data() + i, 0, dt(), huge);
        auto at = [&](int64_t e) {  // element e counted over the rows
            const int64_t per_row = c.n_out * c.n;
            return src + (e / per_row) * row_stride + (e % per_row) * int64_t(es);
        };
        for (int64_t e = 0; e < c.n_out * c.n * c.rows; ++e)
            put(at(e), 0, dt(), random_bits(dt(), rng, rng() % 4 == 0) | sign);
        // 16-bit: odd NaNs negative (the chains' case), even ones positive.
        if (c.nan_at >= 0)
            put(at(c.nan_at), 0, dt(), c.nan_at % 2 ? negative_nan(dt()) : qnan_bits(dt()));
        std::vector<uint8_t> want(size_t(c.n_out) * es);
        for (int64_t o = 0; o < c.n_out; ++o)
            for (int r = 0; r < c.rows; ++r) {
                uint8_t *w = want.data() + o * int64_t(es);
                const uint32_t v = expected(
                        src + r * row_stride + o * c.n * int64_t(es), c.n, 1, w, r > 0, dt());
                put(w, 0, dt(), v);
            }
        const inner_call a{src, dst.data(), c.n_out, int64_t(c.n * es), int64_t(es), c.rows,
                row_stride, c.n, 0};
        P.code->fn(&a);
        for (int64_t o = 0; o < c.n_out; ++o)
            expect_same(get(dst.data(), o, dt()), get(want.data(), o, dt()), dt(), o);
        EXPECT_TRUE(src_buf.guards_ok());
        EXPECT_TRUE(dst.guards_ok());
    }

    // Not powers of 2 (those read whole lines anyway); 16-bit rows of 2
    // and 3 take the dwords (gen_inner_tiny_dwords.cpp: rows of 3 have
    // their own lines form), not the trees.
    std::vector<int> row_lengths() const {
        if (dt() == data_type::f32) return {3, 5, 6, 7, 9, 12, 14, 15};
        return {2, 3, 5, 7, 9, 14, 15, 17, 24, 28, 31};
    }

    // Outputs enough for a call of one row that goes by lines (1 MiB).
    int64_t big(int n) const { return (int64_t(1) << 20) / (n * int64_t(esize(dt()))) + 37; }
};

// Every count of rows, src on a line and off one, rows' stride on a line
// and off one, the vectors of outputs and those left after them.
TEST_P(JitTinyLines, EveryCountOfRows) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 7100;
    for (int n : row_lengths()) {
        run({n, big(n), 1, 0, 0, false, -1}, ++seed);
        run({n, big(n), 1, 8, 0, false, -1}, ++seed);
        run({n, 100, 1, 0, 0, false, -1}, ++seed);
        for (int rows = 2; rows <= 7; ++rows)
            for (int offset : {0, 8})
                for (int pad : {0, 4, 64})
                    run({n, 96 + rows, rows, offset, pad, false, -1}, ++seed);
    }
}

// Negative values only (16-bit: every group redone on keys, then keys
// from the start), and a NaN of either sign in the first row, a later
// row or the last row's last element.
TEST_P(JitTinyLines, NegativesAndNaN) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 7200;
    for (int n : row_lengths()) {
        for (bool neg : {false, true}) {
            run({n, big(n), 1, 0, 0, neg, neg ? -1 : int64_t(1000 * n + n - 1)}, ++seed);
            // In each of a group's first three lines (a vector of
            // outputs is n lines), odd: 16-bit a negative NaN.
            const int64_t lanes = 64 / int64_t(esize(dt()));
            for (int64_t line = 0; line < std::min(n, 3); ++line)
                run({n, big(n), 1, 0, 0, neg, (100 * n + line) * lanes + 7}, ++seed);
            for (int rows : {2, 3, 5, 7}) {
                const int64_t nout = 130, per_row = nout * n;
                run({n, nout, rows, 0, 0, neg, -1}, ++seed);
                for (int64_t e : {int64_t(3), per_row + 40 * n + 1, (rows - 1) * per_row + 17 * n,
                             rows * per_row - 1})
                    run({n, nout, rows, 0, 0, neg, e}, ++seed);
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(All, JitTinyLines,
        ::testing::Values(data_type::f32, data_type::bf16, data_type::f16), dt_name);

} // namespace
} // namespace crest::impl::jit::test
