// Sweeps of the JIT ReduceMax kernels against the ref oracle, on every ISA
// this machine can run and every dtype: sizes around the vector width and
// tails, rows x columns, every axes subset of small 4-D shapes under
// permuted and padded layouts, NaN in every position class, ±inf, ties,
// zero-size dims, rank 0 to 12, empty mask.
#include "tests/jit/jit_reduce_fixture.hpp"

#include <cstdlib>

#include <xbyak/xbyak_util.h>

namespace crest::impl::jit::test {
namespace {

std::vector<int64_t> sweep_sizes() {
    std::vector<int64_t> s;
    for (int64_t n = 1; n <= 70; ++n) s.push_back(n);
    for (int64_t n : {127, 128, 129, 255, 256, 257, 1000, 2047, 2048, 2049, 4099})
        s.push_back(n);
    return s;
}

TEST_P(JitReduce, InnerSweep) {
    for (int64_t n : sweep_sizes()) {
        const std::string name = run(make_problem(dt(), {n}, 1));
        if (n > 1) {
            EXPECT_NE(name.find("reduce_inner"), std::string::npos) << name;
        }
        run(make_problem(dt(), {3, n}, 2));
        run(make_problem(dt(), {5, n}, 3));  // rows of rows
    }
}

// 16-bit long rows first keep two statistics; an output of negatives
// only takes a second pass for its max, and the call's later outputs then
// keep all three in one pass (gen_inner.cpp): outputs of both signs,
// NaNs of both signs and another all-negative output after the switch.
TEST_P(JitReduce, LongRowsAfterAnAllNegativeOutput) {
    if (dt() == data_type::f32) GTEST_SKIP() << "16-bit rows only";
    for (int64_t n : {300, 1000}) {
        planting pl;
        for (int64_t out : {3, 15})
            for (int64_t j = 0; j < n; ++j)
                pl.bits_at.push_back({size_t(out * n + j), 0xc000u + uint32_t(j * 37 % 0x1000)});
        pl.bits_at.push_back({size_t(10 * n + 7), qnan_bits(dt()) | 0x8000u});
        pl.bits_at.push_back({size_t(12 * n + n - 1), dt() == data_type::bf16 ? 0x7fc1u : 0x7e01u});
        pl.bits_at.push_back({size_t(13 * n), inf_bits(dt(), false)});
        pl.bits_at.push_back({size_t(14 * n + 1), inf_bits(dt(), true)});
        run(make_problem(dt(), {20, n}, 2), pl);
        run(make_problem(dt(), {2, 20, n}, 5), pl);  // rows of rows
    }
}

// Many outputs with short rows: the AVX-512 kernels fold 16 outputs at a
// time (blocks, then a remainder), with extra reduced dims accumulating.
TEST_P(JitReduce, ShortRowBlocks) {
    for (int64_t n : {1, 3, 15, 16, 17, 31, 33, 56, 63, 64, 65, 100, 255, 256, 257}) {
        for (int64_t outs : {15, 16, 17, 37, 64})
            run(make_problem(dt(), {outs, n}, 2));
        run(make_problem(dt(), {3, 40, n}, 5));        // extra reduced dim
        run(make_problem(dt(), {33, 2, n}, 6));        // rows of rows
        // NaN in an output of a block and in the remainder.
        run(make_problem(dt(), {37, n}, 2), {{size_t(5 * n + n / 2), size_t(36 * n)}, false});
        // Outputs two elements apart: the per-output loop takes them.
        run(make_problem(dt(), {40, n}, 2, {}, {2, 0}));
    }
}

// Every position of a short row holds, in turn, a NaN of either sign, or
// -inf beside +inf: the 16-bit blocks take two vectors at a time as raw
// dwords (a NaN in a high half) beside the low halves shifted up, and the
// last pair masked to its dwords (gen_inner_blocks.cpp); each dtype and
// path gets every position. All-negative rows check the order that the
// raw dwords' low bits must not disturb.
TEST_P(JitReduce, ShortRowBlocksEveryPosition) {
    // Quiet and signalling NaNs of both signs; for f16 also those whose
    // bits read as a float are +-inf or finite (gen_inner_blocks.cpp).
    const std::vector<uint32_t> nans = dt() == data_type::f32
            ? std::vector<uint32_t> {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u}
            : dt() == data_type::bf16
            ? std::vector<uint32_t> {0x7fc0u, 0xffc0u, 0x7f81u, 0xff81u, 0x7fffu, 0xffffu}
            : std::vector<uint32_t> {0x7e00u, 0xfe00u, 0x7c01u, 0xfc01u, 0x7f80u, 0xff80u,
                    0x7fffu, 0xffffu};
    for (int64_t n : {16, 32, 40, 56, 64, 33}) {
        for (int64_t pos = 0; pos < n; ++pos) {
            planting pl;
            pl.nan_at.push_back(size_t(5 * n + pos));
            pl.nan_bits = nans[size_t(pos) % nans.size()];
            pl.bits_at.push_back({size_t(9 * n + pos), inf_bits(dt(), true)});
            pl.bits_at.push_back({size_t(9 * n + (pos + 1) % n), inf_bits(dt(), false)});
            run(make_problem(dt(), {37, n}, 2), pl);
        }
        planting neg;
        neg.negative = true;
        run(make_problem(dt(), {37, n}, 2), neg);
        run(make_problem(dt(), {3, 37, n}, 5), neg);
    }
}

// Vertical with outer kept dims and extra reduced dims: whole outer slices
// go to one kernel call, chunk bounds may cut a slice.
TEST_P(JitReduce, OuterSlices) {
    for (const dims_t &d : {dims_t {7, 6, 5, 300}, dims_t {3, 40, 9, 64}, dims_t {2, 33, 17, 100}})
        for (uint32_t mask : {0b0101u, 0b0100u, 0b0001u, 0b0111u}) {
            run(make_problem(dt(), d, mask));
            const thread_pool one(1);
            check(make_problem(dt(), d, mask), {}, one, seed_++);
        }
}

// Few columns whose outermost dim is also src's outermost (channels-last
// reducing H and W): chunks of whole slices of it, each read in one run,
// with no partials (plan.cpp, outer_slices_share); an odd count of 3
// slices cannot be shared out evenly and splits the rows instead. NaNs in
// the last slice (the second chunk's) and in the first.
TEST_P(JitReduce, OuterSlicesShareOutWithoutPartials) {
    for (int64_t n : {8, 3}) {
        const int64_t hw = n == 3 ? 40 : 24;  // above split_above_64k in every dtype
        const dims_t d {n, 16, hw, hw};
        const reduce_problem p = make_problem(dt(), d, 0b1100, permuted(d, {0, 2, 3, 1}));
        const plan P = plan_on_two(p);
        EXPECT_EQ(P.kind, plan_kind::vertical);
        EXPECT_EQ(P.two_level, n == 3) << "n=" << n;
        const size_t slice = size_t(16 * hw * hw);
        run(p);
        run(p, {{slice * size_t(n - 1) + 5, 7, size_t(n) * slice - 1}});
    }
}

// Two-stage plans whose slab is the kept dim's whole block (NCHW reducing
// C and W): each thread gets whole blocks where they share out evenly or
// are 4 a thread or more (8 blocks of 14 rows, 9 of 7), else bounds that
// cut a block (5 blocks: 45 outputs, split at any output). NaNs in the
// first block and in the last.
TEST_P(JitReduce, WholeBlocksShareOut) {
    for (const dims_t &d : {dims_t {8, 40, 14, 14}, dims_t {9, 96, 7, 7}, dims_t {5, 96, 9, 9}}) {
        const reduce_problem p = make_problem(dt(), d, 0b1010);
        const plan P = plan_on_two(p);
        ASSERT_TRUE(P.slab_code) << describe(p);
        EXPECT_EQ(P.nchunks, 2);
        EXPECT_EQ(P.out_align, d[0] == 5 ? 1 : d[2]) << describe(p);
        const size_t block = size_t(d[1] * d[2] * d[3]);
        run(p);
        run(p, {{3, block * size_t(d[0]) - 2}});
    }
}

// Few columns in many slices (NCHW reducing N and H, channels-last
// reducing N and W): 8 slices a thread or more (40 channels or rows)
// share out whole slices (plan.cpp, many_slices_share); 12 split the rows
// instead. NaNs in the first slice and the last.
TEST_P(JitReduce, ManySlicesShareOutWithoutPartials) {
    for (int64_t c : {40, 12}) {
        const dims_t d {3, c, 480 / c, 28};
        for (bool cl : {false, true}) {
            const reduce_problem p = cl ? make_problem(dt(), d, 0b1001, permuted(d, {0, 2, 3, 1}))
                                        : make_problem(dt(), d, 0b0101);
            const plan P = plan_on_two(p);
            EXPECT_EQ(P.kind, plan_kind::vertical);
            const int64_t slices = cl ? 480 / c : c;  // H in channels-last, else C
            EXPECT_EQ(P.two_level, slices < 16) << describe(p);
            EXPECT_EQ(P.nchunks, 2);
            run(p);
            run(p, {{2, size_t(3 * c * (480 / c) * 28) - 3}});
        }
    }
}

// Inner plans with fewer than 64 outputs a thread split at any output
// (plan.cpp): 28 outputs of channels-last reducing C and H (rows of
// 1100 channels, too long for slabs) go 14 / 14, where bounds by 32 gave
// one thread all of them; 200 outputs keep bounds by 32. NaNs in the
// first output's rows, in the middle and in the last output's.
TEST_P(JitReduce, FewOutputsShareOut) {
    for (const dims_t &d : {dims_t {2, 1100, 14, 14}, dims_t {2, 1100, 2, 100}}) {
        const reduce_problem p = make_problem(dt(), d, 0b0110, permuted(d, {0, 2, 3, 1}));
        const plan P = plan_on_two(p);
        EXPECT_EQ(P.kind, plan_kind::inner);
        EXPECT_FALSE(P.two_level);
        EXPECT_EQ(P.nchunks, 2);
        EXPECT_EQ(P.out_align, d[3] == 14 ? 1 : 32) << describe(p);
        run(p);
        const size_t n = size_t(d[0] * d[1] * d[2] * d[3]);
        run(p, {{1, n / 2 + 3, n - 1}});
    }
}

TEST_P(JitReduce, VerticalSweep) {
    for (int64_t m : sweep_sizes()) {
        for (int64_t rows : {1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17}) {
            const std::string name = run(make_problem(dt(), {rows, m}, 1));
            if (rows > 1 && m > 1) {
                EXPECT_TRUE(name.find("vertical") != std::string::npos
                        || name.find("reduce_all") != std::string::npos) << name;
            }
        }
    }
}

// Few columns (register-held, vert_reg): consecutive rows go to up to 4
// accumulator sets. Every row count around the set sizes, a NaN in each
// row (so in each set and in the single-row remainder), outer slices, and
// an extra reduced dim (calls that accumulate into dst).
TEST_P(JitReduce, RegisterColumnSets) {
    for (int64_t m : {1, 15, 16, 17, 32, 64, 100, 128, 129, 256}) {
        for (int64_t rows : {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17}) {
            const std::string name = run(make_problem(dt(), {rows, m}, 1));
            for (int64_t r = 0; r < rows; ++r)
                run(make_problem(dt(), {rows, m}, 1), {{size_t(r * m + (r * 7) % m)}, false});
            run(make_problem(dt(), {3, rows, m}, 2), {{size_t((2 * rows + rows - 1) * m)}, false});
            run(make_problem(dt(), {5, rows, m}, 5), {{size_t(4 * rows * m + m - 1)}, true});
        }
    }
}

// The f32 tile passes on AVX-512 look for NaN through a sum of the rows:
// +inf and -inf in one column make that sum NaN with no NaN in the data,
// and the result must still be +inf. Also next to a real NaN. The same for
// short inner rows (blocks of 16 outputs), should they take that route.
TEST_P(JitReduce, InfinitiesMeetInAColumn) {
    const uint32_t pinf = inf_bits(dt(), false), ninf = inf_bits(dt(), true);
    for (int64_t m : {64, 40, 4096 + 24}) {
        for (int64_t rows : {1, 2, 8, 9, 17}) {
            planting pl;
            for (int64_t c = 0; c < m; c += 7) {
                pl.bits_at.push_back({size_t((c % rows) * m + c), pinf});
                pl.bits_at.push_back({size_t(((c + 3) % rows) * m + c), ninf});
            }
            run(make_problem(dt(), {rows, m}, 1), pl);
            pl.nan_at = {size_t((rows - 1) * m + 5), size_t(m / 2)};
            run(make_problem(dt(), {rows, m}, 1), pl);
            run(make_problem(dt(), {2, rows, m}, 5), pl);  // accumulating calls
        }
    }
    // Short inner rows (blocks of 16 outputs).
    for (int64_t n : {16, 40, 64, 100}) {
        planting pl;
        for (int64_t o = 0; o < 37; o += 3) {
            pl.bits_at.push_back({size_t(o * n + o % n), pinf});
            pl.bits_at.push_back({size_t(o * n + (o + 5) % n), ninf});
        }
        run(make_problem(dt(), {37, n}, 2), pl);
        pl.nan_at = {size_t(20 * n + n - 1)};
        run(make_problem(dt(), {37, n}, 2), pl);
        run(make_problem(dt(), {3, 37, n}, 5), pl);
    }
}

// Short inner rows whose rows dim lies far outside the outputs (NCHW
// reducing C and W, or N and W): two stages through a stack scratch, one
// or several scratch-fulls of outputs, row tails, NaN and infinities, on
// 1 and 2 threads.
TEST_P(JitReduce, ShortRowsFarRows) {
    const thread_pool one(1);
    // {1, 8, 1001, 37}: several slabs a thread, the second thread's first
    // one short, up to a line (split_slabs). {2, 64, 7, 7}, {3, 500, 14,
    // 14}, {5, 40, 5, 3}: rows right after the kept dim's block, its
    // columns by a period (plan::period_code) when reducing C and W.
    const dims_t shapes[] = {{4, 9, 20, 64}, {2, 8, 100, 64}, {8, 8, 33, 37}, {3, 12, 300, 16},
            {9, 30, 17, 64}, {16, 2, 3, 200}, {1, 8, 1001, 37}, {2, 64, 7, 7}, {3, 500, 14, 14},
            {5, 40, 5, 3}};
    for (const auto &d : shapes)
        for (uint32_t mask : {0b1010u, 0b1001u}) {
            const reduce_problem p = make_problem(dt(), d, mask);
            run(p);
            check(p, {}, one, seed_++);
            const size_t n = size_t(d[0] * d[1] * d[2] * d[3]);
            planting pl;
            pl.nan_at = {n / 3, n - 1};
            pl.bits_at = {{n / 2, inf_bits(dt(), false)}, {n / 2 + 1, inf_bits(dt(), true)}};
            run(p, pl);
        }
}

TEST_P(JitReduce, RowsByColumns) {
    const dims_t shapes[] = {{300, 700}, {1000, 1000}, {7, 100000}, {100000, 7},
            {2, 3, 50000}, {4099, 33}, {33, 4099}, {65, 4096 + 17}};
    for (const auto &d : shapes)
        for (uint32_t mask = 1; mask < (1u << d.size()); ++mask) run(make_problem(dt(), d, mask));
}

TEST_P(JitReduce, TwoLevel) {
    EXPECT_NE(run(make_problem(dt(), {1 << 20}, 1)).find("reduce_all"), std::string::npos);
    run(make_problem(dt(), {3, 1 << 18}, 3));
    run(make_problem(dt(), {200001, 3}, 1));   // few columns, many rows
    run(make_problem(dt(), {5, 40000, 4}, 5));  // extra reduced dim split
    run(make_problem(dt(), {2, 70001}, 2));     // two outputs
    // Columns contiguous in src, scattered in dst (transposed output), with
    // a two-level and with a column split.
    for (const dims_t &d : {dims_t {64, 32, 40}, dims_t {4, 64, 200}}) {
        dims_t ds = permuted({1, d[1], d[2]}, {0, 2, 1});
        ds[0] = 0;
        run(make_problem(dt(), d, 1, {}, ds));
    }
}

TEST_P(JitReduce, AxesSubsetsAndLayouts) {
    const dims_t shapes[] = {{3, 4, 5, 6}, {2, 1, 7, 33}, {2, 17, 3, 19}};
    for (const auto &d : shapes) {
        const std::vector<dims_t> layouts = {
                dense(d),
                permuted(d, {0, 2, 3, 1}),           // channels-last
                permuted(d, {3, 2, 1, 0}),           // transposed
                permuted(d, {1, 0, 3, 2}),
                permuted(d, {0, 1, 2, 3}, {0, 1, 2, 3}),  // padded
                permuted(d, {0, 2, 3, 1}, {1, 0, 2, 5}),
        };
        for (const auto &ss : layouts)
            for (uint32_t mask = 0; mask < 16; ++mask) {
                run(make_problem(dt(), d, mask, ss));
                // dst in another layout than src
                dims_t kd = d;
                for (int i = 0; i < 4; ++i)
                    if ((mask >> i) & 1u) kd[i] = 1;
                dims_t ds = permuted(kd, {0, 2, 3, 1});
                for (int i = 0; i < 4; ++i)
                    if ((mask >> i) & 1u) ds[i] = 0;
                run(make_problem(dt(), d, mask, ss, ds));
            }
    }
}

// Channels-last src, channels-first dst, reducing N (and N with H): the
// vertical kernel's columns are [positions][channels] and are written out
// transposed, by 16x16 (AVX-512) or 8x8 (AVX2) blocks where whole blocks
// fit, on 1 and 2 threads.
TEST_P(JitReduce, TransposedOutput) {
    const thread_pool one(1);
    const dims_t shapes[] = {{3, 48, 20, 20}, {2, 17, 5, 7}, {5, 16, 4, 4}, {2, 300, 3, 11},
            {4, 64, 56, 56}};
    for (const auto &d : shapes)
        for (uint32_t mask : {1u, 5u}) {
            const dims_t ss = permuted(d, {0, 2, 3, 1});
            const reduce_problem p = make_problem(dt(), d, mask, ss);
            check(p, {}, one, seed_++);
            check(p, {}, pool2(), seed_++);
            check(p, {{size_t(d[1] * 7 + 3)}, false}, pool2(), seed_++);
        }
}

TEST_P(JitReduce, StridedElements) {
    // Every src stride doubled: no contiguous group at all.
    const dims_t d = {4, 9, 37};
    dims_t ss = dense(d);
    for (auto &s : ss) s *= 2;
    for (uint32_t mask = 0; mask < 8; ++mask) run(make_problem(dt(), d, mask, ss));
    // Broadcast src (stride 0) on a reduced and on a kept dim.
    run(make_problem(dt(), {5, 40}, 1, {0, 1}));
    run(make_problem(dt(), {5, 40}, 2, {0, 1}));
}

TEST_P(JitReduce, NaNPositions) {
    const int vl = std::string(GetParam().isa) == "avx2" ? 8 : 16;
    for (int64_t n : {int64_t(1), int64_t(vl - 1), int64_t(vl), int64_t(8 * vl * 2 + 5),
                 int64_t(37), int64_t(300)}) {
        std::vector<size_t> pos = {0, size_t(n - 1), size_t(n / 2)};
        for (int a = 0; a < 8; ++a) {
            pos.push_back(size_t(a * vl) % n);
            pos.push_back(size_t(a * vl + vl - 1) % n);
        }
        for (size_t at : pos) {
            run(make_problem(dt(), {n}, 1), {{at}, false});
            // Vertical: NaN in row r, column at.
            for (int64_t rows : {1, 2, 5, 7, 9, 14}) {
                for (int64_t r = 0; r < rows; ++r)
                    run(make_problem(dt(), {rows, n}, 1), {{size_t(r * n) + at}, false});
            }
            // Inner with rows: NaN in the last row only.
            run(make_problem(dt(), {4, n}, 3), {{size_t(3 * n) + at}, false});
        }
    }
    // NaN first then larger values, and NaN last after larger values.
    run(make_problem(dt(), {1000}, 1), {{0, 999}, false});
    run(make_problem(dt(), {1 << 20}, 1), {{(1 << 20) - 1}, false});
    run(make_problem(dt(), {1 << 20}, 1), {{0}, false});
    run(make_problem(dt(), {100000, 7}, 1), {{3, 700000 - 1}, false});
}

// Every kind of NaN: signalling, negative, and for f16 the payloads whose
// bits, read as the high half of an f32, are a large finite number (the
// AVX-512 16-bit kernels compare that way and must still see the NaN).
TEST_P(JitReduce, NaNPayloads) {
    std::vector<uint32_t> nans;
    if (dt() == data_type::f32) nans = {0x7f800001u, 0xffc00000u, 0xff800001u, 0x7fffffffu};
    else if (dt() == data_type::bf16) nans = {0x7f81, 0xffc0, 0xff81, 0x7fff, 0xffff};
    else nans = {0x7c01, 0x7d00, 0x7f80, 0xfc01, 0xfe00, 0xffff, 0x7fff};
    for (uint32_t bits : nans) {
        SCOPED_TRACE(bits);
        for (int64_t n : {37, 300, 4100}) {
            run(make_problem(dt(), {n}, 1), {{size_t(n / 3)}, false, bits});
            run(make_problem(dt(), {3, n}, 2), {{size_t(n + 5)}, false, bits});  // inner
            run(make_problem(dt(), {7, n}, 1), {{size_t(6 * n + n - 1)}, false, bits});  // vertical
        }
        run(make_problem(dt(), {2, 70000}, 1), {{size_t(70000 + 12345)}, false, bits});
        run(make_problem(dt(), {4096, 64}, 1),
                {{size_t(64 * 4000 + 3)}, false, bits});  // two-level
    }
}

// Outputs that see only negatives: the AVX-512 bf16/f16 rows then need
// the unsigned min of the raw bits, which a second pass finds for outputs
// of up to 32K elements (one pass keeps it above that). Both sides of the
// bound, with rows, and with one positive, +0, -0, a negative NaN or a
// positive NaN in output 1's last row.
TEST_P(JitReduce, AllNegativeOutputs) {
    const uint32_t pos_one = dt() == data_type::f32    ? 0x3f800000u
                             : dt() == data_type::bf16 ? 0x3f80u
                                                       : 0x3c00u;
    const uint32_t neg_zero = dt() == data_type::f32 ? 0x80000000u : 0x8000u;
    const uint32_t neg_nan = qnan_bits(dt()) | neg_zero;
    for (int64_t n : {37, 300, 4100, 40000}) {
        for (int64_t rows : {1, 3}) {
            SCOPED_TRACE(n * rows);
            const reduce_problem p = make_problem(dt(), {2, rows, n}, 6);
            const size_t at = size_t((2 * rows - 1) * n + n / 2);
            planting pl;
            pl.negative = true;
            run(p, pl);
            for (uint32_t b : {pos_one, 0u, neg_zero, neg_nan, qnan_bits(dt())}) {
                pl.bits_at = {{at, b}};
                run(p, pl);
            }
        }
    }
}

TEST_P(JitReduce, TiesAndInfinities) {
    for (int64_t n : {5, 16, 33, 100, 1000})
        for (uint32_t mask : {1u, 2u, 3u}) run(make_problem(dt(), {7, n}, mask), {{}, true});
    // All -inf, and +inf somewhere.
    const reduce_problem p = make_problem(dt(), {3, 45}, 2);
    std::string why;
    for (int isa_pass = 0; isa_pass < 1; ++isa_pass) {
        kernel_ptr k = make_reduce_max(p, pool2(), &why);
        ASSERT_TRUE(k);
        guarded src(3 * 45 * esize(dt())), got(3 * esize(dt())), want(3 * esize(dt()));
        for (size_t i = 0; i < 135; ++i) put(src.data(), i, dt(), inf_bits(dt(), true));
        put(src.data(), 45 + 44, dt(), inf_bits(dt(), false));
        put(src.data(), 90 + 0, dt(), inf_bits(dt(), false));
        const void *in[] = {src.data()};
        void *out[] = {got.data()};
        k->execute(in, out);
        ref::reduce_max(p, src.data(), want.data());
        EXPECT_EQ(0, std::memcmp(got.data(), want.data(), 3 * esize(dt())));
        EXPECT_EQ(get(got.data(), 0, dt()), inf_bits(dt(), true));
        EXPECT_EQ(get(got.data(), 1, dt()), inf_bits(dt(), false));
        EXPECT_TRUE(got.guards_ok());
    }
}

TEST_P(JitReduce, ZeroSizeAndRanks) {
    run(make_problem(dt(), {4, 0, 3}, 2));  // reduced 0: -inf
    run(make_problem(dt(), {4, 0, 3}, 1));  // kept 0: nothing written
    run(make_problem(dt(), {0}, 1));
    run(make_problem(dt(), {0}, 0));
    run(make_problem(dt(), {}, 0));  // rank 0
    run(make_problem(dt(), {1, 1, 1}, 7));
    run(make_problem(dt(), {5, 1, 7}, 0));  // empty mask: copy
    run(make_problem(dt(), {300, 700}, 0));
    run(make_problem(dt(), {30, 70}, 0, permuted({30, 70}, {1, 0})));
    const dims_t d12 = {2, 3, 1, 2, 2, 3, 1, 2, 3, 2, 1, 5};
    for (uint32_t mask : {0u, 1u, 0x800u, 0xfffu, 0x555u, 0xaaau, 0x0f0u})
        run(make_problem(dt(), d12, mask));
    dims_t ss = permuted(d12, {11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
    for (uint32_t mask : {1u, 0x800u, 0x555u}) run(make_problem(dt(), d12, mask, ss));
}

INSTANTIATE_TEST_SUITE_P(All, JitReduce, ::testing::ValuesIn(all_params()),
        [](const ::testing::TestParamInfo<param> &i) {
            const char *d = i.param.dt == data_type::f32 ? "f32"
                    : i.param.dt == data_type::bf16 ? "bf16" : "f16";
            return std::string(i.param.isa) + "_" + d;
        });

// Below 512 KiB of src a plan runs inline (one chunk); from 512 KiB on it
// takes the pool's threads. A two-level plan (reducing C) and an inner one.
TEST(JitPlan, InlineBelowHalfMiB) {
    if (max_isa() == isa_t::none) GTEST_SKIP() << "no JIT ISA";
    auto chunks = [](const dims_t &d, uint32_t mask) {
        return plan_on_two(make_problem(data_type::f32, d, mask)).nchunks;
    };
    EXPECT_EQ(chunks({1, 64, 32, 32}, 0b0010), 1);    // 256 KiB
    EXPECT_EQ(chunks({1, 127, 32, 32}, 0b0010), 1);   // just below 512 KiB
    EXPECT_EQ(chunks({1, 128, 32, 32}, 0b0010), 2);   // 512 KiB
    EXPECT_EQ(chunks({1, 128, 32, 32}, 0b1100), 2);
    EXPECT_EQ(plan_on_two(make_problem(data_type::bf16, {2, 1024, 14, 14}, 0b1000)).nchunks, 2);
    const split_above_64k split;
    EXPECT_EQ(chunks({1, 64, 32, 32}, 0b0010), 2);
}

// Output chunks start at the multiple of the alignment nearest to an even
// share: monotonic, aligned, each within an alignment of its share. Bounds
// rounded down gave 112 outputs by 32 as 32 / 80 and 56 as 0 / 56.
TEST(JitPlan, OutputChunksShareEvenly) {
    EXPECT_EQ(output_chunk_bound(112, 32, 2, 1), 64);
    EXPECT_EQ(output_chunk_bound(56, 32, 2, 1), 32);
    EXPECT_EQ(output_chunk_bound(112, 14, 2, 1), 56);
    for (int nch : {2, 3, 4, 7}) {
        for (int64_t align : {1, 7, 14, 32, 196}) {
            for (int64_t n = 0; n < 3000; n += n < 300 ? 1 : 37) {
                EXPECT_EQ(output_chunk_bound(n, align, nch, 0), 0);
                EXPECT_EQ(output_chunk_bound(n, align, nch, nch), n);
                for (int c = 1; c < nch; ++c) {
                    const int64_t b = output_chunk_bound(n, align, nch, c);
                    ASSERT_LE(output_chunk_bound(n, align, nch, c - 1), b);
                    if (b < n) {
                        ASSERT_EQ(b % align, 0) << n << " " << align;
                    }
                    ASSERT_LE(std::abs(b - n * c / nch), align / 2 + 1) << n << " " << align;
                }
            }
        }
    }
}

// A two-level plan combines its chunks' partials with a vertical tile
// kernel when dst is dense in the flat output order, else with the scalar
// loop (a padded dst here).
TEST(JitPlan, TwoLevelCombinesDenseDstWithAKernel) {
    if (max_isa() == isa_t::none) GTEST_SKIP() << "no JIT ISA";
    // 1 x 1 x 4096 x 1024 f32 reducing axis 2: 1024 outputs, 16 MiB.
    const dims_t d {1, 1, 4096, 1024};
    const plan dense = plan_on_two(make_problem(data_type::f32, d, 0b0100));
    ASSERT_TRUE(dense.two_level);
    ASSERT_TRUE(dense.combine_code);
    EXPECT_EQ(dense.combine_code->cfg.family, family_t::vert_tile);
    const plan padded =
            plan_on_two(make_problem(data_type::f32, d, 0b0100, {}, {2048, 2048, 0, 2}));
    ASSERT_TRUE(padded.two_level);
    EXPECT_FALSE(padded.combine_code);
}

TEST(JitIsa, CapByEnvironment) {
    set_max_isa_for_testing(nullptr);
    setenv("CREST_MAX_CPU_ISA", "none", 1);
    std::string why;
    EXPECT_FALSE(make_reduce_max(make_problem(data_type::f32, {8}, 1), pool2(), &why));
    EXPECT_FALSE(why.empty());
    EXPECT_STREQ(max_isa_name(), "none");
    if (cpu_isa() >= isa_t::avx2) {
        setenv("CREST_MAX_CPU_ISA", "avx2", 1);
        EXPECT_STREQ(max_isa_name(), "avx2");
    }
    unsetenv("CREST_MAX_CPU_ISA");
    EXPECT_STREQ(max_isa_name(), isa_name(cpu_isa()));
}

// crest reads three CPUID leaves itself (isa.cpp); Xbyak's full probe must
// name the same ISA.
TEST(JitIsa, DetectionMatchesXbyakProbe) {
    using C = Xbyak::util::Cpu;
    const C cpu;
    isa_t want = isa_t::none;
    if (cpu.has(C::tAVX512F) && cpu.has(C::tAVX512BW) && cpu.has(C::tAVX512VL)
            && cpu.has(C::tAVX512DQ) && cpu.has(C::tBMI2))
        want = isa_t::avx512_core;
    else if (cpu.has(C::tAVX2) && cpu.has(C::tF16C))
        want = isa_t::avx2;
    EXPECT_STREQ(isa_name(cpu_isa()), isa_name(want));
}

// The L3 the plans go by: sysfs, then AMD's topology leaf, then sysconf.
TEST(JitIsa, L3SizeFromTheMostSpecificSource) {
    const int64_t MiB = int64_t(1) << 20;
    EXPECT_EQ(pick_l3_bytes(32 * MiB, 16 * MiB, 508 * MiB), 32 * MiB);
    EXPECT_EQ(pick_l3_bytes(0, 16 * MiB, 508 * MiB), 16 * MiB);
    EXPECT_EQ(pick_l3_bytes(0, 0, 508 * MiB), 508 * MiB);
    EXPECT_EQ(pick_l3_bytes(0, 0, -1), 0);
    EXPECT_EQ(pick_l3_bytes(0, 0, 0), 0);
}

// CREST_L3_BYTES, read once per process, overrides what the machine
// reports (CTest runs this with it set: JitIsa.L3SizeSetByEnvironment).
TEST(JitIsa, L3SizeOverriddenByEnvironment) {
    const char *env = std::getenv("CREST_L3_BYTES");
    if (!env) GTEST_SKIP() << "CREST_L3_BYTES is not set";
    EXPECT_EQ(l3_cache_bytes(), std::atoll(env));
}

} // namespace
} // namespace crest::impl::jit::test
