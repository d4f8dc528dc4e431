// `vert_reg` fixed blocks of 16-bit slices of at most 64 bytes whose
// rows are under 8 bytes, dense slices read as one run (gen_vertical_reg.hpp,
// fixed_runs): NCHW reducing H (with N or not) of 3x3 maps, where the one-slice blocks
// spend masked loads and three statistics on each 6-byte row. Dense
// slices of R rows of J columns are a stream in which output (s, j) is
// the max of elements s*R*J + j + r*J, r < R. So each vector of the
// stream, as ordered keys (sign-magnitude words with the negatives'
// magnitude flipped: a signed max orders them), is maxed with itself
// shifted by J, 2J, ... elements (permutes of it and the next vector),
// which leaves every output at its slice's first row's lanes, and fixed
// permutes per output vector gather them. A period of lcm(R*J, 32)
// words is 32 / gcd(R*J, 32) slices, J / gcd vectors of outputs. Keys
// lose negative NaNs (positive ones stay the largest): the unsigned-max
// chains of the raw words catch them.
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "backend/jit/gen_vertical_reg.hpp"
#include "backend/jit/generators.hpp"

namespace crest::impl::jit {

using namespace Xbyak;

#define ARG(field) qword[reg_args + offsetof(vert_call, field)]

namespace {

// The shape of a period (lanes: 32 words).
struct stream_shape {
    int R, J, S, lanes, g, in_vecs, slices, out_vecs;
    stream_shape(int rows, int cols, int lanes_)
        : R(rows), J(cols), S(rows * cols), lanes(lanes_) {
        g = std::gcd(S, lanes);
        in_vecs = S / g;
        slices = lanes / g;
        out_vecs = J * slices / lanes;
    }
    // Where output t of output vector q lies in the period: vector, lane.
    int element(int q, int t) const {
        const int o = q * lanes + t;
        return (o / J) * S + o % J;
    }
};

} // namespace

bool fixed_runs_fits(const kernel_config &cfg) {
    // 16-bit rows of under 8 bytes (the two slices a ymm take 8-16), up
    // to 5 of them: an output vector's sources (R + 2 vectors at most)
    // stay in the ring of 8, the shifts in 4 registers. A period holds
    // whole output vectors where gcd(R*J, lanes) divides J. Zen 4,
    // bg_runs.sh, % of the roofline, NCHW reducing H at 26 MB, one slice
    // a call -> the stream: bf16 2x728177x3x3 44-49 -> 66-67, f16 32-43
    // -> 62-63; where the other forms take them the stream lost: f32 3x3
    // (two slices a ymm) 78-89 -> 67-81, f16 5x5 62-72 -> 45-48, f32 5x5
    // 98-105 -> 90-101.
    const int R = cfg.block_rows, J = cfg.block_cols, S = R * J;
    const int esz = static_cast<int>(dt_size(cfg.src_dt)), lanes = 64 / esz;
    return cfg.isa == isa_t::avx512_core && esz == 2 && J * esz < 8 && R >= 2 && R <= 5
            && S * esz <= 64 && J % std::gcd(S, lanes) == 0 && S % lanes != 0
            && cfg.src_dt == cfg.dst_dt;
}

bool vertical_reg_generator::fixed_runs_fit() const {
    return fixed_runs_fits(cfg_);
}

void vertical_reg_generator::fixed_runs() {
    const int esz = ssz();
    const stream_shape sh(cfg_.block_rows, cfg_.block_cols, 64 / esz);
    const int period_bytes = sh.in_vecs * 64, out_bytes = sh.out_vecs * 64;
    // Slices a period, and those past it that its last loads may touch
    // (a whole vector past the period).
    const int spare = (64 + sh.S * esz - 1) / (sh.S * esz);
    // Tables: the shifts (16-bit), then per output vector its pairs'.
    struct pair_table {
        int first_vec;
        std::vector<uint32_t> idx;  // a word index a lane
        uint32_t mask;              // the lanes this pair gives
    };
    std::vector<std::vector<pair_table>> outs(static_cast<size_t>(sh.out_vecs));
    std::vector<int> last_vec(static_cast<size_t>(sh.out_vecs));
    for (int q = 0; q < sh.out_vecs; ++q) {
        const int a = sh.element(q, 0) / sh.lanes;
        const int b = sh.element(q, sh.lanes - 1) / sh.lanes;
        last_vec[size_t(q)] = b;
        for (int p = a; p <= b; p += 2) {
            pair_table t {p, std::vector<uint32_t>(size_t(sh.lanes), 0), 0};
            for (int l = 0; l < sh.lanes; ++l) {
                const int e = sh.element(q, l), v = e / sh.lanes;
                if (v != p && v != p + 1) continue;
                t.idx[size_t(l)] = uint32_t((v - p) * sh.lanes + e % sh.lanes);
                t.mask |= 1u << l;
            }
            outs[size_t(q)].push_back(t);
        }
    }
    Label l_tables, l_code, l_skip;
    jmp(l_code, T_NEAR);
    align(64);
    L(l_tables);
    int ntab = 0;
    auto emit_table = [&](const std::vector<uint32_t> &idx) {
        for (uint32_t i : idx) dw(uint16_t(i));
        return ntab++;
    };
    std::vector<int> shift_tab;
    for (int r = 1; r < sh.R; ++r) {
        std::vector<uint32_t> idx(size_t(sh.lanes));
        for (int l = 0; l < sh.lanes; ++l) idx[size_t(l)] = uint32_t(l + r * sh.J);
        shift_tab.push_back(emit_table(idx));
    }
    std::vector<std::vector<int>> out_tab(outs.size());
    for (size_t q = 0; q < outs.size(); ++q)
        for (const pair_table &t : outs[q]) out_tab[q].push_back(emit_table(t.idx));
    L(l_code);
    auto table = [&](int i) { return ptr[rip + l_tables + i * 64]; };

    // The calls it takes: fresh, one batch index, dense slices, enough of
    // them for a period and its spare.
    cmp(ARG(accumulate), 0);
    jne(l_skip, T_NEAR);
    if (batched()) {
        cmp(ARG(batch), fixed_copy_max_batch);
        jg(l_skip, T_NEAR);
    }
    cmp(ARG(row_stride), sh.J * esz);
    jne(l_skip, T_NEAR);
    cmp(ARG(outer_src_stride), sh.S * esz);
    jne(l_skip, T_NEAR);
    cmp(ARG(outer_dst_stride), sh.J * esz);
    jne(l_skip, T_NEAR);
    cmp(reg_outer, sh.slices + spare);
    jl(l_skip, T_NEAR);

    // Registers (16-bit kernels keep zmm26 and zmm28, c_neg_inf and
    // c_qnan; k6 and k7 are k_ord_ and k_tail_): a ring of 8 maxed
    // vectors, the keys of this and the next vector, temporaries, the
    // shift tables, the chains.
    auto ring = [&](int v) { return Zmm(v % 8); };
    const Zmm k_cur(8), k_next(9), t(10), o(11), sign(12), key_mask(13), chain0(14), chain1(15);
    auto shift_reg = [&](int r) { return Zmm(16 + r - 1); };  // 16..19: R <= 5
    const Opmask k_pair(1);
    dense_enter();
    mov(eax, 0x7fff7fff);
    vpbroadcastd(key_mask, eax);
    for (int r = 1; r < sh.R; ++r) vmovdqu16(shift_reg(r), table(shift_tab[size_t(r - 1)]));
    vpxord(chain0, chain0, chain0);
    vpxord(chain1, chain1, chain1);
    // Sign-magnitude words to keys that order as signed words (negatives'
    // magnitude bits flipped) and back: the same map.
    auto to_key = [&](const Zmm &x) { to_key16(x, sign, key_mask); };
    int chain = 0;
    // The vector at disp as keys, maxed over the call's `batch` indices
    // (batch_stride apart: r8, r9 = 2 * r8): a shift of the max is the
    // max of the shifts.
    auto load_key = [&](const Zmm &x, int disp, int batch) {
        for (int b = 0; b < batch; ++b) {
            const Zmm y = b == 0 ? x : sign;  // to_key's temporary is free here
            if (b == 0) vmovdqu16(y, ptr[reg_src + disp]);
            else vmovdqu16(y, ptr[reg_src + (b == 1 ? r8 : r9) + disp]);
            const Zmm &c = chain++ % 2 ? chain1 : chain0;
            vpmaxuw(c, c, y);
            if (b == 0) {
                to_key(x);
            } else {
                vpsraw(t, y, 15);
                vpternlogd(y, t, key_mask, 0x78);
                vpmaxsw(x, x, y);
            }
        }
    };
    // A period's slices of `batch` indices; nt: dst by non-temporal
    // stores (stream_dst, dst on a line: then every period's is, a whole
    // number of lines).
    auto period = [&](int batch, bool nt, Label &again) {
        L(again);
        load_key(k_next, 0, batch);
        size_t q = 0;
        for (int v = 0; v < sh.in_vecs; ++v) {
            const Zmm m = ring(v);
            vmovdqa64(k_cur, k_next);
            load_key(k_next, (v + 1) * 64, batch);
            vmovdqa64(m, k_cur);
            for (int r = 1; r < sh.R; ++r) {
                vmovdqa64(t, shift_reg(r));
                vpermi2w(t, k_cur, k_next);
                vpmaxsw(m, m, t);
            }
            // The output vectors whose last source this was.
            for (; q < outs.size() && last_vec[q] == v; ++q) {
                const auto &pairs = outs[q];
                for (size_t p = 0; p < pairs.size(); ++p) {
                    const Zmm to = p == 0 ? o : t;
                    vmovdqu16(to, table(out_tab[q][p]));
                    vpermi2w(to, ring(pairs[p].first_vec), ring(pairs[p].first_vec + 1));
                    if (p == 0) continue;
                    mov(eax, pairs[p].mask);
                    kmovd(k_pair, eax);
                    vmovdqu16(o | k_pair, t);
                }
                to_key(o);
                if (nt) vmovntdq(ptr[reg_dst + int(q) * 64], o);
                else vmovdqu16(ptr[reg_dst + int(q) * 64], o);
            }
        }
        add(reg_src, period_bytes);
        add(reg_dst, out_bytes);
        sub(reg_outer, sh.slices);
        cmp(reg_outer, sh.slices + spare);
        jge(again, T_NEAR);
    };
    // A form for each count of batch indices, plain and streaming.
    Label l_periods_done;
    if (batched()) {
        mov(r8, ARG(batch_stride));
        lea(r9, ptr[r8 + r8]);
    }
    for (int batch = 1; batch <= (batched() ? fixed_copy_max_batch : 1); ++batch) {
        Label l_next, l_plain, l_nt;
        if (batched()) {
            mov(rax, ARG(batch));
            cmp(rax, batch);
            if (batch == 1) jg(l_next, T_NEAR);  // 0 and 1: one index
            else jne(l_next, T_NEAR);
        }
        if (cfg_.stream_dst) {
            test(reg_dst, 63);
            jnz(l_plain, T_NEAR);
            period(batch, true, l_nt);
            sfence();
            jmp(l_periods_done, T_NEAR);
        }
        period(batch, false, l_plain);
        jmp(l_periods_done, T_NEAR);
        L(l_next);
    }
    L(l_periods_done);
    dense_leave(chain0, chain1, true);
    L(l_skip);
}

#undef ARG

} // namespace crest::impl::jit
