// The weight types beyond zk_quant.h: the legacy 32-weight blocks (Q4_0, Q4_1, Q5_0, Q5_1),
// the low-bit K types (Q2_K, Q3_K), the IQ4 types and BF16. One element dequantized with
// dequantize.cpp's formulas, one block's dot product with the cpu tier's integer math and
// float scaling (quant_generic.cpp, quant_generic_lowbit.cpp). Activations: Q8_0 for Q4_0,
// Q5_0, IQ4_NL; Q8_1 (d, s = d * sum, qs) for Q4_1, Q5_1; Q8_K for Q2_K, Q3_K, IQ4_XS.
#ifndef ZK_QUANT_MORE_H
#define ZK_QUANT_MORE_H
#include "zk_quant.h"

#define ZK_Q4_0_BYTES 18    // d, qs[16]
#define ZK_Q4_1_BYTES 20    // d, m, qs[16]
#define ZK_Q5_0_BYTES 22    // d, qh[4], qs[16]
#define ZK_Q5_1_BYTES 24    // d, m, qh[4], qs[16]
#define ZK_Q8_1_BYTES 36    // d, s (halves), qs[32]
#define ZK_Q2_K_BYTES 84    // scales[16], qs[64], d, dmin
#define ZK_Q3_K_BYTES 110   // hmask[32], qs[64], scales[12], d
#define ZK_IQ4_NL_BYTES 18  // d, qs[16]
#define ZK_IQ4_XS_BYTES 136 // d, scales_h, scales_l[4], qs[128]

__constant char zk_iq4_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// Nibble j (0..31) of 16 packed bytes: low nibbles are elements 0..15, high 16..31.
static inline int zk_nibble32(ZkBytes qs, int j) { return j < 16 ? (qs[j] & 0x0f) : (qs[j - 16] >> 4); }

// Q3_K's scale si (0..15), minus 32 (ggml's kmask unpacking of 12 bytes).
static inline int zk_scale_q3_k(ZkBytes sc, int si) {
    const int lo = si < 8 ? (sc[si] & 0x0f) : (sc[si - 8] >> 4);
    const int hi = (sc[8 + si % 4] >> (2 * (si / 4))) & 3;
    return (lo | (hi << 4)) - 32;
}

// IQ4_XS's scale of sub-block ib (0..7), minus 32.
static inline int zk_scale_iq4_xs(ZkBytes b, int ib) {
    return (((b[4 + ib / 2] >> (4 * (ib % 2))) & 0x0f) | (((zk_ld16(b + 2) >> (2 * ib)) & 3) << 4)) - 32;
}

// Four IQ4 levels from the nibbles at `shift` of the bytes of `v`, as signed bytes.
static inline uint zk_iq4_word(uint v, int shift) {
    uint r = 0;
    for (int b = 0; b < 4; ++b) r |= ((uint)(uchar)zk_iq4_values[(v >> (8 * b + shift)) & 0x0f]) << (8 * b);
    return r;
}

