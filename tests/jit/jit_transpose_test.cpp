// The transposed outputs' stores (transpose.hpp), called directly: every
// value lands at its place in dst and nothing else is written, by register
// blocks and the values past them, streamed (non-temporal where a block is
// aligned, prefetching where not) or plain, on each vector width the
// machine runs.
#include <immintrin.h>

#include <cstring>
#include <random>

#include "backend/jit/transpose.hpp"
#include "jit_direct_util.hpp"

namespace crest::impl::jit::test {
namespace {

class JitTranspose : public ::testing::TestWithParam<const char *> {
protected:
    int lanes() const { return isa_named(GetParam()) == isa_t::avx512_core ? 16 : 8; }

    // m positions x cn channels of esz bytes from a [m][cn] buffer to dst
    // channel rows c_stride bytes apart, dst at `offset` past a 64-byte
    // boundary; next_m positions of a next chunk (prefetched when not
    // streaming an aligned block).
    void run(size_t esz, int64_t m, int64_t cn, int64_t c_stride, int offset, bool stream,
            int64_t next_m) {
        SCOPED_TRACE("esz=" + std::to_string(esz) + " m=" + std::to_string(m) + " cn="
                + std::to_string(cn) + " c_stride=" + std::to_string(c_stride) + " offset="
                + std::to_string(offset) + " stream=" + std::to_string(stream));
        std::mt19937 rng(uint32_t(m * 131 + cn * 7 + offset));
        std::vector<uint8_t> buf(size_t(m * cn) * esz + 64);
        uint8_t *const b = past_line(buf.data(), 0);
        for (int64_t i = 0; i < m * cn * int64_t(esz); ++i) b[i] = uint8_t(rng());
        const int64_t dst_bytes = (cn - 1) * c_stride + (m + next_m) * int64_t(esz);
        guarded dst_buf(size_t(dst_bytes + 128), 0xa5);
        uint8_t *const d = past_line(dst_buf.data(), offset);
        if (esz == 4)
            transpose_store_f32(reinterpret_cast<const float *>(b), m, cn,
                    reinterpret_cast<char *>(d), c_stride, lanes(), next_m, stream);
        else
            transpose_store_16(reinterpret_cast<const uint16_t *>(b), m, cn,
                    reinterpret_cast<char *>(d), c_stride, lanes(), next_m, stream);
        _mm_sfence();
        int64_t wrong = 0, touched = 0;
        for (int64_t c = 0; c < cn; ++c) {
            for (int64_t p = 0; p < m; ++p)
                wrong += std::memcmp(d + c * c_stride + p * int64_t(esz),
                                 b + (p * cn + c) * int64_t(esz), esz)
                         != 0;
            // Past the chunk's positions in each channel row: untouched.
            const int64_t end = c + 1 < cn ? c_stride : (m + next_m) * int64_t(esz);
            for (int64_t k = m * int64_t(esz); k < end; ++k) touched += d[c * c_stride + k] != 0xa5;
        }
        EXPECT_EQ(wrong, 0);
        EXPECT_EQ(touched, 0);
        EXPECT_TRUE(dst_buf.guards_ok());
    }
};

TEST_P(JitTranspose, EveryValueInPlaceStreamedOrNot) {
    for (size_t esz : {size_t(4), size_t(2)}) {
        const int64_t pw = esz == 4 ? lanes() : 2 * lanes();  // positions a block
        for (int64_t m : {pw, 2 * pw, 3 * pw + 5}) {
            for (int64_t cn :
                    {int64_t(lanes()), int64_t(2 * lanes()), int64_t(lanes() + 3), int64_t(3)}) {
                // Channel rows a multiple of 64 bytes apart, or not.
                for (int64_t c_stride :
                        {(m + 40) * int64_t(esz) / 64 * 64 + 64, (m + 5) * int64_t(esz)}) {
                    for (int offset : {0, 4}) {
                        for (bool stream : {false, true}) {
                            run(esz, m, cn, c_stride, offset, stream, 0);
                            run(esz, m, cn, c_stride, offset, stream, m);
                        }
                    }
                }
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(All, JitTranspose, ::testing::ValuesIn(runnable_isas()),
        [](const ::testing::TestParamInfo<const char *> &i) { return std::string(i.param); });

} // namespace
} // namespace crest::impl::jit::test
