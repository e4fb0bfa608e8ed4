// ggml block layouts (model/quant/blocks.h) read from raw bytes, one element dequantized
// with dequantize.cpp's formulas, and one block's dot product with an 8-bit activation block
// with quant_generic.cpp's integer math and float scaling.
#ifndef ZK_QUANT_H
#define ZK_QUANT_H
#include "zk_math.h"

#define ZK_Q8_0_BYTES 34   // d (half), qs[32]
#define ZK_Q4_K_BYTES 144  // d, dmin (halves), scales[12], qs[128]
#define ZK_Q5_K_BYTES 176  // d, dmin, scales[12], qh[32], qs[128]
#define ZK_Q6_K_BYTES 210  // ql[128], qh[64], scales[16] (int8), d
#define ZK_Q8_K_BYTES 292  // d (float), qs[256], bsums[16] (int16)

// Six-bit scale j and min j of a Q4_K / Q5_K block (ggml's get_scale_min_k4).
static inline void zk_scale_min_k4(ZkBytes scales, int j, int* sc, int* mn) {
    if (j < 4) {
        *sc = scales[j] & 63;
        *mn = scales[j + 4] & 63;
    } else {
        *sc = (scales[j + 4] & 0x0f) | ((scales[j - 4] >> 6) << 4);
        *mn = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
    }
}

// --- one element (embedding rows) ---------------------------------------------------------
static inline float zk_deq_q8_0(ZkBytes row, int e) {
    ZkBytes b = row + (e / 32) * ZK_Q8_0_BYTES;
    return (float)(char)b[2 + e % 32] * zk_h2f(zk_ld16(b));
}

static inline float zk_deq_q4_k(ZkBytes row, int e) {
    ZkBytes b = row + (e / 256) * ZK_Q4_K_BYTES;
    const int i = e % 256, c = i / 64, l = i % 32, high = (i / 32) & 1;
    int sc, mn;
    zk_scale_min_k4(b + 4, 2 * c + high, &sc, &mn);
    const float d = zk_h2f(zk_ld16(b)) * (float)sc, m = zk_h2f(zk_ld16(b + 2)) * (float)mn;
    const int q = high ? (b[16 + 32 * c + l] >> 4) : (b[16 + 32 * c + l] & 0x0f);
    return d * (float)q - m;
}

static inline float zk_deq_q5_k(ZkBytes row, int e) {
    ZkBytes b = row + (e / 256) * ZK_Q5_K_BYTES;
    const int i = e % 256, c = i / 64, l = i % 32, high = (i / 32) & 1;
    int sc, mn;
    zk_scale_min_k4(b + 4, 2 * c + high, &sc, &mn);
    const float d = zk_h2f(zk_ld16(b)) * (float)sc, m = zk_h2f(zk_ld16(b + 2)) * (float)mn;
    const int ql = b[48 + 32 * c + l];
    const int bit = (b[16 + l] >> (2 * c + high)) & 1;
    const int q = (high ? (ql >> 4) : (ql & 0x0f)) + (bit ? 16 : 0);
    return d * (float)q - m;
}

static inline float zk_deq_q6_k(ZkBytes row, int e) {
    ZkBytes b = row + (e / 256) * ZK_Q6_K_BYTES;
    const int i = e % 256, h = i / 128, g = (i % 128) / 32, l = i % 32;
    const int qlByte = b[64 * h + l + 32 * (g & 1)];
    const int low = g < 2 ? (qlByte & 0x0f) : (qlByte >> 4);
    const int top = (b[128 + 32 * h + l] >> (2 * g)) & 3;
    const int q = (low | (top << 4)) - 32;
    const int sc = (char)b[192 + 8 * h + l / 16 + 2 * g];
    return zk_h2f(zk_ld16(b + 208)) * (float)sc * (float)q;
}

// --- one block times one activation block --------------------------------------------------
// Q8_0 x Q8_0: (float)sum(q*q8) * (d * d8).
static inline float zk_dot_q8_0(ZkBytes w, ZkAnyBytes a) {
    int sumi = 0;
    for (int j = 0; j < 32; j += 4) sumi = zk_dot4_ss(zk_ld32(w + 2 + j), zk_ld32(a + 2 + j), sumi);
    return (float)sumi * (zk_h2f(zk_ld16(w)) * zk_h2f(zk_ld16(a)));
}

// Sum over the 8 sub-blocks of min_j * (bsum[2j] + bsum[2j+1]) of a Q8_K block.
static inline int zk_min_term_k4(ZkBytes scales, ZkAnyBytes a) {
    int s = 0;
    for (int j = 0; j < 8; ++j) {
        int sc, mn;
        zk_scale_min_k4(scales, j, &sc, &mn);
        const int b0 = (short)zk_ld16(a + 260 + 4 * j), b1 = (short)zk_ld16(a + 262 + 4 * j);
        s += mn * (b0 + b1);
    }
    return s;
}