// --- one element (embedding rows) ---------------------------------------------------------
static inline float zk_deq_q4_0(ZkBytes row, int e) {
    ZkBytes b = row + (e / 32) * ZK_Q4_0_BYTES;
    return (float)(zk_nibble32(b + 2, e % 32) - 8) * zk_h2f(zk_ld16(b));
}
static inline float zk_deq_q4_1(ZkBytes row, int e) {
    ZkBytes b = row + (e / 32) * ZK_Q4_1_BYTES;
    return (float)zk_nibble32(b + 4, e % 32) * zk_h2f(zk_ld16(b)) + zk_h2f(zk_ld16(b + 2));
}
static inline float zk_deq_q5_0(ZkBytes row, int e) {
    ZkBytes b = row + (e / 32) * ZK_Q5_0_BYTES;
    const int j = e % 32, q = zk_nibble32(b + 6, j) | (int)((zk_ld32(b + 2) >> j) & 1u) << 4;
    return (float)(q - 16) * zk_h2f(zk_ld16(b));
}
static inline float zk_deq_q5_1(ZkBytes row, int e) {
    ZkBytes b = row + (e / 32) * ZK_Q5_1_BYTES;
    const int j = e % 32, q = zk_nibble32(b + 8, j) | (int)((zk_ld32(b + 4) >> j) & 1u) << 4;
    return (float)q * zk_h2f(zk_ld16(b)) + zk_h2f(zk_ld16(b + 2));
}
static inline float zk_deq_iq4_nl(ZkBytes row, int e) {
    ZkBytes b = row + (e / 32) * ZK_IQ4_NL_BYTES;
    return zk_h2f(zk_ld16(b)) * (float)zk_iq4_values[zk_nibble32(b + 2, e % 32)];
}
// Q2_K / Q3_K element i of a block: half n of 128, bit pair g, position l; scale 8n + 2g + l/16.
static inline float zk_deq_q2_k(ZkBytes row, int e) {
    ZkBytes b = row + (e / 256) * ZK_Q2_K_BYTES;
    const int i = e % 256, n = i / 128, g = (i % 128) / 32, l = i % 32;
    const int q = (b[16 + 32 * n + l] >> (2 * g)) & 3, sc = b[8 * n + 2 * g + l / 16];
    return zk_h2f(zk_ld16(b + 80)) * (float)(sc & 0x0f) * (float)q - zk_h2f(zk_ld16(b + 82)) * (float)(sc >> 4);
}
static inline float zk_deq_q3_k(ZkBytes row, int e) {
    ZkBytes b = row + (e / 256) * ZK_Q3_K_BYTES;
    const int i = e % 256, n = i / 128, g = (i % 128) / 32, l = i % 32;
    const int q = ((b[32 + 32 * n + l] >> (2 * g)) & 3) - (((b[l] >> (4 * n + g)) & 1) ? 0 : 4);
    return zk_h2f(zk_ld16(b + 108)) * (float)zk_scale_q3_k(b + 96, 8 * n + 2 * g + l / 16) * (float)q;
}
static inline float zk_deq_iq4_xs(ZkBytes row, int e) {
    ZkBytes b = row + (e / 256) * ZK_IQ4_XS_BYTES;
    const int i = e % 256, ib = i / 32;
    return zk_h2f(zk_ld16(b)) * (float)zk_scale_iq4_xs(b, ib) * (float)zk_iq4_values[zk_nibble32(b + 8 + 16 * ib, i % 32)];
}
static inline float zk_deq_bf16(ZkBytes row, int e) { return as_float(zk_ld16(row + 2 * e) << 16); }

// --- one block times one activation block --------------------------------------------------
// Sum of 32 unsigned 4-bit (+ fifth bit) quants times 32 signed activation quants.
static inline int zk_dot_nibbles(ZkBytes qs, uint qh, int five, ZkAnyBytes a) {
    int s = 0;
    for (int j = 0; j < 16; j += 4) {
        const uint v = zk_ld32(qs + j);
        uint lo = v & 0x0f0f0f0fu, hi = (v >> 4) & 0x0f0f0f0fu;
        if (five) {
            for (int b = 0; b < 4; ++b) {
                lo |= ((qh >> (j + b)) & 1u) << (8 * b + 4);
                hi |= ((qh >> (j + b + 16)) & 1u) << (8 * b + 4);
            }
        }
        s = zk_dot4_us(lo, zk_ld32(a + j), s);
        s = zk_dot4_us(hi, zk_ld32(a + 16 + j), s);
    }
    return s;
}
static inline int zk_sum32(ZkAnyBytes a) {
    int s = 0;
    for (int j = 0; j < 32; j += 4) s = zk_dot4_ss(0x01010101u, zk_ld32(a + j), s);
    return s;
}

static inline float zk_dot_q4_0(ZkBytes w, ZkAnyBytes a) {
    const int sumi = zk_dot_nibbles(w + 2, 0, 0, a + 2) - 8 * zk_sum32(a + 2);
    return (float)sumi * (zk_h2f(zk_ld16(w)) * zk_h2f(zk_ld16(a)));
}
static inline float zk_dot_q5_0(ZkBytes w, ZkAnyBytes a) {
    const int sumi = zk_dot_nibbles(w + 6, zk_ld32(w + 2), 1, a + 2) - 16 * zk_sum32(a + 2);
    return (float)sumi * (zk_h2f(zk_ld16(w)) * zk_h2f(zk_ld16(a)));
}
// The min term uses the activation block's stored s = fp16(d * sum(qs)), as ggml.
static inline float zk_dot_q4_1(ZkBytes w, ZkAnyBytes a) {
    const int sumi = zk_dot_nibbles(w + 4, 0, 0, a + 4);
    return (float)sumi * (zk_h2f(zk_ld16(w)) * zk_h2f(zk_ld16(a))) + zk_h2f(zk_ld16(w + 2)) * zk_h2f(zk_ld16(a + 2));
}
static inline float zk_dot_q5_1(ZkBytes w, ZkAnyBytes a) {
    const int sumi = zk_dot_nibbles(w + 8, zk_ld32(w + 4), 1, a + 4);
    return (float)sumi * (zk_h2f(zk_ld16(w)) * zk_h2f(zk_ld16(a))) + zk_h2f(zk_ld16(w + 2)) * zk_h2f(zk_ld16(a + 2));
}

