// AVX2 row kernels for the K-quants (Q4_K, Q5_K, Q6_K) against Q8_K activations. Integer
// math per super-block is ggml's (ggml-cpu/arch/x86/quants.c ggml_vec_dot_q{4,5,6}_K_q8_K,
// MIT): maddubs of the unsigned quants with the int8 activations, madd with the sub-block
// scales, and the mins (Q4_K/Q5_K) or the -32 offset (Q6_K) applied through the
// activation's bsums. The float accumulation order differs from ggml's.
#include "model/quant/blocks.h"
#include "runtime/cpu/quant_avx2_common.h"
#include "runtime/cpu/quant_kernels.h"

namespace zinc::cpu::kernels::avx2 {
namespace {

using model::BlockQ4_K;
using model::BlockQ5_K;
using model::BlockQ6_K;
using model::BlockQ8_K;
using model::kQKK;

// Q4_K/Q5_K scales and mins (see model/quant/k_scales.h) as 16 int16: scales 0..7, mins 0..7.
inline __m256i unpackScalesMins(const uint8_t* packed) {
    uint32_t u[3];
    __builtin_memcpy(u, packed, sizeof(u));
    const uint32_t low6 = 0x3f3f3f3fu, low4 = 0x0f0f0f0fu, low2 = 0x03030303u;
    const uint32_t sc0 = u[0] & low6, sc1 = (u[2] & low4) | (((u[0] >> 6) & low2) << 4);
    const uint32_t mn0 = u[1] & low6, mn1 = ((u[2] >> 4) & low4) | (((u[1] >> 6) & low2) << 4);
    return _mm256_cvtepu8_epi16(_mm_set_epi32(static_cast<int>(mn1), static_cast<int>(mn0),
                                              static_cast<int>(sc1), static_cast<int>(sc0)));
}

// Broadcasts int16 element e of each 128-bit lane to the whole lane.
inline __m256i broadcastI16(__m256i v, int e) {
    return _mm256_shuffle_epi8(v, _mm256_set1_epi16(static_cast<int16_t>(((2 * e + 1) << 8) | (2 * e))));
}

// Sums of the activation quants per 32-element sub-block (bsums come per 16).
inline __m128i subBlockSums32(const BlockQ8_K& a) {
    const __m256i bs = load256(a.bsums);
    return _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
}

// acc += d * sumi - dmin * (sum_j min_j * subBlockSum_j), all per row.
inline __m256 addSuperBlock(__m256 acc, float d, __m256i sumi, float dmin, __m256i scalesMins, __m128i subSums) {
    const __m128i minProducts = _mm_madd_epi16(_mm256_extracti128_si256(scalesMins, 1), subSums);
    const __m256 minTerm = _mm256_set_m128(_mm_setzero_ps(), _mm_cvtepi32_ps(minProducts));
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    return _mm256_fnmadd_ps(_mm256_set1_ps(dmin), minTerm, acc);
}

// Brings bit n (0..7) of every byte to bit 4 (other bits are garbage; mask with 0x10).
inline __m256i bitToFour(__m256i v, int n) {
    if (n < 4) return _mm256_slli_epi16(v, 4 - n);
    if (n > 4) return _mm256_srli_epi16(v, n - 4);
    return v;
}

template <int R>
void rowsQ4_K(const uint8_t* w, size_t stride, int64_t nb, const BlockQ8_K* act, float* y) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const BlockQ8_K& a = act[b];
        const __m128i subSums = subBlockSums32(a);
        for (int r = 0; r < R; ++r) {
            const auto* x = reinterpret_cast<const BlockQ4_K*>(w + r * stride) + b;
            prefetchAhead<144>(x);
            const __m256i scalesMins = unpackScalesMins(x->scales);
            const __m256i scales = _mm256_permute2x128_si256(scalesMins, scalesMins, 0x00);
            __m256i sumi = _mm256_setzero_si256();
#pragma GCC unroll 4
            for (int c = 0; c < 4; ++c) {
                const __m256i q4 = load256(x->qs + 32 * c);
                const __m256i lo = _mm256_and_si256(q4, m4);
                const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q4, 4), m4);
                const __m256i pLo = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load256(a.qs + 64 * c)),
                                                      broadcastI16(scales, 2 * c));
                const __m256i pHi = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load256(a.qs + 64 * c + 32)),
                                                      broadcastI16(scales, 2 * c + 1));
                sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(pLo, pHi));
            }
            acc[r] = addSuperBlock(acc[r], halfToFloat(x->d) * a.d, sumi, halfToFloat(x->dmin) * a.d, scalesMins,
                                   subSums);
        }
    }
    storeRowSums(acc, R, y);
}

