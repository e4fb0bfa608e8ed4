// Loads of packed block fields, IEEE half conversions, float-float arithmetic, and exp / sin /
// cos in f32 with float-float leading terms, close enough to correctly rounded that the cpu
// tier's glibc expf/sinf/cosf agree except within a small fraction of an ulp of a tie. No
// kernel uses fp64 (tests/kernels greps both code objects' disassembly).
#ifndef ZK_MATH_H
#define ZK_MATH_H
#include "zk_compat.h"

// ggml blocks are packed: a field is only 2-byte aligned (Q8_0 is 34 bytes, Q6_K 210), so
// 32-bit values are assembled from two aligned 16-bit loads.
static inline uint zk_ld16(ZkAnyBytes p) { return (uint)*(const ZK_ANY_AS ushort*)p; }
static inline uint zk_ld32(ZkAnyBytes p) { return zk_ld16(p) | (zk_ld16(p + 2) << 16); }
static inline float zk_ldf32(ZkAnyBytes p) { return as_float(zk_ld32(p)); }

// --- binary16 <-> float, round to nearest even (as the cpu tier's fp16.h) -------------
#if defined(__AMDGCN__) && !defined(ZK_SOFT_HALF)
static inline float zk_h2f(uint h) { return (float)as_half((ushort)h); }
static inline uint zk_f2h(float f) { return (uint)as_ushort((half)f); }
#else
static inline float zk_h2f(uint h) {
    const uint sign = (h & 0x8000u) << 16;
    const uint e = (h >> 10) & 0x1fu;
    uint m = h & 0x3ffu;
    if (e == 0) {
        if (m == 0) return as_float(sign);
        int shift = -1;
        do { m <<= 1; ++shift; } while ((m & 0x400u) == 0);
        return as_float(sign | (uint)(127 - 15 - shift) << 23 | (m & 0x3ffu) << 13);
    }
    if (e == 0x1f) return as_float(sign | 0x7f800000u | m << 13);
    return as_float(sign | (e + 127 - 15) << 23 | m << 13);
}
static inline uint zk_f2h(float f) {
    const uint x = as_uint(f);
    const uint sign = (x >> 16) & 0x8000u;
    const uint a = x & 0x7fffffffu;
    if (a >= 0x7f800000u) return sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u);
    if (a >= 0x477ff000u) return sign | 0x7c00u;
    if (a < 0x38800000u) {
        if (a < 0x33000000u) return sign;
        const uint shift = 126u - (a >> 23);
        const uint m = (a & 0x7fffffu) | 0x800000u;
        uint half_ = m >> shift;
        const uint rem = m & ((1u << shift) - 1u);
        const uint mid = 1u << (shift - 1u);
        if (rem > mid || (rem == mid && (half_ & 1u))) ++half_;
        return sign | half_;
    }
    uint half_ = (a >> 13) - ((127u - 15u) << 10);
    const uint rem = a & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half_ & 1u))) ++half_;
    return sign | half_;
}
#endif
static inline float zk_round_half(float x) { return zk_h2f(zk_f2h(x)); }

// ggml's nearest_int: round half to even through the float mantissa (|f| < 2^22).
static inline int zk_nearest_int(float f) {
    const float shifted = f + 12582912.0f;
    return (int)(as_uint(shifted) & 0x007fffffu) - 0x00400000;
}

// --- float-float arithmetic (Dekker, Knuth): a value hi + lo, |lo| <= ulp(hi) / 2 ----------
// About 48 significant bits from f32 operations and fma, so no kernel needs fp64 (1/32 rate on
// RDNA3 consumer parts, less on RDNA4). The last step of each function below leaves hi as
// the float nearest hi + lo, which is what the caller keeps.
typedef struct { float hi, lo; } zk_ff;
static inline zk_ff zk_ff_make(float hi, float lo) {
    zk_ff r;
    r.hi = hi;
    r.lo = lo;
    return r;
}
static inline zk_ff zk_two_sum(float a, float b) {  // exactly a + b
    const float s = a + b, bb = s - a;
    return zk_ff_make(s, (a - (s - bb)) + (b - bb));
}
static inline zk_ff zk_fast_two_sum(float a, float b) {  // exactly a + b when |a| >= |b| or a == 0
    const float s = a + b;
    return zk_ff_make(s, b - (s - a));
}
static inline zk_ff zk_two_prod(float a, float b) {  // exactly a * b (no overflow / underflow)
    const float p = a * b;
    return zk_ff_make(p, __builtin_fmaf(a, b, -p));
}
static inline zk_ff zk_ff_add(zk_ff a, zk_ff b) {
    zk_ff s = zk_two_sum(a.hi, b.hi);
    const zk_ff t = zk_two_sum(a.lo, b.lo);
    s = zk_fast_two_sum(s.hi, s.lo + t.hi);
    return zk_fast_two_sum(s.hi, s.lo + t.lo);
}
static inline zk_ff zk_ff_mul(zk_ff a, zk_ff b) {
    const zk_ff p = zk_two_prod(a.hi, b.hi);
    return zk_fast_two_sum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}
