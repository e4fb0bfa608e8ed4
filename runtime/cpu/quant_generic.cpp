// Portable row kernels: plain C++ with ggml's integer math per block (ggml-cpu/quants.c
// ggml_vec_dot_*_generic, MIT) — each block's integer dot product and its scaling are the
// same as ggml's; float partial sums are accumulated in a different order.
#include <array>
#include <memory>
#include <cstring>

#include "model/quant/blocks.h"
#include "model/quant/fp16.h"
#include "model/quant/k_scales.h"
#include "runtime/cpu/quant_kernels.h"

namespace zinc::cpu::kernels::generic {
namespace {

using namespace zinc::model;

// F16 -> F32 by table, as ggml's scalar path does (exact; the branchy conversion is slow).
const float* fp16Table() {
    static const auto table = [] {
        auto t = std::make_unique<std::array<float, 65536>>();
        for (uint32_t h = 0; h < 65536; ++h) (*t)[h] = fp16ToFp32(static_cast<uint16_t>(h));
        return t;
    }();
    return table->data();
}

// Eight float lanes so the compiler can keep them in vector registers without reassociating.
struct Lanes8 {
    float v[8] = {};
    float sum() const { return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7])); }
};

// Sum of a[i] * b[i] over 32 pairs of small integers, in int.
template <typename A, typename B>
int dot32(const A* a, const B* b) {
    int s = 0;
    for (int i = 0; i < 32; ++i) s += static_cast<int>(a[i]) * static_cast<int>(b[i]);
    return s;
}

}  // namespace

void matVecF32(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    const auto* a = static_cast<const float*>(act);
    forEachRow(w, wStride, rows, y, [&](const uint8_t* row) {
        const auto* x = reinterpret_cast<const float*>(row);
        Lanes8 acc;
        int64_t i = 0;
        for (; i + 8 <= k; i += 8)
            for (int l = 0; l < 8; ++l) acc.v[l] += x[i + l] * a[i + l];
        float s = acc.sum();
        for (; i < k; ++i) s += x[i] * a[i];
        return s;
    });
}

void matVecF16(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    const auto* a = static_cast<const uint16_t*>(act);
    const float* table = fp16Table();
    forEachRow(w, wStride, rows, y, [&](const uint8_t* row) {
        const auto* x = reinterpret_cast<const uint16_t*>(row);
        Lanes8 acc;
        int64_t i = 0;
        for (; i + 8 <= k; i += 8)
            for (int l = 0; l < 8; ++l) acc.v[l] += table[x[i + l]] * table[a[i + l]];
        float s = acc.sum();
        for (; i < k; ++i) s += table[x[i]] * table[a[i]];
        return s;
    });
}

void matVecBF16(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    const auto* a = static_cast<const uint16_t*>(act);
    forEachRow(w, wStride, rows, y, [&](const uint8_t* row) {
        const auto* x = reinterpret_cast<const uint16_t*>(row);
        Lanes8 acc;
        int64_t i = 0;
        for (; i + 8 <= k; i += 8)
            for (int l = 0; l < 8; ++l) acc.v[l] += bf16ToFp32(x[i + l]) * bf16ToFp32(a[i + l]);
        float s = acc.sum();
        for (; i < k; ++i) s += bf16ToFp32(x[i]) * bf16ToFp32(a[i]);
        return s;
    });
}

void matVecQ4_0(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    const auto* a = static_cast<const BlockQ8_0*>(act);
    const int64_t nb = k / kQK;
    forEachRow(w, wStride, rows, y, [&](const uint8_t* row) {
        const auto* x = reinterpret_cast<const BlockQ4_0*>(row);
        float s = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            int sumi = 0;
            for (int j = 0; j < kQK / 2; ++j) {
                sumi += ((x[b].qs[j] & 0x0f) - 8) * a[b].qs[j];
                sumi += ((x[b].qs[j] >> 4) - 8) * a[b].qs[j + kQK / 2];
            }
            s += static_cast<float>(sumi) * (fp16ToFp32(x[b].d) * fp16ToFp32(a[b].d));
        }
        return s;
    });
}