// Q5_K: the fifth bit of element 32c + l (low nibbles, c = chunk) is bit 2c of qh[l]; of
// the high-nibble element 32c + 32 + l, bit 2c + 1.
template <int R>
void rowsQ5_K(const uint8_t* w, size_t stride, int64_t nb, const BlockQ8_K* act, float* y) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m256i bit4 = _mm256_set1_epi8(0x10);
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const BlockQ8_K& a = act[b];
        const __m128i subSums = subBlockSums32(a);
        for (int r = 0; r < R; ++r) {
            const auto* x = reinterpret_cast<const BlockQ5_K*>(w + r * stride) + b;
            prefetchAhead<176>(x);
            const __m256i scalesMins = unpackScalesMins(x->scales);
            const __m256i scales = _mm256_permute2x128_si256(scalesMins, scalesMins, 0x00);
            const __m256i qh = load256(x->qh);
            __m256i sumi = _mm256_setzero_si256();
#pragma GCC unroll 4
            for (int c = 0; c < 4; ++c) {
                const __m256i q4 = load256(x->qs + 32 * c);
                const __m256i lo = _mm256_or_si256(_mm256_and_si256(q4, m4), _mm256_and_si256(bitToFour(qh, 2 * c), bit4));
                const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q4, 4), m4),
                                                   _mm256_and_si256(bitToFour(qh, 2 * c + 1), bit4));
                const __m256i pLo = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load256(a.qs + 64 * c)),
                                                      broadcastI16(scales, 2 * c));
                const __m256i pHi = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load256(a.qs + 64 * c + 32)),
                                                      broadcastI16(scales, 2 * c + 1));
                sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(pLo, pHi));
            }
            acc[r] = addSuperBlock(acc[r], halfToFloat(x->d) * a.d, sumi, halfToFloat(x->dmin) * a.d, scalesMins,
                                   subSums);
        }
    }
    storeRowSums(acc, R, y);
}

// Q6_K: in half h, group g (32 elements 128h + 32g + l) takes low bits from ql[64h + 32(g&1)
// + l] (low nibble for g < 2, high for g >= 2) and bits 2g..2g+1 of qh[32h + l]. The quants
// are used unsigned (0..63) and the -32 comes back as 32 * sum_s scale_s * bsum_s.
template <int R>
void rowsQ6_K(const uint8_t* w, size_t stride, int64_t nb, const BlockQ8_K* act, float* y) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m256i m2 = _mm256_set1_epi8(0x03);
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const BlockQ8_K& a = act[b];
        const __m256i bsums = load256(a.bsums);
        for (int r = 0; r < R; ++r) {
            const auto* x = reinterpret_cast<const BlockQ6_K*>(w + r * stride) + b;
            prefetchAhead<210>(x);
            // 16 int16 scales: lane 0 = sub-blocks 0..7 (half 0), lane 1 = 8..15 (half 1).
            const __m256i scales = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x->scales)));
            __m256i sumi = _mm256_slli_epi32(_mm256_madd_epi16(scales, bsums), 5);
            sumi = _mm256_sub_epi32(_mm256_setzero_si256(), sumi);
#pragma GCC unroll 2
            for (int h = 0; h < 2; ++h) {
                // Both lanes = this half's 8 scales; group g uses sub-blocks 2g (lane 0) and 2g+1 (lane 1).
                const __m256i halfScales = h == 0 ? _mm256_permute2x128_si256(scales, scales, 0x00)
                                                  : _mm256_permute2x128_si256(scales, scales, 0x11);
                const __m256i ql0 = load256(x->ql + 64 * h);
                const __m256i ql1 = load256(x->ql + 64 * h + 32);
                const __m256i qh = load256(x->qh + 32 * h);
                const __m256i q[4] = {
                    _mm256_or_si256(_mm256_and_si256(ql0, m4), _mm256_slli_epi16(_mm256_and_si256(qh, m2), 4)),
                    _mm256_or_si256(_mm256_and_si256(ql1, m4),
                                    _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), m2), 4)),
                    _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4),
                                    _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), m2), 4)),
                    _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                                    _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), m2), 4)),
                };
#pragma GCC unroll 4
                for (int g = 0; g < 4; ++g) {
                    const __m256i groupScales = _mm256_shuffle_epi8(
                        halfScales, _mm256_setr_epi8(4 * g, 4 * g + 1, 4 * g, 4 * g + 1, 4 * g, 4 * g + 1, 4 * g,
                                                     4 * g + 1, 4 * g, 4 * g + 1, 4 * g, 4 * g + 1, 4 * g, 4 * g + 1,
                                                     4 * g, 4 * g + 1, 4 * g + 2, 4 * g + 3, 4 * g + 2, 4 * g + 3,
                                                     4 * g + 2, 4 * g + 3, 4 * g + 2, 4 * g + 3, 4 * g + 2, 4 * g + 3,
                                                     4 * g + 2, 4 * g + 3, 4 * g + 2, 4 * g + 3, 4 * g + 2, 4 * g + 3));
                    const __m256i p16 = _mm256_maddubs_epi16(q[g], load256(a.qs + 128 * h + 32 * g));
                    sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p16, groupScales));
                }
            }
            acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(halfToFloat(x->d) * a.d), _mm256_cvtepi32_ps(sumi), acc[r]);
        }
    }
    storeRowSums(acc, R, y);
}

}  // namespace

#define ZINC_AVX2_K_KERNEL(T)                                                                                      \
    void matVec##T(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {            \
        const auto* a = static_cast<const BlockQ8_K*>(act);                                                        \
        const int64_t nb = k / kQKK;                                                                               \
        forRowGroups(                                                                                              \
            w, wStride, rows, y,                                                                                   \
            [&](const uint8_t* rw, float* out) { rows##T<kRowGroup>(rw, wStride, nb, a, out); },                  \
            [&](const uint8_t* rw, float* out) { rows##T<1>(rw, wStride, nb, a, out); });                         \
    }

ZINC_AVX2_K_KERNEL(Q4_K)
ZINC_AVX2_K_KERNEL(Q5_K)
ZINC_AVX2_K_KERNEL(Q6_K)

#undef ZINC_AVX2_K_KERNEL

}  // namespace zinc::cpu::kernels::avx2
