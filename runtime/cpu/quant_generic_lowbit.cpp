// Portable row kernels of the low-bit types, with ggml's integer math per block
// (ggml-cpu/quants.c ggml_vec_dot_{q2_K,q3_K}_q8_K_generic, ggml_vec_dot_iq4_{nl,xs}_*_generic,
// MIT): Q2_K, Q3_K and IQ4_XS against Q8_K activations, IQ4_NL against Q8_0. Each block's
// integer sum is ggml's; float partial sums are accumulated in a different order. There are
// no AVX2 versions: quant_dot.cpp falls back to these.
#include "model/quant/blocks.h"
#include "model/quant/fp16.h"
#include "model/quant/k_scales.h"
#include "runtime/cpu/quant_kernels.h"

namespace zinc::cpu::kernels::generic {
namespace {

using namespace zinc::model;

// 16 nibble-indexed IQ4 levels of one 32-weight run (low nibbles: first 16, high: last 16)
// against 32 activation quants.
int dotIq4(const uint8_t* qs, const int8_t* q8) {
    int s = 0;
    for (int j = 0; j < 16; ++j)
        s += q8[j] * kIq4nlValues[qs[j] & 0x0f] + q8[j + 16] * kIq4nlValues[qs[j] >> 4];
    return s;
}

}  // namespace

// Q2_K x Q8_K: d*dy * sum_j sc_j * dot_j  -  dmin*dy * sum_j min_j * bsum_j over 16 sub-blocks.
void matVecQ2_K(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    const auto* a = static_cast<const BlockQ8_K*>(act);
    const int64_t nb = k / kQKK;
    forEachRow(w, wStride, rows, y, [&](const uint8_t* row) {
        const auto* x = reinterpret_cast<const BlockQ2_K*>(row);
        float s = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t* sc = x[b].scales;
            int summs = 0;
            for (int j = 0; j < 16; ++j) summs += a[b].bsums[j] * (sc[j] >> 4);
            const int8_t* q8 = a[b].qs;
            const uint8_t* q2 = x[b].qs;
            int isum = 0, is = 0;
            for (int n = 0; n < 2; ++n, q2 += 32) {
                for (int shift = 0; shift < 8; shift += 2, q8 += 32) {
                    for (int part = 0; part < 2; ++part) {
                        int sub = 0;
                        for (int l = 16 * part; l < 16 * part + 16; ++l) sub += q8[l] * ((q2[l] >> shift) & 3);
                        isum += (sc[is++] & 0x0f) * sub;
                    }
                }
            }
            const float dall = a[b].d * fp16ToFp32(x[b].d);
            const float dmin = a[b].d * fp16ToFp32(x[b].dmin);
            s += dall * static_cast<float>(isum) - dmin * static_cast<float>(summs);
        }
        return s;
    });
}

// Q3_K x Q8_K: d*dy * sum_j (scale_j - 32) * dot_j, quants 0..3 minus 4 where the hmask bit is clear.
void matVecQ3_K(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    const auto* a = static_cast<const BlockQ8_K*>(act);
    const int64_t nb = k / kQKK;
    forEachRow(w, wStride, rows, y, [&](const uint8_t* row) {
        const auto* x = reinterpret_cast<const BlockQ3_K*>(row);
        float s = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            int8_t scales[16];
            unpackScalesQ3K(x[b].scales, scales);
            const int8_t* q8 = a[b].qs;
            const uint8_t* q3 = x[b].qs;
            const uint8_t* hm = x[b].hmask;
            uint8_t m = 1;
            int isum = 0, is = 0;
            for (int n = 0; n < 2; ++n, q3 += 32) {
                for (int shift = 0; shift < 8; shift += 2, q8 += 32, m = static_cast<uint8_t>(m << 1)) {
                    for (int part = 0; part < 2; ++part) {
                        int sub = 0;
                        for (int l = 16 * part; l < 16 * part + 16; ++l)
                            sub += q8[l] * (((q3[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4));
                        isum += (scales[is++] - 32) * sub;
                    }
                }
            }
            s += fp16ToFp32(x[b].d) * a[b].d * static_cast<float>(isum);
        }
        return s;
    });
}

void matVecIQ4_NL(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    const auto* a = static_cast<const BlockQ8_0*>(act);
    const int64_t nb = k / kQK;
    forEachRow(w, wStride, rows, y, [&](const uint8_t* row) {
        const auto* x = reinterpret_cast<const BlockIQ4_NL*>(row);
        float s = 0.0f;
        for (int64_t b = 0; b < nb; ++b)
            s += (fp16ToFp32(x[b].d) * fp16ToFp32(a[b].d)) * static_cast<float>(dotIq4(x[b].qs, a[b].qs));
        return s;
    });
}

// IQ4_XS x Q8_K: per sub-block of 32, d*dy * (ls - 32) * dot.
void matVecIQ4_XS(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    const auto* a = static_cast<const BlockQ8_K*>(act);
    const int64_t nb = k / kQKK;
    forEachRow(w, wStride, rows, y, [&](const uint8_t* row) {
        const auto* x = reinterpret_cast<const BlockIQ4_XS*>(row);
        float s = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            const float d4d8 = fp16ToFp32(x[b].d) * a[b].d;
            float block = 0.0f;  // a block's sum first, as the kfd kernel adds it
            for (int ib = 0; ib < kQKK / 32; ++ib) {
                const int ls = ((x[b].scalesL[ib / 2] >> 4 * (ib % 2)) & 0x0f) | (((x[b].scalesH >> 2 * ib) & 3) << 4);
                block += d4d8 * static_cast<float>(ls - 32) * static_cast<float>(dotIq4(x[b].qs + 16 * ib, a[b].qs + 32 * ib));
            }
            s += block;
        }
        return s;
    });
}

}  // namespace zinc::cpu::kernels::generic