// Q4_K x Q8_K: d*d8*sum_j(scale_j * dot_j) - dmin*d8*sum_j(min_j * bsum_j).
static inline float zk_dot_q4_k(ZkBytes w, ZkAnyBytes a) {
    int sumi = 0;
    for (int c = 0; c < 4; ++c) {
        ZkBytes q = w + 16 + 32 * c;
        ZkAnyBytes q8 = a + 4 + 64 * c;
        uint v[8];  // the chunk's 32 quant bytes, loaded once (clang otherwise reloads a word of each 16)
        for (int l = 0; l < 8; ++l) v[l] = zk_ld32(q + 4 * l);
        int lo = 0, hi = 0;
        for (int l = 0; l < 8; ++l) {
            lo = zk_dot4_us(v[l] & 0x0f0f0f0fu, zk_ld32(q8 + 4 * l), lo);
            hi = zk_dot4_us((v[l] >> 4) & 0x0f0f0f0fu, zk_ld32(q8 + 32 + 4 * l), hi);
        }
        int sc0, mn0, sc1, mn1;
        zk_scale_min_k4(w + 4, 2 * c, &sc0, &mn0);
        zk_scale_min_k4(w + 4, 2 * c + 1, &sc1, &mn1);
        sumi += sc0 * lo + sc1 * hi;
    }
    const float d8 = zk_ldf32(a);
    return zk_h2f(zk_ld16(w)) * d8 * (float)sumi - zk_h2f(zk_ld16(w + 2)) * d8 * (float)zk_min_term_k4(w + 4, a);
}

// Q5_K x Q8_K: as Q4_K with the fifth bit of chunk c from bits 2c / 2c+1 of qh.
static inline float zk_dot_q5_k(ZkBytes w, ZkAnyBytes a) {
    int sumi = 0;
    for (int c = 0; c < 4; ++c) {
        ZkBytes ql = w + 48 + 32 * c;
        ZkAnyBytes q8 = a + 4 + 64 * c;
        int lo = 0, hi = 0;
        uint v8[8];  // the chunk's low nibbles, loaded once (as in zk_dot_q4_k)
        for (int l = 0; l < 8; ++l) v8[l] = zk_ld32(ql + 4 * l);
        for (int l = 0; l < 32; l += 4) {
            const uint v = v8[l / 4], h = zk_ld32(w + 16 + l);
            const uint vlo = (v & 0x0f0f0f0fu) | (((h >> (2 * c)) & 0x01010101u) << 4);
            const uint vhi = ((v >> 4) & 0x0f0f0f0fu) | (((h >> (2 * c + 1)) & 0x01010101u) << 4);
            lo = zk_dot4_us(vlo, zk_ld32(q8 + l), lo);
            hi = zk_dot4_us(vhi, zk_ld32(q8 + 32 + l), hi);
        }
        int sc0, mn0, sc1, mn1;
        zk_scale_min_k4(w + 4, 2 * c, &sc0, &mn0);
        zk_scale_min_k4(w + 4, 2 * c + 1, &sc1, &mn1);
        sumi += sc0 * lo + sc1 * hi;
    }
    const float d8 = zk_ldf32(a);
    return zk_h2f(zk_ld16(w)) * d8 * (float)sumi - zk_h2f(zk_ld16(w + 2)) * d8 * (float)zk_min_term_k4(w + 4, a);
}

// Q6_K x Q8_K: d*d8 * sum over 16 sub-blocks of scale * sum((q - 32) * q8). The -32 is
// taken out of the byte products: sum((q - 32) * q8) = sum(q * q8) - 32 * sum(q8).
static inline float zk_dot_q6_k(ZkBytes w, ZkAnyBytes a) {
    int sumi = 0;
    for (int h = 0; h < 2; ++h) {
        ZkBytes ql = w + 64 * h;
        ZkBytes qh = w + 128 + 32 * h;
        ZkAnyBytes q8 = a + 4 + 128 * h;
        ZkBytes sc = w + 192 + 8 * h;
        uint qlv[16], qhv[8];  // this half's quant bytes, loaded once (as in zk_dot_q4_k)
        for (int i = 0; i < 16; ++i) qlv[i] = zk_ld32(ql + 4 * i);
        for (int i = 0; i < 8; ++i) qhv[i] = zk_ld32(qh + 4 * i);
        for (int half_ = 0; half_ < 2; ++half_) {
            int g0 = 0, g1 = 0, g2 = 0, g3 = 0, s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (int l = 16 * half_; l < 16 * half_ + 16; l += 4) {
                const uint a0 = qlv[l / 4], a1 = qlv[l / 4 + 8], hb = qhv[l / 4];
                const uint u0 = (a0 & 0x0f0f0f0fu) | ((hb & 0x03030303u) << 4);
                const uint u1 = (a1 & 0x0f0f0f0fu) | (((hb >> 2) & 0x03030303u) << 4);
                const uint u2 = ((a0 >> 4) & 0x0f0f0f0fu) | (((hb >> 4) & 0x03030303u) << 4);
                const uint u3 = ((a1 >> 4) & 0x0f0f0f0fu) | (((hb >> 6) & 0x03030303u) << 4);
                const uint y0 = zk_ld32(q8 + l), y1 = zk_ld32(q8 + l + 32), y2 = zk_ld32(q8 + l + 64),
                           y3 = zk_ld32(q8 + l + 96);
                g0 = zk_dot4_us(u0, y0, g0);
                g1 = zk_dot4_us(u1, y1, g1);
                g2 = zk_dot4_us(u2, y2, g2);
                g3 = zk_dot4_us(u3, y3, g3);
                s0 = zk_dot4_ss(0x01010101u, y0, s0);
                s1 = zk_dot4_ss(0x01010101u, y1, s1);
                s2 = zk_dot4_ss(0x01010101u, y2, s2);
                s3 = zk_dot4_ss(0x01010101u, y3, s3);
            }
            sumi += (int)(char)sc[half_] * (g0 - 32 * s0) + (int)(char)sc[half_ + 2] * (g1 - 32 * s1) +
                    (int)(char)sc[half_ + 4] * (g2 - 32 * s2) + (int)(char)sc[half_ + 6] * (g3 - 32 * s3);
        }
    }
    return zk_h2f(zk_ld16(w + 208)) * zk_ldf32(a) * (float)sumi;
}

#endif  // ZK_QUANT_H