// 16 IQ4 nibble pairs at qs against 32 activation quants.
static inline int zk_dot_iq4(ZkBytes qs, ZkAnyBytes a) {
    int s = 0;
    for (int j = 0; j < 16; j += 4) {
        const uint v = zk_ld32(qs + j);
        s = zk_dot4_ss(zk_iq4_word(v, 0), zk_ld32(a + j), s);
        s = zk_dot4_ss(zk_iq4_word(v, 4), zk_ld32(a + 16 + j), s);
    }
    return s;
}
static inline float zk_dot_iq4_nl(ZkBytes w, ZkAnyBytes a) {
    return (zk_h2f(zk_ld16(w)) * zk_h2f(zk_ld16(a))) * (float)zk_dot_iq4(w + 2, a + 2);
}
static inline float zk_dot_iq4_xs(ZkBytes w, ZkAnyBytes a) {
    const float d4d8 = zk_h2f(zk_ld16(w)) * zk_ldf32(a);
    float s = 0.0f;
    for (int ib = 0; ib < 8; ++ib)
        s += d4d8 * (float)zk_scale_iq4_xs(w, ib) * (float)zk_dot_iq4(w + 8 + 16 * ib, a + 4 + 32 * ib);
    return s;
}

// Q2_K x Q8_K: d*d8 * sum_j sc_j * dot_j - dmin*d8 * sum_j min_j * bsum_j.
static inline float zk_dot_q2_k(ZkBytes w, ZkAnyBytes a) {
    int summs = 0;
    for (int j = 0; j < 16; ++j) summs += (short)zk_ld16(a + 260 + 2 * j) * (w[j] >> 4);
    int isum = 0;
    for (int u = 0; u < 8; ++u) {  // 32 values: half n = u / 4, bit pair u % 4; scales 2u, 2u + 1
        ZkBytes q2 = w + 16 + 32 * (u / 4);
        ZkAnyBytes q8 = a + 4 + 32 * u;
        const int shift = 2 * (u % 4);
        int lo = 0, hi = 0;
        for (int l = 0; l < 16; l += 4) {
            lo = zk_dot4_us((zk_ld32(q2 + l) >> shift) & 0x03030303u, zk_ld32(q8 + l), lo);
            hi = zk_dot4_us((zk_ld32(q2 + 16 + l) >> shift) & 0x03030303u, zk_ld32(q8 + 16 + l), hi);
        }
        isum += (w[2 * u] & 0x0f) * lo + (w[2 * u + 1] & 0x0f) * hi;
    }
    const float d8 = zk_ldf32(a);
    const float dall = d8 * zk_h2f(zk_ld16(w + 80)), dmin = d8 * zk_h2f(zk_ld16(w + 82));
    return dall * (float)isum - dmin * (float)summs;
}

// Q3_K x Q8_K: d*d8 * sum_j (scale_j - 32) * sum((q - 4 * !hbit) * q8). The -4 is taken out
// of the byte products with the activation sums of each 16.
static inline float zk_dot_q3_k(ZkBytes w, ZkAnyBytes a) {
    int isum = 0;
    for (int u = 0; u < 8; ++u) {
        ZkBytes q3 = w + 32 + 32 * (u / 4);
        ZkAnyBytes q8 = a + 4 + 32 * u;
        const int shift = 2 * (u % 4);
        int lo = 0, hi = 0, slo = 0, shi = 0;
        for (int l = 0; l < 16; l += 4) {
            const uint vlo = ((zk_ld32(q3 + l) >> shift) & 0x03030303u) | (((zk_ld32(w + l) >> u) & 0x01010101u) << 2);
            const uint vhi = ((zk_ld32(q3 + 16 + l) >> shift) & 0x03030303u) | (((zk_ld32(w + 16 + l) >> u) & 0x01010101u) << 2);
            const uint ylo = zk_ld32(q8 + l), yhi = zk_ld32(q8 + 16 + l);
            lo = zk_dot4_us(vlo, ylo, lo);
            hi = zk_dot4_us(vhi, yhi, hi);
            slo = zk_dot4_ss(0x01010101u, ylo, slo);
            shi = zk_dot4_ss(0x01010101u, yhi, shi);
        }
        isum += zk_scale_q3_k(w + 96, 2 * u) * (lo - 4 * slo) + zk_scale_q3_k(w + 96, 2 * u + 1) * (hi - 4 * shi);
    }
    return zk_h2f(zk_ld16(w + 108)) * zk_ldf32(a) * (float)isum;
}

#endif  // ZK_QUANT_MORE_H