static inline zk_ff zk_ff_mul_add(zk_ff p, zk_ff x, float cHi, float cLo) {  // p * x + c
    return zk_ff_add(zk_ff_mul(p, x), zk_ff_make(cHi, cLo));
}
// (hi + lo) / d rounded to float (d > 0 a float): one correction step of the quotient, so equal
// to the correctly rounded quotient except within ~2^-20 ulp of a rounding tie.
static inline float zk_ff_div(zk_ff a, float d) {
    const float q = a.hi / d;
    const float rem = __builtin_fmaf(-q, d, a.hi) + a.lo;
    return q + rem / d;
}
// n / (hi + lo) rounded to float (hi > 0), the same way.
static inline float zk_ff_div_into(float n, zk_ff d) {
    const float q = n / d.hi;
    const float rem = __builtin_fmaf(-q, d.hi, n) - q * d.lo;
    return q + rem / d.hi;
}
// Round to the nearest integer, for |x| < 2^22, by the 1.5 * 2^23 shift.
static inline float zk_rint_small(float x) { return (x + 12582912.0f) - 12582912.0f; }
// 2^k * m for m in [0.5, 2] and k in [-150, 128]: two exact power-of-two factors, so one
// rounding (two where the result is subnormal).
static inline float zk_scale2(float m, int k) {
    const int k1 = k / 2, k2 = k - k1;
    return (m * as_float((uint)(k1 + 127) << 23)) * as_float((uint)(k2 + 127) << 23);
}

// exp(x) for float x, in f32 only: x = k ln2 + r with ln2 in three parts (k * L1 and k * L2
// exact, r held as float-float), exp(r) by Taylor to degree 11 (truncation < 2^-44 for
// |r| <= 0.35), the terms up to r^4 in float-float and the rest in float (error < 2^-37), then
// 2^k. Error before the final rounding about 2^-36 relative, so the correctly rounded expf
// except within ~2^-12 ulp of a tie (glibc's expf, the cpu tier's, is within 0.502 ulp);
// results below 2^-126 are rounded twice.
static inline float zk_expf(float x) {
    if (x != x) return x;
    if (x > 89.0f) return as_float(0x7f800000u);
    if (x < -104.0f) return 0.0f;
    const float k = zk_rint_small(x * 1.44269502f);
    const float L1 = 0.693115234375f, L2 = 3.1948089599609375e-05f, L3 = -1.904654212e-09f;  // ln2 = L1 + L2 + L3
    const zk_ff a = zk_two_sum(x - k * L1, -(k * L2));
    const zk_ff r = zk_fast_two_sum(a.hi, a.lo - k * L3);
    float t = 1.0f / 39916800.0f;
    t = t * r.hi + 1.0f / 3628800.0f;
    t = t * r.hi + 1.0f / 362880.0f;
    t = t * r.hi + 1.0f / 40320.0f;
    t = t * r.hi + 1.0f / 5040.0f;
    t = t * r.hi + 1.0f / 720.0f;
    t = t * r.hi + 1.0f / 120.0f;
    zk_ff p = zk_ff_make(t, 0.0f);
    p = zk_ff_mul_add(p, r, 4.166666791e-02f, -1.241763470e-09f);  // 1/24
    p = zk_ff_mul_add(p, r, 1.666666716e-01f, -4.967053879e-09f);  // 1/6
    p = zk_ff_mul_add(p, r, 0.5f, 0.0f);
    p = zk_ff_mul_add(p, r, 1.0f, 0.0f);
    p = zk_ff_mul_add(p, r, 1.0f, 0.0f);
    return zk_scale2(p.hi, (int)k);
}

// SwiGLU of one element, as ops_elementwise.cpp: silu(g) * u. The swiglu kernel and the
// quantize kernels fed gate and up (graph::fuse's SwiGluQuantize) share it, so the same bits.
static inline float zk_swiglu(float g, float u) { return g / (1.0f + zk_expf(-g)) * u; }
static inline float zk_sigmoid(float x) { return 1.0f / (1.0f + zk_expf(-x)); }
static inline float zk_silu(float x) { return x / (1.0f + zk_expf(-x)); }
// One step of the hybrids' causal conv1d for channel ch (ggml_ssm_conv, as ops_deltanet.cpp):
// `win` holds the last taps - 1 inputs, oldest first, a row of `channels` each; wc the channel's
// taps, oldest first. Cleared first when `clear` (a sequence's position 0); the window moves by
// one and takes xv. ssm_conv and the matvec that convolves its own rows (graph::fuse's
// MatMulConv) share it, so the same bits.
static inline float zk_conv_step(__global float* win, __global const float* wc, int channels, int ch, int taps, float xv,
                                 int clear) {
    const int last = taps - 1;
    if (clear)
        for (int k = 0; k < last; ++k) win[(long)k * channels + ch] = 0.0f;
    float sum = 0.0f;
    for (int k = 0; k < last; ++k) sum += win[(long)k * channels + ch] * wc[k];
    sum += xv * wc[last];
    for (int k = 0; k + 1 < last; ++k) win[(long)k * channels + ch] = win[(long)(k + 1) * channels + ch];
    win[(long)(last - 1) * channels + ch] = xv;
    return zk_silu(sum);
}
// Element i of a row to quantize: in[i], or swiglu(in[i], up[i]) when up is given.
static inline float zk_quant_input(__global const float* in, __global const float* up, long i) {
    return up ? zk_swiglu(in[i], up[i]) : in[i];
}

