// Loads of packed block fields, IEEE half conversions, and exp / sin / cos evaluated in
// double and rounded once to float, so both targets give the correctly rounded result
// (the cpu tier's glibc expf/sinf/cosf agree with it except within ~0.002 ulp of a tie).
#ifndef ZK_MATH_H
#define ZK_MATH_H
#include "zk_compat.h"

// ggml blocks are packed: a field is only 2-byte aligned (Q8_0 is 34 bytes, Q6_K 210), so
// 32-bit values are assembled from two aligned 16-bit loads.
static inline uint zk_ld16(ZkBytes p) { return (uint)*(__global const ushort*)p; }
static inline uint zk_ld32(ZkBytes p) { return zk_ld16(p) | (zk_ld16(p + 2) << 16); }
static inline float zk_ldf32(ZkBytes p) { return as_float(zk_ld32(p)); }

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

// Round-to-nearest integer of a double with |x| < 2^51, by the 1.5 * 2^52 shift.
static inline double zk_rint_d(double x) {
    const double shift = 6755399441055744.0;
    return (x + shift) - shift;
}

// exp(x) for float x: x = k ln2 + r, |r| <= ln2/2, Taylor series of degree 13 in double
// (error < 1e-16 relative), scaled by 2^k built from bits, rounded once to float.
static inline float zk_expf(float x) {
    if (x != x) return x;
    if (x > 89.0f) return as_float(0x7f800000u);
    if (x < -104.0f) return 0.0f;
    const double xd = (double)x;
    const double k = zk_rint_d(xd * 1.4426950408889634);
    const double ln2Hi = 6.93147180369123816490e-01, ln2Lo = 1.90821492927058770002e-10;
    const double r = (xd - k * ln2Hi) - k * ln2Lo;
    double p = 1.0 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    const double scale = as_double((ulong)((long)k + 1023) << 52);
    return (float)(p * scale);
}

// sin and cos of a float angle (|x| < 2^20): Cody-Waite reduction by pi/2 in three parts,
// Taylor series in double on [-pi/4, pi/4], quadrant by k mod 4.
static inline double zk_sin_poly(double r) {
    const double r2 = r * r;
    double p = -1.0 / 1307674368000.0;
    p = p * r2 + 1.0 / 6227020800.0;
    p = p * r2 - 1.0 / 39916800.0;
    p = p * r2 + 1.0 / 362880.0;
    p = p * r2 - 1.0 / 5040.0;
    p = p * r2 + 1.0 / 120.0;
    p = p * r2 - 1.0 / 6.0;
    return r + r * r2 * p;
}
static inline double zk_cos_poly(double r) {
    const double r2 = r * r;
    double p = 1.0 / 20922789888000.0;
    p = p * r2 - 1.0 / 87178291200.0;
    p = p * r2 + 1.0 / 479001600.0;
    p = p * r2 - 1.0 / 3628800.0;
    p = p * r2 + 1.0 / 40320.0;
    p = p * r2 - 1.0 / 720.0;
    p = p * r2 + 1.0 / 24.0;
    p = p * r2 - 0.5;
    return 1.0 + r2 * p;
}
static inline void zk_sincosf(float x, float* s, float* c) {
    const double xd = (double)x;
    const double k = zk_rint_d(xd * 0.63661977236758134308);
    // pi/2 = p1 + p2 + p3; p1 and p2 have 33 significant bits, so k * p1 and k * p2 are exact.
    const double p1 = 1.57079632673412561417e+00, p2 = 6.07710050630396597660e-11,
                 p3 = 2.02226624879595063154e-21;
    const double r = ((xd - k * p1) - k * p2) - k * p3;
    const double sr = zk_sin_poly(r), cr = zk_cos_poly(r);
    const int q = (int)((long)k & 3);
    double sv, cv;
    if (q == 0) { sv = sr; cv = cr; }
    else if (q == 1) { sv = cr; cv = -sr; }
    else if (q == 2) { sv = -sr; cv = -cr; }
    else { sv = -cr; cv = sr; }
    *s = (float)sv;
    *c = (float)cv;
}

// Double-precision sqrt rounded to float equals the correctly rounded float sqrt.
static inline float zk_sqrtf(float x) { return (float)__builtin_sqrt((double)x); }

#endif  // ZK_MATH_H
