#include "model/quant/dequantize.h"

#include <cstring>
#include <string>

#include "model/model_error.h"
#include "model/quant/blocks.h"
#include "model/quant/fp16.h"
#include "model/quant/k_scales.h"

namespace zinc::model {
namespace {

// Each function mirrors ggml's dequantize_row_<type>: the same products in the same order,
// so results are bit-identical (this file is compiled without FMA contraction).

void dequantizeQ4_0(const BlockQ4_0* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFp32(x[i].d);
        for (int j = 0; j < kQK / 2; ++j) {
            y[j] = static_cast<float>((x[i].qs[j] & 0x0f) - 8) * d;
            y[j + kQK / 2] = static_cast<float>((x[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void dequantizeQ4_1(const BlockQ4_1* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFp32(x[i].d);
        const float m = fp16ToFp32(x[i].m);
        for (int j = 0; j < kQK / 2; ++j) {
            y[j] = static_cast<float>(x[i].qs[j] & 0x0f) * d + m;
            y[j + kQK / 2] = static_cast<float>(x[i].qs[j] >> 4) * d + m;
        }
    }
}

// Q5_x: bit j of qh is the fifth bit of element j (elements 0..15 from the low nibbles,
// 16..31 from the high nibbles).
inline int fifthBit(uint32_t qh, int element) { return static_cast<int>((qh >> element) & 1u) << 4; }

void dequantizeQ5_0(const BlockQ5_0* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFp32(x[i].d);
        uint32_t qh;
        std::memcpy(&qh, x[i].qh, sizeof(qh));
        for (int j = 0; j < kQK / 2; ++j) {
            const int x0 = ((x[i].qs[j] & 0x0f) | fifthBit(qh, j)) - 16;
            const int x1 = ((x[i].qs[j] >> 4) | fifthBit(qh, j + kQK / 2)) - 16;
            y[j] = static_cast<float>(x0) * d;
            y[j + kQK / 2] = static_cast<float>(x1) * d;
        }
    }
}

void dequantizeQ5_1(const BlockQ5_1* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFp32(x[i].d);
        const float m = fp16ToFp32(x[i].m);
        uint32_t qh;
        std::memcpy(&qh, x[i].qh, sizeof(qh));
        for (int j = 0; j < kQK / 2; ++j) {
            const int x0 = (x[i].qs[j] & 0x0f) | fifthBit(qh, j);
            const int x1 = (x[i].qs[j] >> 4) | fifthBit(qh, j + kQK / 2);
            y[j] = static_cast<float>(x0) * d + m;
            y[j + kQK / 2] = static_cast<float>(x1) * d + m;
        }
    }
}

void dequantizeQ8_0(const BlockQ8_0* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFp32(x[i].d);
        for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(x[i].qs[j]) * d;
    }
}

void dequantizeQ8_1(const BlockQ8_1* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFp32(x[i].d);
        for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(x[i].qs[j]) * d;
    }
}

// Q4_K: 4 chunks of 64 elements; chunk c uses qs[32c..32c+31], low nibbles are sub-block 2c,
// high nibbles sub-block 2c+1. Weight = (d * scale) * q - (dmin * min).
void dequantizeQ4_K(const BlockQ4_K* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFp32(x[i].d);
        const float dmin = fp16ToFp32(x[i].dmin);
        uint8_t sc[8], mn[8];
        unpackScaleMinK4(x[i].scales, sc, mn);
        const uint8_t* q = x[i].qs;
        for (int c = 0; c < 4; ++c, q += 32) {
            const float d1 = d * static_cast<float>(sc[2 * c]), m1 = dmin * static_cast<float>(mn[2 * c]);
            const float d2 = d * static_cast<float>(sc[2 * c + 1]), m2 = dmin * static_cast<float>(mn[2 * c + 1]);
            for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0x0f) - m1;
            for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
        }
    }
}

