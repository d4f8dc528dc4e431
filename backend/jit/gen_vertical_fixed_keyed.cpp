// `vert_reg` fixed blocks of 16-bit slices whose rows are 8-12 bytes (f32:
// 12-20), in calls of 2-3 batch indices, read through a keyed copy
// (gen_vertical_reg.hpp, fixed_keyed): NCHW reducing N and H of 4x4 to 6x6
// maps (f32: 3x3 to 5x5), where the two slices a ymm spend a load, an
// insert and the statistics on each index's row of a few elements. A
// group of dense slices is read in whole vectors, each index's as ordered
// keys (sign-magnitude words with the negatives' magnitude flipped: a
// signed max orders them), maxed over the indices and written to an L1
// buffer on the stack; then each slice is its first row's vector maxed
// with the others' as memory operands of the buffer (one instruction a
// row), turned back into words and stored to a stage, whose whole lines
// go to dst. A group is a line's lanes / gcd(J, lanes) slices: whole lines
// of src and of dst. Keys lose negative NaNs (positive ones stay the
// largest): unsigned-max chains of the raw words catch them and send the
// call to the one-slice blocks. f32 needs no keys: plain maxes, whose
// invalid flag a NaN raises (junk lanes read src or zeros), and the fixed
// blocks then have the general loop redo the call.
#include <cstddef>
#include <numeric>

#include "backend/jit/gen_vertical_reg.hpp"
#include "backend/jit/generators.hpp"