void matVecQ4_1(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    const auto* a = static_cast<const BlockQ8_1*>(act);
    const int64_t nb = k / kQK;
    forEachRow(w, wStride, rows, y, [&](const uint8_t* row) {
        const auto* x = reinterpret_cast<const BlockQ4_1*>(row);
        float s = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            int sumi = 0;
            for (int j = 0; j < kQK / 2; ++j) {
                sumi += (x[b].qs[j] & 0x0f) * a[b].qs[j];
                sumi += (x[b].qs[j] >> 4) * a[b].qs[j + kQK / 2];
            }
            // The min term uses the activation block's stored s = fp16(d * sum(qs)), as ggml.
            s += static_cast<float>(sumi) * (fp16ToFp32(x[b].d) * fp16ToFp32(a[b].d)) +
                 fp16ToFp32(x[b].m) * fp16ToFp32(a[b].s);
        }
        return s;
    });
}

namespace {
// Q5_0/Q5_1: expand 16 packed bytes + 32 high bits into 32 values 0..31.
void unpackQ5(const uint8_t* qs, const uint8_t* qhBytes, uint8_t* out) {
    uint32_t qh;
    std::memcpy(&qh, qhBytes, sizeof(qh));
    for (int j = 0; j < kQK / 2; ++j) {
        out[j] = static_cast<uint8_t>((qs[j] & 0x0f) | (((qh >> j) & 1u) << 4));
        out[j + kQK / 2] = static_cast<uint8_t>((qs[j] >> 4) | (((qh >> (j + kQK / 2)) & 1u) << 4));
    }
}
}  // namespace

void matVecQ5_0(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    const auto* a = static_cast<const BlockQ8_0*>(act);
    const int64_t nb = k / kQK;
    forEachRow(w, wStride, rows, y, [&](const uint8_t* row) {
        const auto* x = reinterpret_cast<const BlockQ5_0*>(row);
        float s = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            uint8_t q[kQK];
            unpackQ5(x[b].qs, x[b].qh, q);
            int sumi = 0;
            for (int j = 0; j < kQK; ++j) sumi += (q[j] - 16) * a[b].qs[j];
            s += static_cast<float>(sumi) * (fp16ToFp32(x[b].d) * fp16ToFp32(a[b].d));
        }
        return s;
    });
}

void matVecQ5_1(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    const auto* a = static_cast<const BlockQ8_1*>(act);
    const int64_t nb = k / kQK;
    forEachRow(w, wStride, rows, y, [&](const uint8_t* row) {
        const auto* x = reinterpret_cast<const BlockQ5_1*>(row);
        float s = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            uint8_t q[kQK];
            unpackQ5(x[b].qs, x[b].qh, q);
            const int sumi = dot32(q, a[b].qs);
            s += static_cast<float>(sumi) * (fp16ToFp32(x[b].d) * fp16ToFp32(a[b].d)) +
                 fp16ToFp32(x[b].m) * fp16ToFp32(a[b].s);
        }
        return s;
    });
}

void matVecQ8_0(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    const auto* a = static_cast<const BlockQ8_0*>(act);
    const int64_t nb = k / kQK;
    forEachRow(w, wStride, rows, y, [&](const uint8_t* row) {
        const auto* x = reinterpret_cast<const BlockQ8_0*>(row);
        float s = 0.0f;
        for (int64_t b = 0; b < nb; ++b)
            s += static_cast<float>(dot32(x[b].qs, a[b].qs)) * (fp16ToFp32(x[b].d) * fp16ToFp32(a[b].d));
        return s;
    });
}

