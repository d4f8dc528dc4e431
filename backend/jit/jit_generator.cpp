#include "backend/jit/jit_generator.hpp"

#include "backend/fp_env.hpp"

namespace crest::impl::jit {

using namespace Xbyak;

namespace {
constexpr uint8_t cvt_round_mxcsr = 4;  // exact here: values came from f16
} // namespace

void jit_generator::bcast_neg_inf(const Xmm &v) {
    mov(eax, 0xff800000u);
    vmovd(Xmm(v.getIdx()), eax);
    vbroadcastss(v, Xmm(v.getIdx()));
}

void jit_generator::load(const Xmm &v, const Address &a, data_type dt) {
    switch (dt) {
        case data_type::f32: vmovups(v, a); break;
        case data_type::bf16:
            vpmovzxwd(v, a);
            vpslld(v, v, 16);
            break;
        default: vcvtph2ps(v, a); break;
    }
}

void jit_generator::load_tail(const Xmm &v, const Address &a, data_type dt) {
    const Xmm vz = v | k_tail_ | T_z;
    switch (dt) {
        case data_type::f32: vmovups(vz, a); break;
        case data_type::bf16:
            vpmovzxwd(vz, a);
            vpslld(v, v, 16);
            break;
        default: vcvtph2ps(vz, a); break;
    }
}

void jit_generator::load_bcast(const Xmm &v, const Address &a, data_type dt,
        const Xmm &tmp) {
    switch (dt) {
        case data_type::f32: vbroadcastss(v, a); break;
        case data_type::bf16:
            movzx(eax, Address(16, false, a.getRegExp()));
            shl(eax, 16);
            vmovd(tmp, eax);
            vbroadcastss(v, tmp);
            break;
        default:
            movzx(eax, Address(16, false, a.getRegExp()));
            vmovd(tmp, eax);
            vcvtph2ps(tmp, tmp);
            vbroadcastss(v, tmp);
            break;
    }
}

// v's bf16/f16 values (f32 lanes that came from dt: exact) narrowed into
// the low half of tmp, which it returns.
Xmm jit_generator::narrow16(const Xmm &v, data_type dt, const Xmm &tmp) {
    const Xmm half = is512() ? Xmm(Ymm(tmp.getIdx())) : Xmm(tmp.getIdx());
    if (dt != data_type::bf16) {
        vcvtps2ph(half, v, cvt_round_mxcsr);
        return half;
    }
    vpsrld(tmp, v, 16);  // the low halves are zero (values came from bf16)
    if (is512()) {
        vpmovdw(half, tmp);
    } else {
        const Ymm t(tmp.getIdx());
        vpackusdw(t, t, t);  // per 128-bit lane: a0..3 a0..3 | a4..7 a4..7
        vpermq(t, t, 0x08);  // qwords 0 and 2 to the low half
    }
    return half;
}

void jit_generator::store(const Address &a, const Xmm &v, data_type dt,
        const Xmm &tmp) {
    switch (dt) {
        case data_type::f32: vmovups(a, v); break;
        case data_type::bf16:
            // AVX-512 narrows straight into memory (exact, as narrow16).
            if (is512()) {
                vpsrld(tmp, v, 16);
                vpmovdw(a, tmp);
            } else {
                vmovdqu(a, narrow16(v, dt, tmp));
            }
            break;
        default: vcvtps2ph(a, v, cvt_round_mxcsr); break;
    }
}

void jit_generator::store_stream(const Address &a, const Xmm &v, data_type dt,
        const Xmm &tmp) {
    if (dt == data_type::f32) vmovntps(a, v);
    else vmovntdq(a, narrow16(v, dt, tmp));
}

void jit_generator::store_tail(const Address &a, const Xmm &v, data_type dt,
        const Xmm &tmp) {
    switch (dt) {
        case data_type::f32: vmovups(a | k_tail_, v); break;
        case data_type::bf16:
            vpsrld(tmp, v, 16);
            vpmovdw(a | k_tail_, tmp);
            break;
        default: vcvtps2ph(a | k_tail_, v, cvt_round_mxcsr); break;
    }
}

void jit_generator::store_scalar(const Address &a, const Xmm &v,
        data_type dt, const Xmm &tmp) {
    const Xmm x(v.getIdx());
    switch (dt) {
        case data_type::f32: vmovss(Address(32, false, a.getRegExp()), x); break;
        case data_type::bf16:
            vmovd(eax, x);
            shr(eax, 16);
            mov(Address(16, false, a.getRegExp()), ax);
            break;
        default:
            vcvtps2ph(tmp, x, cvt_round_mxcsr);
            vmovd(eax, tmp);
            mov(Address(16, false, a.getRegExp()), ax);
            break;
    }
}

void jit_generator::nanmax(const Xmm &a, const Xmm &b, const Xmm &tmp) {
    if (is512()) {
        // Only lanes where a is not NaN may change; there vmaxps returns
        // its second operand b when b is NaN, so a NaN on either side stays.
        vcmpps(k_ord_, a, a, cmp_ord_q);
        vmaxps(a | k_ord_, a, b);
    } else {
        // vmaxps(b, a) returns a when either is NaN; then lanes where b is
        // NaN take b. The compare is off the accumulator's dependency chain.
        vcmpps(tmp, b, b, cmp_unord_q);
        vmaxps(a, b, a);
        vblendvps(a, a, b, tmp);
    }
}

namespace {
// The exception masks and sticky flags are backend/fp_env.hpp's.
constexpr uint8_t mxcsr_invalid = 0x01;       // IE
constexpr uint32_t mxcsr_daz = 0x40;          // denormal operands read as zero
} // namespace

void jit_generator::fp_env_enter() {
    sub(rsp, 8);
    stmxcsr(dword[rsp]);
    mov(eax, dword[rsp]);
    or_(eax, mxcsr_exception_masks);
    and_(eax, ~mxcsr_exception_flags);
    // f16 elements widened are never float denormals, so DAZ cannot touch
    // them; but the f16 blocks compare raw bits as floats, where tiny
    // values are denormals (gen_inner_blocks.cpp): there it must be off.
    if (cfg_.src_dt == data_type::f16) and_(eax, ~mxcsr_daz);
    mov(dword[rsp + 4], eax);
    ldmxcsr(dword[rsp + 4]);
}

void jit_generator::fp_env_leave() {
    ldmxcsr(dword[rsp]);
    add(rsp, 8);
}

void jit_generator::test_invalid_flag() {
    stmxcsr(dword[rsp - 8]);
    test(byte[rsp - 8], mxcsr_invalid);
}

void jit_generator::clear_fp_flags() {
    stmxcsr(dword[rsp - 8]);
    and_(dword[rsp - 8], ~mxcsr_exception_flags);
    ldmxcsr(dword[rsp - 8]);
}

void jit_generator::test_nan(const Xmm &v, const Xmm &tmp) {
    if (is512()) {
        vcmpps(k_ord_, v, v, cmp_unord_q);
        kortestw(k_ord_, k_ord_);
    } else {
        vcmpps(tmp, v, v, cmp_unord_q);
        vtestps(tmp, tmp);  // ZF clear when a lane's sign (all ones) is set
    }
}

void jit_generator::nanmax_tail(const Xmm &a, const Xmm &b) {
    vcmpps(k_ord_ | k_tail_, a, a, cmp_ord_q);
    vmaxps(a | k_ord_, a, b);
}

void jit_generator::set_tail_mask(const Opmask &k, const Reg64 &count, int lanes) {
    mov(eax, -1);
    bzhi(eax, eax, count.cvt32());
    if (lanes == 32) kmovd(k, eax);
    else kmovw(k, eax);
}

uint16_t jit_generator::nan_above() const {
    return cfg_.src_dt == data_type::bf16 ? 0x7f80 : 0x7c00;
}

uint16_t jit_generator::quiet_nan() const {
    return cfg_.src_dt == data_type::bf16 ? 0x7fc0 : 0x7e00;
}

uint16_t jit_generator::neg_inf16() const {
    return cfg_.src_dt == data_type::bf16 ? 0xff80 : 0xfc00;
}

void jit_generator::store_bytes(const RegExp &at, const Xmm &v, int bytes, const Xmm &t) {
    const Xmm h(v.getIdx());
    if (bytes > 16) {
        vmovdqu(ptr[at], h);
        vextracti128(Xmm(t.getIdx()), Ymm(v.getIdx()), 1);
        return store_bytes(at + 16, t, bytes - 16, t);
    }
    if (bytes == 16) return vmovdqu(ptr[at], h);
    int done = 0;
    if (bytes >= 8) {
        vmovq(ptr[at], h);
        done = 8;
    }
    if (bytes - done >= 4) {
        vpextrd(ptr[at + done], h, static_cast<uint8_t>(done / 4));
        done += 4;
    }
    if (bytes - done >= 2) vpextrw(ptr[at + done], h, static_cast<uint8_t>(done / 2));
}

void jit_generator::load_bytes(const Xmm &v, const RegExp &at, int bytes, const Xmm &t) {
    const Xmm h(v.getIdx());
    if (bytes > 16) {
        vmovdqu(h, ptr[at]);
        load_bytes(t, at + 16, bytes - 16, t);
        vinserti128(Ymm(v.getIdx()), Ymm(v.getIdx()), t, 1);
        return;
    }
    if (bytes == 16) return vmovdqu(h, ptr[at]);
    int done = 0;
    if (bytes >= 8) {
        vmovq(h, ptr[at]);
        done = 8;
    } else if (bytes >= 4) {
        vmovd(h, ptr[at]);
        done = 4;
    } else {
        vpxor(h, h, h);
    }
    if (bytes - done >= 4) {
        vpinsrd(h, h, ptr[at + done], static_cast<uint8_t>(done / 4));
        done += 4;
    }
    if (bytes - done >= 2) vpinsrw(h, h, ptr[at + done], static_cast<uint8_t>(done / 2));
}

void jit_generator::bcast16(const Xmm &v, uint16_t bits, const Xbyak::Reg32 &tmp) {
    mov(tmp, bits * 0x10001u);
    if (is512()) {
        vpbroadcastd(v, tmp);
    } else {
        vmovd(Xmm(v.getIdx()), tmp);
        vpbroadcastd(v, Xmm(v.getIdx()));
    }
}

void jit_generator::select16(const Xmm &smax, const Xmm &umin, const Xmm &umax,
        const Xmm &t) {
    // The constants at smax's width (the fixed blocks' xmm and ymm).
    auto sized = [&](const Xmm &c) -> Xmm {
        if (smax.isZMM()) return Zmm(c.getIdx());
        if (smax.isYMM()) return Ymm(c.getIdx());
        return Xmm(c.getIdx());
    };
    const Xmm ninf = sized(c_neg_inf()), qnan = sized(c_qnan());
    if (is512()) {
        vpmovw2m(k_ord_, smax);  // the lanes that saw only negatives
        vmovdqu16(smax | k_ord_, umin);
        vpcmpuw(k_ord_, ninf, umax, 1);  // the negative NaNs (negative_nan_lanes)
        vmovdqu16(smax | k_ord_, qnan);
        return;
    }
    vpsraw(t, smax, 15);  // the lanes that saw only negatives
    vpblendvb(smax, smax, umin, t);
    vpmaxuw(t, umax, ninf);
    vpcmpeqw(t, t, ninf);  // not above -inf: no negative NaN
    vpblendvb(smax, qnan, smax, t);
}

void jit_generator::to_key16(const Xmm &x, const Xmm &t, const Xmm &abs_mask) {
    vpsraw(t, x, 15);
    if (is512()) {
        vpternlogd(x, t, abs_mask, 0x78);  // x ^ (t & abs_mask)
    } else {
        vpand(t, t, abs_mask);
        vpxor(x, x, t);
    }
}

} // namespace crest::impl::jit