namespace crest::impl::jit {

using namespace Xbyak;

#define ARG(field) qword[reg_args + offsetof(vert_call, field)]

namespace {

// The keyed copy of a group stays in L1 with room for the stage.
constexpr int keyed_max_bytes = 16 * 1024;
// 16-bit rows of up to 12 bytes (4x4 to 6x6 maps): over 14-byte rows
// (7x7) the two slices a ymm read as fast, and the one-slice blocks read
// wider rows faster. f32 rows of 12-20 bytes (3x3 to 5x5 maps): rows of
// 8 (2x2) read alike or worse, and from 7x7 the one-slice blocks' memory
// operands read at the roofline. performance.md, session 37.
constexpr int keyed_max_row16 = 12;
constexpr int keyed_min_row_f32 = 12;
constexpr int keyed_max_row_f32 = 20;

struct keyed_shape {
    int R, J, esz, group, src_bytes, dst_bytes;
    keyed_shape(int rows, int cols, int esz_) : R(rows), J(cols), esz(esz_) {
        const int lanes = 64 / esz;
        group = lanes / std::gcd(J, lanes);
        src_bytes = group * R * J * esz;
        dst_bytes = group * J * esz;
    }
};

} // namespace

bool fixed_keyed_fits(const kernel_config &cfg) {
    const int R = cfg.block_rows, J = cfg.block_cols, esz = static_cast<int>(dt_size(cfg.src_dt));
    const keyed_shape sh(R, J, esz);
    const int row = J * esz;
    const bool rows_fit = esz == 2 ? row >= 8 && row <= keyed_max_row16
                                   : row >= keyed_min_row_f32 && row <= keyed_max_row_f32;
    return cfg.isa == isa_t::avx512_core && cfg.block_batch && cfg.src_dt == cfg.dst_dt
            && R >= 2 && rows_fit && sh.src_bytes <= keyed_max_bytes;
}

bool vertical_reg_generator::fixed_keyed_fit() const {
    return fixed_keyed_fits(cfg_);
}

void vertical_reg_generator::fixed_keyed() {
    const keyed_shape sh(cfg_.block_rows, cfg_.block_cols, ssz());
    const int nvec = sh.src_bytes / 64;
    // The stack: two key buffers (each with a vector's spare, read by the
    // last slice's rows past its columns), then the stage (and a vector's
    // spare, the last slice's junk lanes).
    const int keys_at[] = {0, sh.src_bytes + 64};
    const int stage_at = 2 * (sh.src_bytes + 64), frame = stage_at + sh.dst_bytes + 64;
    Label l_skip;

    // The calls it takes: fresh, 2 to fixed_copy_max_batch indices (one
    // index read faster in the other forms), dense slices and dst, more
    // slices than a group (a slice at least is left to the blocks that
    // follow).
    cmp(ARG(accumulate), 0);
    jne(l_skip, T_NEAR);
    cmp(ARG(batch), 2);
    jl(l_skip, T_NEAR);
    cmp(ARG(batch), fixed_copy_max_batch);
    jg(l_skip, T_NEAR);
    cmp(ARG(row_stride), sh.J * sh.esz);
    jne(l_skip, T_NEAR);
    cmp(ARG(outer_src_stride), sh.R * sh.J * sh.esz);
    jne(l_skip, T_NEAR);
    cmp(ARG(outer_dst_stride), sh.J * sh.esz);
    jne(l_skip, T_NEAR);
    cmp(reg_outer, sh.group);
    jle(l_skip, T_NEAR);

    // Registers: r8 and r9 the second and third batch indices' offsets,
    // rbx the keys being read and rbp the keys being written, r12 the
    // stack pointer on entry. zmm0-11 the loads and their temporaries,
    // 12-13 the chains, 14 the key mask, 16-23 the slices, 24 a temporary
    // (16-bit kernels keep zmm26 and zmm28).
    const Reg64 reg_saved_sp = r12, reg_read = rbx, reg_write = rbp;
    const Zmm chain0(12), chain1(13), key_mask(14);
    const int tmp = 24;
    dense_enter();
    const Reg64 saved[] = {reg_saved_sp, reg_read, reg_write};
    for (const Reg64 &r : saved) push(r);
    mov(reg_saved_sp, rsp);
    sub(rsp, frame);
    and_(rsp, -64);
    lea(reg_read, ptr[rsp + keys_at[0]]);
    lea(reg_write, ptr[rsp + keys_at[1]]);
    mov(r8, ARG(batch_stride));
    lea(r9, ptr[r8 + r8]);
    if (raw16()) {
        mov(eax, 0x7fff7fff);
        vpbroadcastd(key_mask, eax);
        vpxord(chain0, chain0, chain0);
        vpxord(chain1, chain1, chain1);
    } else {
        // f32 maxes raise the invalid flag on a NaN, junk lanes too: the
        // spare past each buffer, which the last slice's rows read, holds
        // zeros.
        vpxord(key_mask, key_mask, key_mask);
        vmovdqa64(ptr[rsp + keys_at[1] - 64], key_mask);
        vmovdqa64(ptr[rsp + stage_at - 64], key_mask);
    }
    // A register at the width of x.
    auto like = [](const Xmm &x, int idx) -> Xmm {
        if (x.isZMM()) return Zmm(idx);
        if (x.isYMM()) return Ymm(idx);
        return Xmm(idx);
    };
    // Sign-magnitude words to keys and back (the same map); t a temporary.
    auto to_key = [&](const Xmm &x, const Xmm &t) { to_key16(x, t, like(x, key_mask.getIdx())); };
    // Vector v of the group at reg_src, `batch` indices, into the keys at
    // reg_write.
    auto key_vector = [&](int v, int batch) {
        const int u = v % 4, disp = v * 64;
        // Index b's vector (b > 0: r8 or r9 past reg_src).
        auto at = [&](int b) {
            return b == 0 ? ptr[reg_src + disp] : ptr[reg_src + (b == 1 ? r8 : r9) + disp];
        };
        if (!raw16()) {
            // f32: plain maxes (a NaN raises the invalid flag).
            const Zmm x(u);
            vmovups(x, at(0));
            for (int b = 1; b < batch; ++b) vmaxps(x, x, at(b));
            vmovaps(ptr[reg_write + disp], x);
            return;
        }
        const Zmm x(u), t(4 + u);
        for (int b = 0; b < batch; ++b) {
            const Zmm y = b == 0 ? x : Zmm(8 + u);
            vmovdqu16(y, at(b));
            const Zmm &c = (v + b) % 2 ? chain1 : chain0;
            vpmaxuw(c, c, y);
            to_key(y, t);
            if (b > 0) vpmaxsw(x, x, y);
        }
        vmovdqa64(ptr[reg_write + disp], x);
    };
    // Slice s of the group at reg_read into the stage, as words.
    const int row = sh.J * sh.esz, slice_bytes = sh.R * row;
    // A row is at most 20 bytes (keyed_max_row_f32): an xmm or a ymm.
    const Xmm width = row <= 16 ? Xmm(0) : Ymm(0);
    auto slice = [&](int s) {
        const Xmm y = like(width, 16 + s % 8), t = like(width, tmp);
        const Address first = ptr[reg_read + s * slice_bytes];
        if (!raw16()) {
            vmovups(y, first);
            for (int r = 1; r < sh.R; ++r)
                vmaxps(y, y, ptr[reg_read + s * slice_bytes + r * row]);
            vmovups(ptr[rsp + stage_at + s * row], y);
            return;
        }
        vmovdqu16(y, first);
        for (int r = 1; r < sh.R; ++r) vpmaxsw(y, y, ptr[reg_read + s * slice_bytes + r * row]);
        to_key(y, t);
        vmovdqu16(ptr[rsp + stage_at + s * row], y);
    };
    // A group's slices from reg_read and, batch > 0, the next group's keys
    // from reg_src into reg_write, their instructions interleaved: as two
    // phases the slices' long runs of L1 work held up the next loads from
    // memory (bf16 NCHW 14x14 maps reducing H, one thread: 28-30% of the
    // roofline, the keys alone 60%).
    auto group = [&](int batch) {
        int v = 0;
        for (int s = 0; s < sh.group; ++s) {
            slice(s);
            for (const int end = batch ? (s + 1) * nvec / sh.group : 0; v < end; ++v)
                key_vector(v, batch);
        }
    };
    // The stage's lines to dst, non-temporal where stream_dst and dst is
    // on a line (then every group's is: a group's dst is whole lines);
    // dst moved past them.
    auto copy = [&] {
        Label l_copied;
        if (cfg_.stream_dst) {
            Label l_plain;
            test(reg_dst, 63);
            jnz(l_plain, T_NEAR);
            stage_to_dst(ptr[rsp + stage_at], ptr[reg_dst], sh.dst_bytes, stage_store::nt);
            jmp(l_copied, T_NEAR);
            L(l_plain);
        }
        stage_to_dst(ptr[rsp + stage_at], ptr[reg_dst], sh.dst_bytes, stage_store::plain);
        L(l_copied);
        add(reg_dst, sh.dst_bytes);
    };
    // The keys run a group ahead of the slices: the first group's alone,
    // then groups of slices with the next one's keys while more than a
    // group of slices is left after it, then the last group's slices.
    auto run = [&](int batch) {
        for (int v = 0; v < nvec; ++v) key_vector(v, batch);
        add(reg_src, sh.src_bytes);
        sub(reg_outer, sh.group);
        Label l_group, l_last;
        cmp(reg_outer, sh.group);
        jle(l_last, T_NEAR);
        L(l_group);
        xchg(reg_read, reg_write);
        group(batch);
        add(reg_src, sh.src_bytes);
        sub(reg_outer, sh.group);
        copy();
        cmp(reg_outer, sh.group);
        jg(l_group, T_NEAR);
        L(l_last);
        xchg(reg_read, reg_write);
    };
    Label l_runs_done;
    for (int batch = 2; batch <= fixed_copy_max_batch; ++batch) {
        Label l_next;
        cmp(ARG(batch), batch);
        jne(l_next, T_NEAR);
        run(batch);
        jmp(l_runs_done, T_NEAR);
        L(l_next);
    }
    L(l_runs_done);
    group(0);
    copy();
    if (cfg_.stream_dst) sfence();
    mov(rsp, reg_saved_sp);
    pop(reg_write);
    pop(reg_read);
    pop(reg_saved_sp);
    // f32 NaNs raised the invalid flag, which the fixed blocks test at
    // their end (redo_after_nan).
    dense_leave(chain0, chain1, raw16());
    L(l_skip);
}

#undef ARG

} // namespace crest::impl::jit