namespace {
// Sum over the 8 sub-blocks of min[j] * (sum of the 32 activation quants of sub-block j).
int minTerm(const uint8_t mins[8], const BlockQ8_K& a) {
    int s = 0;
    for (int j = 0; j < 8; ++j) s += mins[j] * (a.bsums[2 * j] + a.bsums[2 * j + 1]);
    return s;
}

// Unsigned quant l of chunk c (low-nibble half, or high when `high`) of a Q4_K / Q5_K block.
// Q5_K adds a fifth bit: bit 2c (low half) or 2c + 1 (high half) of qh[l].
int nibbleQuant(const BlockQ4_K& x, int c, int l, bool high) {
    const uint8_t q = x.qs[32 * c + l];
    return high ? q >> 4 : q & 0x0f;
}
int nibbleQuant(const BlockQ5_K& x, int c, int l, bool high) {
    const uint8_t q = x.qs[32 * c + l];
    const int bit = (x.qh[l] >> (2 * c + (high ? 1 : 0))) & 1;
    return (high ? q >> 4 : q & 0x0f) | bit << 4;
}

// Q4_K / Q5_K x Q8_K per super-block: d*dy * sum_j scale_j * dot_j  -  dmin*dy * sum_j min_j * bsum_j.
template <class Block>
void matVecNibbleK(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    const auto* a = static_cast<const BlockQ8_K*>(act);
    const int64_t nb = k / kQKK;
    forEachRow(w, wStride, rows, y, [&](const uint8_t* row) {
        const auto* x = reinterpret_cast<const Block*>(row);
        float s = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            uint8_t sc[8], mn[8];
            unpackScaleMinK4(x[b].scales, sc, mn);
            int sumi = 0;
            for (int c = 0; c < 4; ++c) {
                const int8_t* q8 = a[b].qs + 64 * c;
                int lo = 0, hi = 0;
                for (int l = 0; l < 32; ++l) {
                    lo += nibbleQuant(x[b], c, l, false) * q8[l];
                    hi += nibbleQuant(x[b], c, l, true) * q8[l + 32];
                }
                sumi += sc[2 * c] * lo + sc[2 * c + 1] * hi;
            }
            s += fp16ToFp32(x[b].d) * a[b].d * static_cast<float>(sumi) -
                 fp16ToFp32(x[b].dmin) * a[b].d * static_cast<float>(minTerm(mn, a[b]));
        }
        return s;
    });
}
}  // namespace

void matVecQ4_K(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    matVecNibbleK<BlockQ4_K>(k, w, wStride, rows, act, y);
}

void matVecQ5_K(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    matVecNibbleK<BlockQ5_K>(k, w, wStride, rows, act, y);
}

// Q6_K x Q8_K per super-block: d*dy * sum over 16 sub-blocks of scale * sum((q - 32) * q8).
void matVecQ6_K(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    const auto* a = static_cast<const BlockQ8_K*>(act);
    const int64_t nb = k / kQKK;
    forEachRow(w, wStride, rows, y, [&](const uint8_t* row) {
        const auto* x = reinterpret_cast<const BlockQ6_K*>(row);
        float s = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            int sumi = 0;
            for (int h = 0; h < 2; ++h) {
                const uint8_t* ql = x[b].ql + 64 * h;
                const uint8_t* qh = x[b].qh + 32 * h;
                const int8_t* q8 = a[b].qs + 128 * h;
                const int8_t* sc = x[b].scales + 8 * h;
                for (int half = 0; half < 2; ++half) {  // l in [16*half, 16*half + 16): scale index +half
                    int g0 = 0, g1 = 0, g2 = 0, g3 = 0;
                    for (int l = 16 * half; l < 16 * half + 16; ++l) {
                        g0 += (((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32) * q8[l];
                        g1 += (((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32) * q8[l + 32];
                        g2 += (((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32) * q8[l + 64];
                        g3 += (((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32) * q8[l + 96];
                    }
                    sumi += sc[half] * g0 + sc[half + 2] * g1 + sc[half + 4] * g2 + sc[half + 6] * g3;
                }
            }
            s += fp16ToFp32(x[b].d) * a[b].d * static_cast<float>(sumi);
        }
        return s;
    });
}

}  // namespace zinc::cpu::kernels::generic
