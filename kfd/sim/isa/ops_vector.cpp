// Vector ALU (VOP1/VOP2/VOP3/VOP3P/VOPC/VOPD halves) for wave32, per active lane.
// Semantics: AMD "RDNA3 Instruction Set Architecture Reference Guide" (2023) and "AMD RDNA4
// Instruction Set Architecture Reference Guide" (2025), chapter "Vector ALU Operations" and the
// per-opcode pseudo-code. Float ops round to nearest even (the mode clang's descriptors select);
// v_rcp/v_rsq are computed exactly rounded, inside the 1 ULP the guides document.
// 16-bit results are written to the low half, keeping the high half.
#include <atomic>
#include <algorithm>
#include <cmath>
#include <limits>

#include "kfd/sim/isa/wave.h"

namespace zinc::kfd::isa {

uint16_t f32ToF16(float f) {
    const uint32_t x = asU(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0u));
    if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to infinity
    if (absx < 0x38800000u) {                                  // half subnormal or zero
        const float scaled = asF(absx) * 16777216.0f;          // 2^24: one half-subnormal step becomes 1
        return uint16_t(sign | uint32_t(std::nearbyint(scaled)));
    }
    uint32_t mant = absx & 0x7fffffu;
    uint32_t exp = (absx >> 23) - 112;
    uint32_t h = (exp << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return uint16_t(sign | h);
}

uint16_t f64ToF16(double d) {
    const uint16_t sign = std::signbit(d) ? 0x8000u : 0u;
    if (std::isnan(d)) return uint16_t(sign | 0x7e00u);
    const double a = std::fabs(d);
    if (a >= 65520.0) return uint16_t(sign | 0x7c00u);  // rounds to infinity (65504 + half a step)
    // The step of f16 at this magnitude (2^-24 below 2^-14: subnormals), then round to even.
    const int e = std::max(std::ilogb(a == 0.0 ? 1.0 : a), -14);
    const double m = std::nearbyint(std::ldexp(a, 10 - e));  // exact scaling; m in [0, 2048]
    int exp = e + 15, mant = int(m);
    if (mant == 2048) mant = 1024, ++exp;
    if (exp >= 31) return uint16_t(sign | 0x7c00u);
    if (mant < 1024) return uint16_t(sign | mant);  // subnormal (exp field 0) or zero
    return uint16_t(sign | (exp << 10) | (mant - 1024));
}

namespace {
std::atomic<MixRounding> gMixRounding{MixRounding::TwoSteps};
}
void setMixRounding(MixRounding rounding) { gMixRounding.store(rounding, std::memory_order_relaxed); }
MixRounding mixRounding() { return gMixRounding.load(std::memory_order_relaxed); }

float f16ToF32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0) return asF(sign | asU(float(mant) * 5.9604644775390625e-8f));  // mant * 2^-24
    if (exp == 31) return asF(sign | 0x7f800000u | (mant << 13));
    return asF(sign | ((exp + 112) << 23) | (mant << 13));
}

