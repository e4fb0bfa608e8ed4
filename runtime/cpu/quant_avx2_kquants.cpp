// AVX2 row kernels for the K-quants (Q4_K, Q5_K, Q6_K) against Q8_K activations. Integer
// math per super-block is ggml's (ggml-cpu/arch/x86/quants.c ggml_vec_dot_q{4,5,6}_K_q8_K,
// MIT): maddubs of the unsigned quants with the int8 activations, madd with the sub-block
// scales, and the mins (Q4_K/Q5_K) or the -32 offset (Q6_K) applied through the
// activation's bsums. The float accumulation order differs from ggml's. The multi-token
// kernels are in quant_kquant_tiles.h (shared with the VNNI build).
#include "runtime/cpu/quant_kernels.h"
#include "runtime/cpu/quant_kquant_tiles.h"

namespace zinc::cpu::kernels::avx2 {
namespace {


inline float rowSum(__m256 acc) {
    float y;
    storeRowSums(&acc, 1, &y);
    return y;
}

// Sums of the activation quants per 32-element sub-block (bsums come per 16), for each of
// the row's super-blocks: computed once per call instead of once per weight row.
class SubBlockSums {
public:
    SubBlockSums(const BlockQ8_K* act, int64_t nb) {
        __m128i* out = nb <= kOnStack ? onStack_ : (heap_ = new __m128i[static_cast<size_t>(nb)]);
        for (int64_t b = 0; b < nb; ++b) {
            const __m256i bs = load256(act[b].bsums);
            out[b] = _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
        }
        data_ = out;
    }
    ~SubBlockSums() { delete[] heap_; }
    SubBlockSums(const SubBlockSums&) = delete;
    SubBlockSums& operator=(const SubBlockSums&) = delete;
    const __m128i* data() const { return data_; }

private:
    static constexpr int64_t kOnStack = 128;  // rows up to 32768 elements
    __m128i onStack_[kOnStack];
    __m128i* heap_ = nullptr;  // raw: no std template instantiated with AVX2 flags (see quant_avx2_common.h)
    const __m128i* data_;
};

// Adds one Q4_K/Q5_K super-block: acc += d * dy * sumi; accMin += dmin * dy * (min_j *
// subBlockSum_j), subtracted at the end. dAndMin points at the block's fp16 d and dmin.
inline void addSuperBlock(__m256& acc, __m128& accMin, const void* dAndMin, float dy, __m256i sumi,
                          __m256i scalesMins, __m128i subSums) {
    uint32_t halves;
    __builtin_memcpy(&halves, dAndMin, sizeof(halves));
    const __m128 scaled = _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(halves))), _mm_set1_ps(dy));
    const __m128i minProducts = _mm_madd_epi16(_mm256_extracti128_si256(scalesMins, 1), subSums);
    acc = _mm256_fmadd_ps(_mm256_broadcastss_ps(scaled), _mm256_cvtepi32_ps(sumi), acc);
    accMin = _mm_fmadd_ps(_mm_shuffle_ps(scaled, scaled, 0x55), _mm_cvtepi32_ps(minProducts), accMin);
}

// matVec's kernels: one row, one token. They compute exactly what the multi-token kernels
// below compute for each token (same integer sums, same float operations in the same order);
// kept separate because the single-token code is faster when there is nothing to share.
float singleRowQ4_K(const uint8_t* row, int64_t nb, const BlockQ8_K* act, const __m128i* subSums) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    __m256 acc = _mm256_setzero_ps();
    __m128 accMin = _mm_setzero_ps();
    const auto* blocks = reinterpret_cast<const BlockQ4_K*>(row);
    for (int64_t b = 0; b < nb; ++b) {
        const BlockQ4_K* x = blocks + b;
        const BlockQ8_K& a = act[b];
        prefetchAhead<kPrefetchK, sizeof(BlockQ4_K)>(x);
        const __m256i scalesMins = unpackScalesMins(x->scales);
        const __m256i scales = _mm256_permute2x128_si256(scalesMins, scalesMins, 0x00);
        __m256i sumi = _mm256_setzero_si256();
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
            const __m256i q4 = load256(x->qs + 32 * c);
            const __m256i lo = _mm256_and_si256(q4, m4);
            const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q4, 4), m4);
            const __m256i pLo =
                _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load256(a.qs + 64 * c)), broadcastI16(scales, 2 * c));
            const __m256i pHi =
                _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load256(a.qs + 64 * c + 32)), broadcastI16(scales, 2 * c + 1));
            sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(pLo, pHi));
        }
        addSuperBlock(acc, accMin, &x->d, a.d, sumi, scalesMins, subSums[b]);
    }
    return rowSum(withMinsSubtracted(acc, accMin));
}