// sin and cos of a float angle (|x| < 2^20), in f32 only: Cody-Waite reduction by pi/2 in four
// float parts (k * P1 exact through fma, k * P2 as an exact product), r as float-float,
// Taylor series on [-pi/4, pi/4] (sin to r^15, cos to r^16, truncation < 2^-45) with the
// leading terms in float-float, quadrant by k mod 4. Error before the final rounding about
// 2^-35 relative: the correctly rounded value except within ~2^-11 ulp of a tie (glibc's
// sinf/cosf, the cpu tier's, are correctly rounded in practice).
static inline void zk_sincosf(float x, float* s, float* c) {
    const float k = zk_rint_small(x * 0.636619747f);
    const float P1 = 1.570796371e+00f, P2 = -4.371138829e-08f, P3 = -1.715124510e-15f, P4 = 1.056299898e-23f;
    const zk_ff kp2 = zk_two_prod(k, P2);
    const zk_ff a = zk_two_sum(__builtin_fmaf(-k, P1, x), -kp2.hi);
    const zk_ff r = zk_fast_two_sum(a.hi, ((a.lo - kp2.lo) - k * P3) - k * P4);
    const zk_ff z = zk_ff_mul(r, r);
    float ts = -1.0f / 1307674368000.0f;  // sin(r) = r (1 + z S(z))
    ts = ts * z.hi + 1.0f / 6227020800.0f;
    ts = ts * z.hi - 1.0f / 39916800.0f;
    ts = ts * z.hi + 1.0f / 362880.0f;
    ts = ts * z.hi - 1.0f / 5040.0f;
    zk_ff ps = zk_ff_make(ts, 0.0f);
    ps = zk_ff_mul_add(ps, z, 8.333333768e-03f, -4.346172033e-10f);  // 1/120
    ps = zk_ff_mul_add(ps, z, -1.666666716e-01f, 4.967053879e-09f);  // -1/6
    ps = zk_ff_mul_add(ps, z, 1.0f, 0.0f);
    const float sr = zk_ff_mul(ps, r).hi;
    float tc = 1.0f / 20922789888000.0f;  // cos(r) = 1 + z C(z)
    tc = tc * z.hi - 1.0f / 87178291200.0f;
    tc = tc * z.hi + 1.0f / 479001600.0f;
    tc = tc * z.hi - 1.0f / 3628800.0f;
    tc = tc * z.hi + 1.0f / 40320.0f;
    zk_ff pc = zk_ff_make(tc, 0.0f);
    pc = zk_ff_mul_add(pc, z, -1.388888923e-03f, 3.363109444e-11f);  // -1/720
    pc = zk_ff_mul_add(pc, z, 4.166666791e-02f, -1.241763470e-09f);  // 1/24
    pc = zk_ff_mul_add(pc, z, -0.5f, 0.0f);
    pc = zk_ff_mul_add(pc, z, 1.0f, 0.0f);
    const float cr = pc.hi;
    const int q = (int)k & 3;
    if (q == 0) { *s = sr; *c = cr; }
    else if (q == 1) { *s = cr; *c = -sr; }
    else if (q == 2) { *s = -sr; *c = -cr; }
    else { *s = -cr; *c = sr; }
}

// The correctly rounded float square root (clang-19 lowers it to v_sqrt_f32 with a
// correction step under -cl-fp32-correctly-rounded-divide-sqrt; PoCL to sqrtss).
static inline float zk_sqrtf(float x) { return __builtin_sqrtf(x); }

// Argmax over a workgroup of `wg` threads: each has put its candidate in best[lid] / where[lid]
// (where = -1: none); a tree leaves the largest in best[0] / where[0], the lower index on ties.
static inline void zk_argmax_tree(__local float* best, __local int* where, int wg) {
    const int lid = ZK_LID();
    zk_barrier();
    for (int w = wg / 2; w > 0; w /= 2) {
        if (lid < w) {
            const int o = where[lid + w];
            if (o >= 0 && (where[lid] < 0 || best[lid + w] > best[lid] || (best[lid + w] == best[lid] && o < where[lid]))) {
                best[lid] = best[lid + w];
                where[lid] = o;
            }
        }
        zk_barrier();
    }
}

#endif  // ZK_MATH_H
