// AVX-512 f32 inner blocks over rows that split lines, called directly
// (gen_inner_block_lines.cpp): blocks of 16 dense rows from a line read
// as whole lines; other calls (src off a line, padded rows) by vectors.
// Each call is checked against the values, whatever path took it.
#include "backend/jit/kernel_cache.hpp"
#include "backend/jit/plan.hpp"
#include "jit_direct_util.hpp"

namespace crest::impl::jit::test {
namespace {

bool avx512_runs() {
    for (const char *isa : runnable_isas())
        if (isa_named(isa) == isa_t::avx512_core) return true;
    return false;
}

struct lines_case {
    int n;            // elements a row
    int64_t n_out;
    int src_offset;   // bytes past a line
    int pad;          // elements between rows beyond n
    bool accumulate;
    int64_t nan_at;   // element of src (-1: none)
};

void run(const lines_case &c, uint32_t seed) {
    SCOPED_TRACE("n=" + std::to_string(c.n) + " n_out=" + std::to_string(c.n_out)
            + " src_offset=" + std::to_string(c.src_offset) + " pad=" + std::to_string(c.pad)
            + " accumulate=" + std::to_string(c.accumulate)
            + " nan_at=" + std::to_string(c.nan_at));
    plan P;
    ASSERT_TRUE(make_plan(make_problem(data_type::f32, {64, c.n}, 0b10), isa_t::avx512_core, 2,
            &P, nullptr));
    ASSERT_TRUE(P.code);
    ASSERT_EQ(P.code->cfg.block_n, c.n);  // the blocks
    const int64_t os = c.n + c.pad, n_src = c.n_out * os;
    guarded src_buf(size_t(n_src) * 4 + 64 + c.src_offset), dst(size_t(c.n_out) * 4);
    uint8_t *const src = past_line(src_buf.data(), c.src_offset);
    std::mt19937 rng(seed);
    // Around and between the rows: values larger than theirs.
    for (size_t i = 0; i + 4 <= src_buf.size(); i += 4)
        put(src_buf.data() + i, 0, data_type::f32, 0x7f000000u);
    for (int64_t o = 0; o < c.n_out; ++o)
        for (int64_t j = 0; j < c.n; ++j)
            put(src, o * os + j, data_type::f32, random_bits(data_type::f32, rng, rng() % 4 == 0));
    if (c.nan_at >= 0) put(src, c.nan_at, data_type::f32, qnan_bits(data_type::f32));
    for (int64_t o = 0; o < c.n_out; ++o)
        put(dst.data(), o, data_type::f32, random_bits(data_type::f32, rng, false));
    std::vector<uint32_t> want(size_t(c.n_out));
    for (int64_t o = 0; o < c.n_out; ++o)
        want[size_t(o)] = expected(src + o * os * 4, c.n, 1, dst.data() + o * 4, c.accumulate,
                data_type::f32);
    const inner_call a {src, dst.data(), c.n_out, os * 4, 4, 1, 0, c.n, c.accumulate};
    P.code->fn(&a);
    for (int64_t o = 0; o < c.n_out; ++o)
        expect_same(get(dst.data(), o, data_type::f32), want[size_t(o)], data_type::f32, o);
    EXPECT_TRUE(src_buf.guards_ok());
    EXPECT_TRUE(dst.guards_ok());
}

// Rows of 17-127 elements (not a multiple of 16), blocks and the outputs
// past them, from a line or off one, dense or padded, fresh and
// accumulating.
TEST(JitBlockLines, RowsThatSplitLines) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 6100;
    for (int n : {17, 20, 28, 40, 56, 100, 127})
        for (int64_t n_out : {16, 37, 64})
            for (int offset : {0, 4, 32})
                for (int pad : {0, 3})
                    for (bool acc : {false, true}) run({n, n_out, offset, pad, acc, -1}, ++seed);
}

// A NaN where a row starts, ends, or in a line two rows share: its
// output gets it (the block is redone exactly).
TEST(JitBlockLines, NaNInAnyRow) {
    if (!avx512_runs()) GTEST_SKIP() << "AVX-512 not runnable here";
    uint32_t seed = 6200;
    for (int n : {20, 56})
        for (int64_t at : {int64_t(0), int64_t(n - 1), int64_t(n), int64_t(3 * n + 5),
                     int64_t(16 * n - 1), int64_t(17 * n + 2)})
            for (bool acc : {false, true}) run({n, 37, 0, 0, acc, at}, ++seed);
}

} // namespace
} // namespace crest::impl::jit::test