// Q5_K (see rowQ5_K): the fifth bit of element 32c + l (low nibbles, c = chunk) is bit 2c of qh[l]; of
// the high-nibble element 32c + 32 + l, bit 2c + 1.
float singleRowQ5_K(const uint8_t* row, int64_t nb, const BlockQ8_K* act, const __m128i* subSums) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m256i bit4 = _mm256_set1_epi8(0x10);
    __m256 acc = _mm256_setzero_ps();
    __m128 accMin = _mm_setzero_ps();
    const auto* blocks = reinterpret_cast<const BlockQ5_K*>(row);
    for (int64_t b = 0; b < nb; ++b) {
        const BlockQ5_K* x = blocks + b;
        const BlockQ8_K& a = act[b];
        prefetchAhead<kPrefetchK, sizeof(BlockQ5_K)>(x);
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
            const __m256i pLo =
                _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load256(a.qs + 64 * c)), broadcastI16(scales, 2 * c));
            const __m256i pHi =
                _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load256(a.qs + 64 * c + 32)), broadcastI16(scales, 2 * c + 1));
            sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(pLo, pHi));
        }
        addSuperBlock(acc, accMin, &x->d, a.d, sumi, scalesMins, subSums[b]);
    }
    return rowSum(withMinsSubtracted(acc, accMin));
}

// Q6_K (see rowQ6_K): in half h, group g (32 elements 128h + 32g + l) takes low bits from ql[64h + 32(g&1)
// + l] (low nibble for g < 2, high for g >= 2) and bits 2g..2g+1 of qh[32h + l]. The quants
// are used unsigned (0..63) and the -32 comes back as 32 * sum_s scale_s * bsum_s.
float singleRowQ6_K(const uint8_t* row, int64_t nb, const BlockQ8_K* act, const __m128i*) {
    __m256 acc = _mm256_setzero_ps();
    const auto* blocks = reinterpret_cast<const BlockQ6_K*>(row);
    for (int64_t b = 0; b < nb; ++b) {
        const BlockQ6_K* x = blocks + b;
        const BlockQ8_K& a = act[b];
        prefetchAhead<kPrefetchK, sizeof(BlockQ6_K)>(x);
        const __m256i scales = q6Scales(x);
        __m256i sumi = _mm256_sub_epi32(_mm256_setzero_si256(), q6Offset(scales, a));
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const __m256i halfScales = q6HalfScales(scales, h);
            __m256i q[4];
            q6Groups(x, h, q);
#pragma GCC unroll 4
            for (int g = 0; g < 4; ++g) {
                const __m256i p16 = _mm256_maddubs_epi16(q[g], load256(a.qs + 128 * h + 32 * g));
                sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p16, pairScales(halfScales, g)));
            }
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(halfToFloat(x->d) * a.d), _mm256_cvtepi32_ps(sumi), acc);
    }
    return rowSum(acc);
}

}  // namespace

#define ZINC_AVX2_K_KERNEL(T, ROWS, USES_MINS)                                                                       \
    void matVec##T(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {   \
        const auto* a = static_cast<const BlockQ8_K*>(act);                                               \
        const auto* base = static_cast<const uint8_t*>(w);                                                \
        const int64_t nb = k / kQKK;                                                                      \
        const SubBlockSums sums(a, USES_MINS ? nb : 0);                                                    \
        for (int64_t r = 0; r < rows; ++r)                                                                \
            y[r] = singleRow##T(base + static_cast<size_t>(r) * wStride, nb, a, sums.data());             \
    }                                                                                                     \
    void matMul##T(int64_t k, const void* w, size_t wStride, int64_t rows, const void* acts, int64_t nTokens, \
                   float* y, size_t yStride) {                                                            \
        multiToken<ROWS, 4>(k, w, wStride, rows, acts, nTokens, y, yStride, USES_MINS);                   \
    }

using RowsQ4_K = NibbleKRows<BlockQ4_K>;
using RowsQ5_K = NibbleKRows<BlockQ5_K>;
using RowsQ6_K = Q6KRows;
ZINC_AVX2_K_KERNEL(Q4_K, RowsQ4_K, true)
ZINC_AVX2_K_KERNEL(Q5_K, RowsQ5_K, true)
ZINC_AVX2_K_KERNEL(Q6_K, RowsQ6_K, false)

#undef ZINC_AVX2_K_KERNEL

}  // namespace zinc::cpu::kernels::avx2