// Q5_K: as Q4_K, plus a fifth bit from qh[l]: bit 2c for the low nibble of chunk c, bit
// 2c+1 for the high nibble.
void dequantizeQ5_K(const BlockQ5_K* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFp32(x[i].d);
        const float dmin = fp16ToFp32(x[i].dmin);
        uint8_t sc[8], mn[8];
        unpackScaleMinK4(x[i].scales, sc, mn);
        const uint8_t* ql = x[i].qs;
        const uint8_t* qh = x[i].qh;
        for (int c = 0; c < 4; ++c, ql += 32) {
            const float d1 = d * static_cast<float>(sc[2 * c]), m1 = dmin * static_cast<float>(mn[2 * c]);
            const float d2 = d * static_cast<float>(sc[2 * c + 1]), m2 = dmin * static_cast<float>(mn[2 * c + 1]);
            const uint8_t lowBit = static_cast<uint8_t>(1u << (2 * c)), highBit = static_cast<uint8_t>(2u << (2 * c));
            for (int l = 0; l < 32; ++l)
                *y++ = d1 * static_cast<float>((ql[l] & 0x0f) + ((qh[l] & lowBit) ? 16 : 0)) - m1;
            for (int l = 0; l < 32; ++l)
                *y++ = d2 * static_cast<float>((ql[l] >> 4) + ((qh[l] & highBit) ? 16 : 0)) - m2;
        }
    }
}

// Q6_K: two halves of 128. In half h, element 32g + l (g = 0..3, l = 0..31) takes its low 4
// bits from ql[64h + l + 32(g&1)] (low nibble for g < 2, high nibble for g >= 2) and its top
// 2 bits from bits 2g..2g+1 of qh[32h + l]; value = q - 32; scale index 8h + 2g + l/16.
void dequantizeQ6_K(const BlockQ6_K* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFp32(x[i].d);
        const uint8_t* ql = x[i].ql;
        const uint8_t* qh = x[i].qh;
        const int8_t* sc = x[i].scales;
        for (int h = 0; h < 2; ++h, y += 128, ql += 64, qh += 32, sc += 8) {
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                const int q1 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
                y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
                y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
                y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
            }
        }
    }
}

// Q2_K: two halves of 128; in half n, element 32j + l (j = 0..3) is bits 2j..2j+1 of
// qs[32n + l]; sub-block (scale index) 8n + 2j + l / 16. Weight = d*sc * q - dmin*min.
void dequantizeQ2_K(const BlockQ2_K* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFp32(x[i].d);
        const float dmin = fp16ToFp32(x[i].dmin);
        const uint8_t* q = x[i].qs;
        int is = 0;
        for (int n = 0; n < kQKK; n += 128, q += 32) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int part = 0; part < 2; ++part) {
                    const uint8_t sc = x[i].scales[is++];
                    const float dl = d * static_cast<float>(sc & 0x0f), ml = dmin * static_cast<float>(sc >> 4);
                    for (int l = 16 * part; l < 16 * part + 16; ++l)
                        *y++ = dl * static_cast<float>((q[l] >> shift) & 3) - ml;
                }
            }
        }
    }
}

// Q3_K: as Q2_K's bit layout, with bit (4n + j) of hmask[l] as a third bit (clear: -4) and
// signed scales (unpacked - 32).
void dequantizeQ3_K(const BlockQ3_K* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFp32(x[i].d);
        int8_t scales[16];
        unpackScalesQ3K(x[i].scales, scales);
        const uint8_t* q = x[i].qs;
        const uint8_t* hm = x[i].hmask;
        uint8_t m = 1;
        int is = 0;
        for (int n = 0; n < kQKK; n += 128, q += 32) {
            for (int shift = 0; shift < 8; shift += 2, m = static_cast<uint8_t>(m << 1)) {
                for (int part = 0; part < 2; ++part) {
                    const float dl = d * static_cast<float>(scales[is++] - 32);
                    for (int l = 16 * part; l < 16 * part + 16; ++l)
                        *y++ = dl * static_cast<float>(((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4));
                }
            }
        }
    }
}

void dequantizeIQ4_NL(const BlockIQ4_NL* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFp32(x[i].d);
        for (int j = 0; j < kQK / 2; ++j) {
            y[j] = d * static_cast<float>(kIq4nlValues[x[i].qs[j] & 0x0f]);
            y[j + kQK / 2] = d * static_cast<float>(kIq4nlValues[x[i].qs[j] >> 4]);
        }
    }
}