namespace {

inline uint32_t dst(const Inst& i) { return i.op[0].reg; }
inline uint32_t u(const Wave& w, const Inst& i, int k, uint32_t lane) { return read32(w, i.op[k], lane); }
// Integer read with the VOP3 neg/abs applied as bit operations (v_cndmask, v_mov with modifiers).
inline uint32_t ubits(const Wave& w, const Inst& i, int k, uint32_t lane) {
    uint32_t v = read32(w, i.op[k], lane);
    if (i.op[k].abs) v &= 0x7fffffffu;
    if (i.op[k].neg) v ^= 0x80000000u;
    return v;
}
inline void put(Wave& w, const Inst& i, uint32_t lane, uint32_t v) { w.v(dst(i), lane) = v; }
inline void put16(Wave& w, const Inst& i, uint32_t lane, uint32_t v) {
    uint32_t& r = w.v(dst(i), lane);
    r = (r & 0xffff0000u) | (v & 0xffffu);
}

#define ZK_VOP(NAME, ...)                                                      \
    void NAME(Wave& w, const Inst& i) {                                        \
        forLanes(w.exec(), [&](uint32_t l) { __VA_ARGS__; });                  \
    }
// a, b, c: source 1, 2, 3 after the destination.
#define A u(w, i, 1, l)
#define B u(w, i, 2, l)
#define C u(w, i, 3, l)
#define FA srcF(w, i, 1, l)
#define FB srcF(w, i, 2, l)
#define FC srcF(w, i, 3, l)
#define DA srcD(w, i, 1, l)
#define DB srcD(w, i, 2, l)
#define DC srcD(w, i, 3, l)
#define PUTF(x) put(w, i, l, asU(outF(i, (x))))
#define PUTD(x) write64(w, dst(i), l, asU64(outD(i, (x))))

// Moves and integer arithmetic.
ZK_VOP(v_mov_b32, put(w, i, l, ubits(w, i, 1, l)))
ZK_VOP(v_and_b32, put(w, i, l, A & B))
ZK_VOP(v_or_b32, put(w, i, l, A | B))
ZK_VOP(v_xor_b32, put(w, i, l, A ^ B))
ZK_VOP(v_and_or_b32, put(w, i, l, (A & B) | C))
ZK_VOP(v_or3_b32, put(w, i, l, A | B | C))
// v_perm_b32: each result byte picks a byte of {src0 (high), src1 (low)} by its selector byte in
// src2; selectors 8..11 replicate a sign bit, 12 gives 0x00, 13 and up 0xff.
uint32_t permByte(uint64_t data, uint32_t sel) {
    if (sel >= 13) return 0xffu;
    if (sel == 12) return 0u;
    if (sel >= 8) return ((data >> (16 * (sel - 8) + 15)) & 1u) ? 0xffu : 0u;
    return uint32_t(data >> (8 * sel)) & 0xffu;
}
ZK_VOP(v_perm_b32, {
    const uint64_t data = (uint64_t(A) << 32) | B;
    const uint32_t sel = C;
    uint32_t r = 0;
    for (uint32_t k = 0; k < 4; ++k) r |= permByte(data, (sel >> (8 * k)) & 0xffu) << (8 * k);
    put(w, i, l, r);
})
ZK_VOP(v_lshlrev_b32, put(w, i, l, B << (A & 31)))
ZK_VOP(v_lshrrev_b32, put(w, i, l, B >> (A & 31)))
ZK_VOP(v_ashrrev_i32, put(w, i, l, uint32_t(int32_t(B) >> (A & 31))))
ZK_VOP(v_lshl_or_b32, put(w, i, l, (A << (B & 31)) | C))
ZK_VOP(v_lshl_add_u32, put(w, i, l, (A << (B & 31)) + C))
ZK_VOP(v_add_lshl_u32, put(w, i, l, (A + B) << (C & 31)))
ZK_VOP(v_add_nc_u32, put(w, i, l, A + B))
ZK_VOP(v_sub_nc_u32, put(w, i, l, A - B))
ZK_VOP(v_subrev_nc_u32, put(w, i, l, B - A))
ZK_VOP(v_add3_u32, put(w, i, l, A + B + C))
ZK_VOP(v_mul_lo_u32, put(w, i, l, A * B))
ZK_VOP(v_mul_hi_u32, put(w, i, l, uint32_t((uint64_t(A) * B) >> 32)))  // the KV ring's p % slots
ZK_VOP(v_min_u32, put(w, i, l, std::min(A, B)))
ZK_VOP(v_max_u32, put(w, i, l, std::max(A, B)))
ZK_VOP(v_min_i32, put(w, i, l, uint32_t(std::min(int32_t(A), int32_t(B)))))
ZK_VOP(v_min3_i32, put(w, i, l, uint32_t(std::min({int32_t(A), int32_t(B), int32_t(C)}))))
ZK_VOP(v_not_b32, put(w, i, l, ~A))
ZK_VOP(v_bfrev_b32, {
    uint32_t x = A, r = 0;
    for (int k = 0; k < 32; ++k, x >>= 1) r = (r << 1) | (x & 1u);
    put(w, i, l, r);
})
ZK_VOP(v_med3_u32, { const uint32_t x = A, y = B, z = C; put(w, i, l, std::max(std::min(x, y), std::min(std::max(x, y), z))); })
ZK_VOP(v_med3_i32, { const int32_t x = int32_t(A), y = int32_t(B), z = int32_t(C); put(w, i, l, uint32_t(std::max(std::min(x, y), std::min(std::max(x, y), z)))); })
inline int64_t i24(uint32_t v) { return int64_t(int32_t(v << 8) >> 8); }
ZK_VOP(v_mul_i32_i24, put(w, i, l, uint32_t(i24(A) * i24(B))))
ZK_VOP(v_mad_i32_i24, put(w, i, l, uint32_t(i24(A) * i24(B) + int32_t(C))))
ZK_VOP(v_mul_u32_u24, put(w, i, l, (A & 0xffffffu) * (B & 0xffffffu)))
ZK_VOP(v_mad_u32_u24, put(w, i, l, (A & 0xffffffu) * (B & 0xffffffu) + C))
ZK_VOP(v_xad_u32, put(w, i, l, (A ^ B) + C))
ZK_VOP(v_mul_hi_u32_u24, put(w, i, l, uint32_t((uint64_t(A & 0xffffffu) * (B & 0xffffffu)) >> 32)))
ZK_VOP(v_bfe_u32, { const uint32_t off = B & 31, width = C & 31; put(w, i, l, width ? (A >> off) & ((1u << width) - 1) : 0u); })
ZK_VOP(v_bfe_i32, {
    const uint32_t off = B & 31, width = C & 31;
    put(w, i, l, width ? uint32_t(int32_t((A >> off) << (32 - width)) >> (32 - width)) : 0u);
})
ZK_VOP(v_lshlrev_b64, write64(w, dst(i), l, read64(w, i.op[2], l, false) << (A & 63)))
// 16-bit integer ops (low halves).
ZK_VOP(v_lshrrev_b16, put16(w, i, l, uint16_t(B) >> (A & 15)))
ZK_VOP(v_lshlrev_b16, put16(w, i, l, uint32_t(uint16_t(B)) << (A & 15)))
ZK_VOP(v_ashrrev_i16, put16(w, i, l, uint32_t(int16_t(B) >> (A & 15))))
ZK_VOP(v_add_nc_u16, put16(w, i, l, A + B))
ZK_VOP(v_sub_nc_u16, put16(w, i, l, A - B))

// Carry chains: dst, sdst (carry out), a, b [, carry in].
void v_add_co_u32(Wave& w, const Inst& i) {
    uint32_t carry = 0;
    forLanes(w.exec(), [&](uint32_t l) {
        const uint64_t r = uint64_t(read32(w, i.op[2], l)) + read32(w, i.op[3], l);
        put(w, i, l, uint32_t(r));
        if (r >> 32) carry |= 1u << l;
    });
    writeSdst(w, i.op[1], carry);
}
void v_sub_co_u32(Wave& w, const Inst& i) {
    uint32_t borrow = 0;
    forLanes(w.exec(), [&](uint32_t l) {
        const uint32_t x = read32(w, i.op[2], l), y = read32(w, i.op[3], l);
        put(w, i, l, x - y);
        if (y > x) borrow |= 1u << l;
    });
    writeSdst(w, i.op[1], borrow);
}
void v_add_co_ci_u32(Wave& w, const Inst& i) {
    const uint32_t cin = readScalar(w, i.op[4]);
    uint32_t carry = 0;
    forLanes(w.exec(), [&](uint32_t l) {
        const uint64_t r = uint64_t(read32(w, i.op[2], l)) + read32(w, i.op[3], l) + ((cin >> l) & 1u);
        put(w, i, l, uint32_t(r));
        if (r >> 32) carry |= 1u << l;
    });
    writeSdst(w, i.op[1], carry);
}
// D = S0 - S1 - borrow-in (VCC bit); borrow out where S1 + borrow-in exceeds S0.
void v_sub_co_ci_u32(Wave& w, const Inst& i) {
    const uint32_t bin = readScalar(w, i.op[4]);
    uint32_t borrow = 0;
    forLanes(w.exec(), [&](uint32_t l) {
        const uint64_t x = read32(w, i.op[2], l), y = uint64_t(read32(w, i.op[3], l)) + ((bin >> l) & 1u);
        put(w, i, l, uint32_t(x - y));
        if (y > x) borrow |= 1u << l;
    });
    writeSdst(w, i.op[1], borrow);
}
void v_mad_u64_u32(Wave& w, const Inst& i) {
    uint32_t carry = 0;
    forLanes(w.exec(), [&](uint32_t l) {
        const unsigned __int128 r = (unsigned __int128)(uint64_t(read32(w, i.op[2], l)) * read32(w, i.op[3], l)) + read64(w, i.op[4], l, false);
        write64(w, dst(i), l, uint64_t(r));
        if (r >> 64) carry |= 1u << l;
    });
    writeSdst(w, i.op[1], carry);
}
void v_mad_i64_i32(Wave& w, const Inst& i) {
    uint32_t carry = 0;
    forLanes(w.exec(), [&](uint32_t l) {
        const __int128 r = (__int128)(int64_t(int32_t(read32(w, i.op[2], l))) * int32_t(read32(w, i.op[3], l))) + int64_t(read64(w, i.op[4], l, false));
        write64(w, dst(i), l, uint64_t(r));
        if (r != __int128(int64_t(r))) carry |= 1u << l;
    });
    writeSdst(w, i.op[1], carry);
}
// v_cndmask_b32 dst, a, b [, mask]: lanes whose mask bit is set take b (VOPD form: the mask is VCC).
void v_cndmask_b32(Wave& w, const Inst& i) {
    const uint32_t mask = i.nops > 3 ? readScalar(w, i.op[3]) : w.s[kVccLo];
    forLanes(w.exec(), [&](uint32_t l) { put(w, i, l, (mask >> l) & 1u ? ubits(w, i, 2, l) : ubits(w, i, 1, l)); });
}
void v_readfirstlane_b32(Wave& w, const Inst& i) {
    const uint32_t e = w.exec();
    const uint32_t lane = e ? uint32_t(std::countr_zero(e)) : 0u;
    writeSdst(w, i.op[0], read32(w, i.op[1], lane));
}
// v_readlane_b32 sdst, vsrc, lane: one lane's value into an SGPR; v_writelane_b32 vdst, ssrc,
// lane: an SGPR into one lane (whatever EXEC says). The lane select uses its low 5 bits (wave32).
// clang spills SGPRs into VGPR lanes with them.
void v_readlane_b32(Wave& w, const Inst& i) { writeSdst(w, i.op[0], read32(w, i.op[1], readScalar(w, i.op[2]) & 31u)); }
void v_writelane_b32(Wave& w, const Inst& i) { w.v(dst(i), readScalar(w, i.op[2]) & 31u) = readScalar(w, i.op[1]); }
// Sums of four byte products (VOP3P; neg_lo bits 0 and 1 say which of a, b are signed bytes).
void v_dot4_i32_iu8(Wave& w, const Inst& i) {
    const bool sa = i.negLo & 1u, sb = i.negLo & 2u;
    forLanes(w.exec(), [&](uint32_t l) {
        const uint32_t x = read32(w, i.op[1], l), y = read32(w, i.op[2], l);
        int64_t acc = int32_t(read32(w, i.op[3], l));
        for (int k = 0; k < 32; k += 8) {
            const int32_t xa = sa ? int32_t(int8_t(x >> k)) : int32_t((x >> k) & 0xffu);
            const int32_t yb = sb ? int32_t(int8_t(y >> k)) : int32_t((y >> k) & 0xffu);
            acc += xa * yb;
        }
        if (i.clamp) acc = std::clamp<int64_t>(acc, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
        put(w, i, l, uint32_t(int32_t(uint32_t(acc))));
    });
}

// f32.
ZK_VOP(v_add_f32, PUTF(FA + FB))
ZK_VOP(v_sub_f32, PUTF(FA - FB))
ZK_VOP(v_subrev_f32, PUTF(FB - FA))
ZK_VOP(v_mul_f32, PUTF(FA * FB))
ZK_VOP(v_fma_f32, PUTF(std::fma(FA, FB, FC)))
ZK_VOP(v_fmac_f32, PUTF(std::fma(FA, FB, asF(w.v(dst(i), l)))))
// v_fmamk_f32 d, s0, K, s1 = s0 * K + s1 and v_fmaak_f32 d, s0, s1, K = s0 * s1 + K: in the
// operand order LLVM prints, both are fma(op1, op2, op3).
ZK_VOP(v_fmamk_f32, PUTF(std::fma(FA, FB, FC)))
ZK_VOP(v_max_f32, PUTF(std::fmax(FA, FB)))
ZK_VOP(v_min_f32, PUTF(std::fmin(FA, FB)))
ZK_VOP(v_rcp_f32, PUTF(1.0f / FA))
ZK_VOP(v_sqrt_f32, PUTF(std::sqrt(FA)))
// gfx12 v_s_sqrt_f32 sdst, src: the VALU square root of a uniform value into an SGPR (computed
// exactly rounded, inside the guide's 1 ULP; clang's correction step follows it).
void v_s_sqrt_f32(Wave& w, const Inst& i) { writeSdst(w, i.op[0], asU(outF(i, std::sqrt(modF(asF(readScalar(w, i.op[1])), i.op[1]))))); }
ZK_VOP(v_rsq_f32, PUTF(1.0f / std::sqrt(FA)))
ZK_VOP(v_cvt_f32_i32, PUTF(float(int32_t(A))))
ZK_VOP(v_cvt_f32_u32, PUTF(float(A)))
ZK_VOP(v_cvt_f32_ubyte0, PUTF(float(A & 0xffu)))
ZK_VOP(v_cvt_f32_f16, PUTF(modF(f16ToF32(read16(w, i.op[1], l, i.opSel & 1u)), i.op[1])))
ZK_VOP(v_cvt_f16_f32, put16(w, i, l, f32ToF16(outF(i, FA))))
uint32_t cvtU32(double f) { return std::isnan(f) || f <= 0 ? 0u : f >= 4294967295.0 ? 0xffffffffu : uint32_t(f); }
int32_t cvtI32(double f) {
    if (std::isnan(f)) return 0;
    return f <= -2147483648.0 ? std::numeric_limits<int32_t>::min() : f >= 2147483647.0 ? std::numeric_limits<int32_t>::max() : int32_t(f);
}
ZK_VOP(v_cvt_u32_f32, put(w, i, l, cvtU32(FA)))
ZK_VOP(v_cvt_i32_f32, put(w, i, l, uint32_t(cvtI32(FA))))
// v_fma_mix*: a source is f32, or an f16 half when its op_sel_hi bit is set (op_sel picks the
// half). The f16 forms round the product-sum to f32, then to f16 (the guide's pseudo-code), or
// once (MixRounding::Once, the other reading; kernels/README.md).
float mixSource(const Wave& w, const Inst& i, int k, uint32_t lane) {
    const Operand& o = i.op[k];
    float x;
    if (i.opSelHi & (1u << (k - 1))) x = f16ToF32(read16(w, o, lane, i.opSel & (1u << (k - 1))));
    else x = o.kind == OpKind::FloatConst ? float(o.fvalue) : asF(read32(w, o, lane));
    if (i.negHi & (1u << (k - 1))) x = std::fabs(x);
    return (i.negLo & (1u << (k - 1))) ? -x : x;
}
// The f16 result of v_fma_mix{lo,hi}_f16 by the reading chosen (wave.h MixRounding).
uint16_t mixToF16(const Wave& w, const Inst& i, uint32_t l) {
    const float a = mixSource(w, i, 1, l), b = mixSource(w, i, 2, l), c = mixSource(w, i, 3, l);
    if (mixRounding() == MixRounding::TwoSteps) return f32ToF16(outF(i, std::fma(a, b, c)));
    // Once: a*b is exact in f64 and the f64 fma rounds once more, 42 bits below f16's last bit.
    return f64ToF16(outD(i, std::fma(double(a), double(b), double(c))));
}
ZK_VOP(v_fma_mixlo_f16, put16(w, i, l, mixToF16(w, i, l)))
ZK_VOP(v_fma_mixhi_f16, {
    uint32_t& r = w.v(dst(i), l);
    r = (r & 0xffffu) | (uint32_t(mixToF16(w, i, l)) << 16);
})
ZK_VOP(v_fma_mix_f32, PUTF(std::fma(mixSource(w, i, 1, l), mixSource(w, i, 2, l), mixSource(w, i, 3, l))))

// Division helpers (the guides' V_DIV_SCALE / V_DIV_FMAS / V_DIV_FIXUP pseudo-code).
template <class F> int exponentOf(F x) { return std::ilogb(x); }
template <class F, int Bias, int Mant> F divScale(F s0, F den, F num, bool& vcc) {
    vcc = false;
    if (num == 0 || den == 0 || std::isnan(num) || std::isnan(den)) return std::numeric_limits<F>::quiet_NaN();
    if (std::isinf(num) || std::isinf(den)) return s0;  // v_div_fixup produces the special result
    const int en = exponentOf(num), ed = exponentOf(den);
    const F big = std::ldexp(F(1), Bias == 127 ? 64 : 128);
    if (en - ed >= Bias - 31) {  // the quotient may overflow: scale the denominator up
        vcc = true;
        return s0 == den ? s0 * big : s0;
    }
    if (std::fpclassify(den) == FP_SUBNORMAL) return s0 * big;
    const bool invTiny = std::fpclassify(F(1) / den) == FP_SUBNORMAL, quoTiny = std::fpclassify(num / den) == FP_SUBNORMAL;
    if (invTiny && quoTiny) {
        vcc = true;
        return s0 == den ? s0 * big : s0;
    }
    if (invTiny) return s0 / big;  // a huge denominator: both scaled down, the quotient unchanged
    if (quoTiny) {
        vcc = true;
        return s0 == num ? s0 * big : s0;
    }
    if (en + Bias <= Mant) return s0 * big;  // the biased exponent field: a numerator near the denormal range
    return s0;
}
template <class F> F divFixup(F q, F den, F num) {
    const bool negative = std::signbit(den) != std::signbit(num);
    const F inf = std::numeric_limits<F>::infinity();
    if (std::isnan(den)) return den;
    if (std::isnan(num)) return num;
    if ((den == 0 && num == 0) || (std::isinf(den) && std::isinf(num))) return std::numeric_limits<F>::quiet_NaN();
    if (den == 0 || std::isinf(num)) return negative ? -inf : inf;
    if (std::isinf(den) || num == 0) return negative ? F(-0.0) : F(0.0);
    if (std::isnan(q)) return negative ? -inf : inf;  // the scaled sequence overflowed
    return negative ? -std::fabs(q) : std::fabs(q);
}
void v_div_scale_f32(Wave& w, const Inst& i) {
    uint32_t vcc = 0;
    forLanes(w.exec(), [&](uint32_t l) {
        bool flag = false;
        const float r = divScale<float, 127, 23>(srcF(w, i, 2, l), srcF(w, i, 3, l), srcF(w, i, 4, l), flag);
        put(w, i, l, asU(r));
        if (flag) vcc |= 1u << l;
    });
    writeSdst(w, i.op[1], vcc);
}
void v_div_scale_f64(Wave& w, const Inst& i) {
    uint32_t vcc = 0;
    forLanes(w.exec(), [&](uint32_t l) {
        bool flag = false;
        const double r = divScale<double, 1023, 52>(srcD(w, i, 2, l), srcD(w, i, 3, l), srcD(w, i, 4, l), flag);
        write64(w, dst(i), l, asU64(r));
        if (flag) vcc |= 1u << l;
    });
    writeSdst(w, i.op[1], vcc);
}
void v_div_fmas_f32(Wave& w, const Inst& i) {
    const uint32_t vcc = w.s[kVccLo];
    forLanes(w.exec(), [&](uint32_t l) {
        float r = std::fma(FA, FB, FC);
        if ((vcc >> l) & 1u) r = std::ldexp(r, exponentOf(FC) >= 127 ? 64 : -64);
        PUTF(r);
    });
}
void v_div_fmas_f64(Wave& w, const Inst& i) {
    const uint32_t vcc = w.s[kVccLo];
    forLanes(w.exec(), [&](uint32_t l) {
        double r = std::fma(DA, DB, DC);
        if ((vcc >> l) & 1u) r = std::ldexp(r, exponentOf(DC) >= 1023 ? 128 : -128);
        PUTD(r);
    });
}
ZK_VOP(v_div_fixup_f32, PUTF(divFixup(FA, FB, FC)))
ZK_VOP(v_div_fixup_f64, PUTD(divFixup(DA, DB, DC)))

// f64.
ZK_VOP(v_add_f64, PUTD(DA + DB))
ZK_VOP(v_mul_f64, PUTD(DA * DB))
ZK_VOP(v_fma_f64, PUTD(std::fma(DA, DB, DC)))
ZK_VOP(v_rcp_f64, PUTD(1.0 / DA))
ZK_VOP(v_rsq_f64, PUTD(1.0 / std::sqrt(DA)))
ZK_VOP(v_sqrt_f64, PUTD(std::sqrt(DA)))
ZK_VOP(v_trunc_f64, PUTD(std::trunc(DA)))
ZK_VOP(v_floor_f64, PUTD(std::floor(DA)))
ZK_VOP(v_ldexp_f64, PUTD(std::ldexp(DA, int32_t(B))))
ZK_VOP(v_cvt_f64_f32, PUTD(double(FA)))
ZK_VOP(v_cvt_f32_f64, PUTF(float(DA)))
ZK_VOP(v_cvt_f64_i32, PUTD(double(int32_t(A))))
ZK_VOP(v_cvt_u32_f64, put(w, i, l, cvtU32(DA)))
ZK_VOP(v_cvt_i32_f64, put(w, i, l, uint32_t(cvtI32(DA))))

// Compares. v_cmp writes the lane mask to its scalar destination (inactive lanes 0); v_cmpx
// writes EXEC (gfx11/gfx12 v_cmpx has no scalar destination).
template <class Pred> void compare(Wave& w, const Inst& i, bool toExec, Pred pred) {
    const int first = toExec ? 0 : 1;
    uint32_t mask = 0;
    forLanes(w.exec(), [&](uint32_t l) {
        if (pred(w, i, first, l)) mask |= 1u << l;
    });
    if (toExec) w.s[kExecLo] = mask;
    else writeSdst(w, i.op[0], mask);
}
#define ZK_CMP(SUFFIX, ...)                                                                           \
    bool pred_##SUFFIX(const Wave& w, const Inst& i, int k, uint32_t l) { __VA_ARGS__; }             \
    void v_cmp_##SUFFIX(Wave& w, const Inst& i) { compare(w, i, false, pred_##SUFFIX); }             \
    void v_cmpx_##SUFFIX(Wave& w, const Inst& i) { compare(w, i, true, pred_##SUFFIX); }
#define UA read32(w, i.op[k], l)
#define UB read32(w, i.op[k + 1], l)
#define FXA srcF(w, i, k, l)
#define FXB srcF(w, i, k + 1, l)
#define DXA srcD(w, i, k, l)
#define DXB srcD(w, i, k + 1, l)
ZK_CMP(eq_u32, return UA == UB)
ZK_CMP(ne_u32, return UA != UB)
ZK_CMP(lt_u32, return UA < UB)
ZK_CMP(le_u32, return UA <= UB)
ZK_CMP(gt_u32, return UA > UB)
ZK_CMP(ge_u32, return UA >= UB)
ZK_CMP(eq_i32, return int32_t(UA) == int32_t(UB))
ZK_CMP(ne_i32, return int32_t(UA) != int32_t(UB))
ZK_CMP(lt_i32, return int32_t(UA) < int32_t(UB))
ZK_CMP(le_i32, return int32_t(UA) <= int32_t(UB))
ZK_CMP(gt_i32, return int32_t(UA) > int32_t(UB))
ZK_CMP(ge_i32, return int32_t(UA) >= int32_t(UB))
ZK_CMP(eq_u16, return uint16_t(UA) == uint16_t(UB))
ZK_CMP(gt_i16, return int16_t(UA) > int16_t(UB))
ZK_CMP(lt_i16, return int16_t(UA) < int16_t(UB))
ZK_CMP(eq_f32, return FXA == FXB)
ZK_CMP(neq_f32, return !(FXA == FXB))
ZK_CMP(lt_f32, return FXA < FXB)
ZK_CMP(le_f32, return FXA <= FXB)
ZK_CMP(gt_f32, return FXA > FXB)
ZK_CMP(ge_f32, return FXA >= FXB)
ZK_CMP(ngt_f32, return !(FXA > FXB))
ZK_CMP(nlt_f32, return !(FXA < FXB))
ZK_CMP(nge_f32, return !(FXA >= FXB))
ZK_CMP(nle_f32, return !(FXA <= FXB))
ZK_CMP(o_f32, { const float x = FXA, y = FXB; return !std::isnan(x) && !std::isnan(y); })
ZK_CMP(u_f32, { const float x = FXA, y = FXB; return std::isnan(x) || std::isnan(y); })
ZK_CMP(lt_i64, return int64_t(read64(w, i.op[k], l, false)) < int64_t(read64(w, i.op[k + 1], l, false)))
ZK_CMP(gt_f64, return DXA > DXB)
ZK_CMP(lt_f64, return DXA < DXB)
ZK_CMP(eq_f64, return DXA == DXB)
// v_cmp_class: bit n of the mask selects sNaN, qNaN, -inf, -normal, -denorm, -0, +0, +denorm, +normal, +inf.
template <class F> int classBit(F x) {
    const bool neg = std::signbit(x);
    switch (std::fpclassify(x)) {
        case FP_NAN: return 1;  // compiled code treats both NaN kinds alike; quiet
        case FP_INFINITE: return neg ? 2 : 9;
        case FP_NORMAL: return neg ? 3 : 8;
        case FP_SUBNORMAL: return neg ? 4 : 7;
        default: return neg ? 5 : 6;
    }
}
ZK_CMP(class_f32, return (UB >> classBit(FXA)) & 1u)
ZK_CMP(class_f64, return (UB >> classBit(DXA)) & 1u)

#undef ZK_CMP
#undef ZK_VOP

}  // namespace

std::vector<OpEntry> vectorOps() {
    std::vector<OpEntry> ops = {
        {"v_mov_b32", v_mov_b32}, {"v_and_b32", v_and_b32}, {"v_or_b32", v_or_b32}, {"v_xor_b32", v_xor_b32},
        {"v_and_or_b32", v_and_or_b32}, {"v_or3_b32", v_or3_b32}, {"v_perm_b32", v_perm_b32}, {"v_lshlrev_b32", v_lshlrev_b32}, {"v_lshrrev_b32", v_lshrrev_b32},
        {"v_ashrrev_i32", v_ashrrev_i32}, {"v_lshl_or_b32", v_lshl_or_b32}, {"v_lshl_add_u32", v_lshl_add_u32}, {"v_add_lshl_u32", v_add_lshl_u32},
        {"v_add_nc_u32", v_add_nc_u32}, {"v_sub_nc_u32", v_sub_nc_u32}, {"v_subrev_nc_u32", v_subrev_nc_u32},
        {"v_add3_u32", v_add3_u32}, {"v_mul_lo_u32", v_mul_lo_u32}, {"v_mul_hi_u32", v_mul_hi_u32}, {"v_min_u32", v_min_u32}, {"v_max_u32", v_max_u32},
        {"v_min_i32", v_min_i32}, {"v_min3_i32", v_min3_i32}, {"v_not_b32", v_not_b32}, {"v_bfrev_b32", v_bfrev_b32},
        {"v_med3_u32", v_med3_u32}, {"v_med3_i32", v_med3_i32}, {"v_mul_i32_i24", v_mul_i32_i24}, {"v_mad_i32_i24", v_mad_i32_i24},
        {"v_mul_u32_u24", v_mul_u32_u24}, {"v_mad_u32_u24", v_mad_u32_u24}, {"v_xad_u32", v_xad_u32}, {"v_mul_hi_u32_u24", v_mul_hi_u32_u24}, {"v_bfe_u32", v_bfe_u32}, {"v_bfe_i32", v_bfe_i32},
        {"v_lshlrev_b64", v_lshlrev_b64}, {"v_lshrrev_b16", v_lshrrev_b16}, {"v_lshlrev_b16", v_lshlrev_b16},
        {"v_ashrrev_i16", v_ashrrev_i16}, {"v_add_nc_u16", v_add_nc_u16}, {"v_sub_nc_u16", v_sub_nc_u16},
        {"v_add_co_u32", v_add_co_u32}, {"v_sub_co_u32", v_sub_co_u32}, {"v_add_co_ci_u32", v_add_co_ci_u32}, {"v_sub_co_ci_u32", v_sub_co_ci_u32},
        {"v_mad_u64_u32", v_mad_u64_u32}, {"v_mad_co_u64_u32", v_mad_u64_u32}, {"v_mad_i64_i32", v_mad_i64_i32},
        {"v_mad_co_i64_i32", v_mad_i64_i32}, {"v_cndmask_b32", v_cndmask_b32}, {"v_readfirstlane_b32", v_readfirstlane_b32},
        {"v_readlane_b32", v_readlane_b32}, {"v_writelane_b32", v_writelane_b32},
        {"v_dot4_i32_iu8", v_dot4_i32_iu8},
        {"v_fmamk_f32", v_fmamk_f32}, {"v_fmaak_f32", v_fmamk_f32}, {"v_s_sqrt_f32", v_s_sqrt_f32},
        {"v_add_f32", v_add_f32}, {"v_sub_f32", v_sub_f32}, {"v_subrev_f32", v_subrev_f32}, {"v_mul_f32", v_mul_f32}, {"v_fma_f32", v_fma_f32},
        {"v_fmac_f32", v_fmac_f32}, {"v_max_f32", v_max_f32}, {"v_max_num_f32", v_max_f32}, {"v_min_f32", v_min_f32},
        {"v_min_num_f32", v_min_f32}, {"v_rcp_f32", v_rcp_f32}, {"v_rcp_iflag_f32", v_rcp_f32}, {"v_sqrt_f32", v_sqrt_f32},
        {"v_rsq_f32", v_rsq_f32}, {"v_cvt_f32_i32", v_cvt_f32_i32}, {"v_cvt_f32_u32", v_cvt_f32_u32},
        {"v_cvt_f32_ubyte0", v_cvt_f32_ubyte0}, {"v_cvt_f32_f16", v_cvt_f32_f16}, {"v_cvt_f16_f32", v_cvt_f16_f32},
        {"v_cvt_u32_f32", v_cvt_u32_f32}, {"v_cvt_i32_f32", v_cvt_i32_f32}, {"v_fma_mixlo_f16", v_fma_mixlo_f16}, {"v_fma_mixhi_f16", v_fma_mixhi_f16},
        {"v_fma_mix_f32", v_fma_mix_f32},
        {"v_div_scale_f32", v_div_scale_f32}, {"v_div_scale_f64", v_div_scale_f64}, {"v_div_fmas_f32", v_div_fmas_f32},
        {"v_div_fmas_f64", v_div_fmas_f64}, {"v_div_fixup_f32", v_div_fixup_f32}, {"v_div_fixup_f64", v_div_fixup_f64},
        {"v_add_f64", v_add_f64}, {"v_mul_f64", v_mul_f64}, {"v_fma_f64", v_fma_f64}, {"v_rcp_f64", v_rcp_f64},
        {"v_rsq_f64", v_rsq_f64}, {"v_sqrt_f64", v_sqrt_f64}, {"v_trunc_f64", v_trunc_f64}, {"v_floor_f64", v_floor_f64},
        {"v_ldexp_f64", v_ldexp_f64}, {"v_cvt_f64_f32", v_cvt_f64_f32}, {"v_cvt_f32_f64", v_cvt_f32_f64},
        {"v_cvt_f64_i32", v_cvt_f64_i32}, {"v_cvt_u32_f64", v_cvt_u32_f64}, {"v_cvt_i32_f64", v_cvt_i32_f64},
    };
#define ZK_CMP_ENTRY(S) ops.push_back({"v_cmp_" #S, v_cmp_##S}); ops.push_back({"v_cmpx_" #S, v_cmpx_##S});
    ZK_CMP_ENTRY(eq_u32) ZK_CMP_ENTRY(ne_u32) ZK_CMP_ENTRY(lt_u32) ZK_CMP_ENTRY(le_u32) ZK_CMP_ENTRY(gt_u32) ZK_CMP_ENTRY(ge_u32)
    ZK_CMP_ENTRY(eq_i32) ZK_CMP_ENTRY(ne_i32) ZK_CMP_ENTRY(lt_i32) ZK_CMP_ENTRY(le_i32) ZK_CMP_ENTRY(gt_i32) ZK_CMP_ENTRY(ge_i32)
    ZK_CMP_ENTRY(eq_u16) ZK_CMP_ENTRY(gt_i16) ZK_CMP_ENTRY(lt_i16)
    ZK_CMP_ENTRY(eq_f32) ZK_CMP_ENTRY(neq_f32) ZK_CMP_ENTRY(lt_f32) ZK_CMP_ENTRY(le_f32) ZK_CMP_ENTRY(gt_f32) ZK_CMP_ENTRY(ge_f32)
    ZK_CMP_ENTRY(ngt_f32) ZK_CMP_ENTRY(nlt_f32) ZK_CMP_ENTRY(nge_f32) ZK_CMP_ENTRY(nle_f32) ZK_CMP_ENTRY(o_f32) ZK_CMP_ENTRY(u_f32)
    ZK_CMP_ENTRY(lt_i64) ZK_CMP_ENTRY(gt_f64) ZK_CMP_ENTRY(lt_f64) ZK_CMP_ENTRY(eq_f64) ZK_CMP_ENTRY(class_f32) ZK_CMP_ENTRY(class_f64)
#undef ZK_CMP_ENTRY
    return ops;
}

}  // namespace zinc::kfd::isa
