// `vert_reg` fixed blocks (gen_vertical_fixed.cpp) taking more than a
// slice at a time: two slices a ymm where rows are 8-16 bytes
// (fixed_packed), and a stage of slices on the stack whose whole lines
// go to dst by non-temporal stores (fixed_staged).
#include <cstddef>

#include "backend/jit/gen_vertical_reg.hpp"
#include "backend/jit/generators.hpp"

namespace crest::impl::jit {

using namespace Xbyak;

#define ARG(field) qword[reg_args + offsetof(vert_call, field)]

void vertical_reg_generator::fixed_packed() {
    // Two slices a ymm, not four a zmm: Zen 4 runs a zmm max as two ymm
    // halves, and an insert of a lane from memory costs a shuffle more.
    // Zen 4, ab_builds, bf16 4x2048x7x7 from L2, % of the roofline: one
    // slice an xmm 44-45, four a zmm 43-45, two a ymm 56-60; 64x2048x7x7
    // (12.8 MB) 50 -> 63-103.
    const int last = cfg_.block_rows - 1;
    const int rs = cfg_.block_row_stride, oss = cfg_.block_slice_stride;
    const int bytes = cfg_.block_cols * ssz();  // 8-16 (plan_kernels.cpp)
    Label l_loop, l_end;
    cmp(ARG(row_stride), rs);
    jne(l_end, T_NEAR);
    cmp(ARG(outer_src_stride), oss);
    jne(l_end, T_NEAR);
    mov(r8, ARG(outer_dst_stride));
    // Row r of both slices, the second in the high lane. A row before the
    // last reads 16 bytes, into the next row (bytes >= 8: never past the
    // slice); the last row the 16 that end at its end, shifted down (the
    // bytes before are the row before's), zeros above the columns.
    auto gather = [&](const Ymm &v, int r) {
        const int back = r == last ? 16 - bytes : 0;
        vmovdqu(Xmm(v.getIdx()), ptr[reg_src + r * rs - back]);
        vinserti128(v, v, ptr[reg_src + oss + r * rs - back], 1);
        if (back) vpsrldq(v, v, static_cast<uint8_t>(back));
    };
    const Ymm a(0), b(1), c(2), x(3), t(4);
    L(l_loop);
    cmp(reg_outer, 2);
    jl(l_end, T_NEAR);
    // 16-byte rows a line apart or closer: a prefetch a line covers them.
    // From half the L3 on (plan_kernels.cpp): bf16 128x2048x7x7 from
    // memory 40-44 -> 49-53% (a tie from the L3 or at 2 KiB).
    if (cfg_.prefetch)
        for (int p = 0; p < 2 * oss; p += 64) prefetcht0(ptr[reg_src + 4096 + p]);
    // AVX-512 (fixed_accumulates): both slices' dst as one more row, the
    // columns only (zeros above them).
    // (k_tail_ counts the columns: words, or f32 dwords.)
    auto gather_dst = [&] {
        const Xmm lo(x.getIdx()), hi(t.getIdx());
        if (raw16()) {
            vmovdqu16(lo | k_tail_ | T_z, ptr[reg_dst]);
            vmovdqu16(hi | k_tail_ | T_z, ptr[reg_dst + r8]);
        } else {
            vmovups(lo | k_tail_ | T_z, ptr[reg_dst]);
            vmovups(hi | k_tail_ | T_z, ptr[reg_dst + r8]);
        }
        vinserti128(x, x, hi, 1);
    };
    if (raw16()) {
        // a: signed max, b: unsigned max, c: unsigned min (select16),
        // from the first two rows without copies.
        const Ymm y(5);
        auto take = [&](const Ymm &v) {
            vpmaxsw(a, a, v);
            vpmaxuw(b, b, v);
            vpminuw(c, c, v);
        };
        over_batch([&](bool first) {
            if (first) {
                gather(y, 0);
                gather(x, 1);
                vpmaxsw(a, y, x);
                vpmaxuw(b, y, x);
                vpminuw(c, y, x);
            }
            for (int r = first ? 2 : 0; r <= last; ++r) {
                gather(x, r);
                take(x);
            }
        });
        fixed_when_accumulating([&] {
            gather_dst();
            take(x);
        });
        select16(a, c, b, t);
    } else {
        // Rows alternate between a and b; a NaN raises the invalid flag
        // (fixed_entry then redoes the call), zeros above the columns none.
        over_batch([&](bool first) {
            if (first) {
                gather(a, 0);
                gather(b, 1);
            }
            for (int r = first ? 2 : 0; r <= last; ++r) {
                gather(x, r);
                vmaxps(r % 2 ? b : a, r % 2 ? b : a, x);
            }
        });
        vmaxps(a, a, b);
        fixed_when_accumulating([&] {
            gather_dst();
            vmaxps(a, a, x);
        });
    }
    const Xmm lo(a.getIdx()), hi(t.getIdx());
    vextracti128(hi, a, 1);
    if (!is512()) {
        store_bytes(reg_dst, lo, bytes, t);
        store_bytes(reg_dst + r8, hi, bytes, t);
    } else if (raw16()) {
        vmovdqu16(ptr[reg_dst] | k_tail_, lo);
        vmovdqu16(ptr[reg_dst + r8] | k_tail_, hi);
    } else {
        vmovups(ptr[reg_dst] | k_tail_, lo);
        vmovups(ptr[reg_dst + r8] | k_tail_, hi);
    }
    add(reg_src, 2 * oss);
    lea(reg_dst, ptr[reg_dst + r8 * 2]);
    sub(reg_outer, 2);
    jmp(l_loop, T_NEAR);
    L(l_end);
}

void vertical_reg_generator::stage_to_dst(
        const Address &from, const Address &to, int bytes, stage_store how) {
    const int vbytes = vlen() * 4;
    for (int off = 0; off < bytes; off += vbytes) {
        const Xmm line = vmm(off / vbytes % 4);
        const Address at = ptr[to.getRegExp() + off];
        load_raw(line, ptr[from.getRegExp() + off]);
        if (how == stage_store::join) vmaxps(line, line, at);  // dst's NaN last: kept
        if (how == stage_store::nt) vmovntdq(at, line);
        else if (is512()) vmovdqu64(at, line);
        else vmovdqu(at, line);
    }
}

int vertical_reg_generator::fixed_stage_bytes() const {
    return static_cast<int>(staged_dst_bytes(cfg_.block_cols * dsz()));
}

bool vertical_reg_generator::fixed_streams() const {
    return cfg_.stream_dst && fixed_stage_bytes() <= 1024;
}

bool vertical_reg_generator::fixed_joins_staged() const {
    return fixed_accumulates() && !raw16() && fixed_stage_bytes() <= 1024;
}

void vertical_reg_generator::fixed_staged(const std::function<void()> &slices, bool join) {
    // A dense dst, aligned: slices go g at a time into a stage on the
    // stack (L1), whole lines, then to dst by non-temporal stores. A
    // slice writes a few bytes of a line, which the masked stores made
    // the core read from memory first, for a dst a seventh of src's size
    // (NCHW reducing H of 7x7 maps): Zen 4, f32 64x2048x7x7 (25.7 MB),
    // ab_runs.sh, a build writing no dst at all read 76-82% of the
    // roofline against 51-54%. A join's stage is maxed into dst's lines
    // (in the caches: the calls before wrote them).
    const int b = cfg_.block_cols * dsz(), stage = fixed_stage_bytes(), g = stage / b;
    const Reg64 reg_stage = r12, reg_to = r13, reg_left = r14;
    Label l_none, l_chunk;
    cmp(ARG(outer_dst_stride), b);
    jne(l_none, T_NEAR);
    test(reg_dst, 63);
    jnz(l_none, T_NEAR);
    cmp(reg_outer, g);
    jl(l_none, T_NEAR);
    push(reg_stage);
    push(reg_to);
    push(reg_left);
    sub(rsp, stage + 64);
    lea(reg_stage, ptr[rsp + 63]);
    and_(reg_stage, -64);
    mov(reg_to, reg_dst);
    mov(reg_left, reg_outer);
    L(l_chunk);
    {
        mov(reg_outer, g);
        mov(reg_dst, reg_stage);
        slices();
        stage_to_dst(ptr[reg_stage], ptr[reg_to], stage, join ? stage_store::join : stage_store::nt);
        add(reg_to, stage);
        sub(reg_left, g);
        cmp(reg_left, g);
        jge(l_chunk, T_NEAR);
    }
    mov(reg_dst, reg_to);
    mov(reg_outer, reg_left);
    add(rsp, stage + 64);
    pop(reg_left);
    pop(reg_to);
    pop(reg_stage);
    if (!join) sfence();  // the streamed lines before any later store or the join
    L(l_none);
}

#undef ARG

} // namespace crest::impl::jit