void dequantizeIQ4_XS(const BlockIQ4_XS* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFp32(x[i].d);
        const uint8_t* qs = x[i].qs;
        for (int ib = 0; ib < kQKK / 32; ++ib, y += 32, qs += 16) {
            const int ls = ((x[i].scalesL[ib / 2] >> 4 * (ib % 2)) & 0x0f) | (((x[i].scalesH >> 2 * ib) & 3) << 4);
            const float dl = d * static_cast<float>(ls - 32);
            for (int j = 0; j < 16; ++j) {
                y[j] = dl * static_cast<float>(kIq4nlValues[qs[j] & 0x0f]);
                y[j + 16] = dl * static_cast<float>(kIq4nlValues[qs[j] >> 4]);
            }
        }
    }
}

void dequantizeQ8_K(const BlockQ8_K* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQKK) {
        for (int j = 0; j < kQKK; ++j) y[j] = x[i].d * static_cast<float>(x[i].qs[j]);
    }
}

}  // namespace

void dequantizeRow(GgmlType type, const void* src, float* dst, int64_t n) {
    const auto& traits = traitsOf(type);
    if (n < 0 || n % traits.blockElems != 0)
        throw ModelError("dequantizeRow: " + std::to_string(n) + " elements is not a whole number of " +
                         std::string(traits.name) + " blocks");
    const int64_t nb = n / traits.blockElems;
    switch (type) {
        case GgmlType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
        case GgmlType::F16: {
            const auto* h = static_cast<const uint16_t*>(src);
            for (int64_t i = 0; i < n; ++i) dst[i] = fp16ToFp32(h[i]);
            return;
        }
        case GgmlType::BF16: {
            const auto* h = static_cast<const uint16_t*>(src);
            for (int64_t i = 0; i < n; ++i) dst[i] = bf16ToFp32(h[i]);
            return;
        }
        case GgmlType::Q4_0: dequantizeQ4_0(static_cast<const BlockQ4_0*>(src), dst, nb); return;
        case GgmlType::Q4_1: dequantizeQ4_1(static_cast<const BlockQ4_1*>(src), dst, nb); return;
        case GgmlType::Q5_0: dequantizeQ5_0(static_cast<const BlockQ5_0*>(src), dst, nb); return;
        case GgmlType::Q5_1: dequantizeQ5_1(static_cast<const BlockQ5_1*>(src), dst, nb); return;
        case GgmlType::Q8_0: dequantizeQ8_0(static_cast<const BlockQ8_0*>(src), dst, nb); return;
        case GgmlType::Q8_1: dequantizeQ8_1(static_cast<const BlockQ8_1*>(src), dst, nb); return;
        case GgmlType::Q4_K: dequantizeQ4_K(static_cast<const BlockQ4_K*>(src), dst, nb); return;
        case GgmlType::Q5_K: dequantizeQ5_K(static_cast<const BlockQ5_K*>(src), dst, nb); return;
        case GgmlType::Q6_K: dequantizeQ6_K(static_cast<const BlockQ6_K*>(src), dst, nb); return;
        case GgmlType::Q2_K: dequantizeQ2_K(static_cast<const BlockQ2_K*>(src), dst, nb); return;
        case GgmlType::Q3_K: dequantizeQ3_K(static_cast<const BlockQ3_K*>(src), dst, nb); return;
        case GgmlType::IQ4_NL: dequantizeIQ4_NL(static_cast<const BlockIQ4_NL*>(src), dst, nb); return;
        case GgmlType::IQ4_XS: dequantizeIQ4_XS(static_cast<const BlockIQ4_XS*>(src), dst, nb); return;
        case GgmlType::Q8_K: dequantizeQ8_K(static_cast<const BlockQ8_K*>(src), dst, nb); return;
        default: break;
    }
    throw ModelError("dequantizeRow: cannot dequantize tensor type " + std::string(traits.name));
}

}  // namespace zinc::model
