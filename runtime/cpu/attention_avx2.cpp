// AVX2 + F16C form of attention_generic.cpp, same arithmetic 8 lanes at a time; compiled
// with -mavx2 -mfma -mf16c and only called after the run-time CPU check.
#include <immintrin.h>

#include <cmath>

#include "runtime/cpu/attention_kernel.h"

namespace zinc::cpu {
namespace {

inline __m256 loadHalf8(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m256 roundHalf8(__m256 x) { return _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)); }
inline float horizontalSum(__m256 x) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// Scores of up to kScoreBlock positions are computed together: each is the same chain of
// multiply-adds as alone (so the same bits), but the chains are independent and overlap,
// where one position's 16 dependent FMAs used to stall on latency. The softmax and the F16
// value accumulator then go through the positions one by one, as before.
constexpr int32_t kScoreBlock = 8;

template <int32_t N>
inline void scoresOf(const float* q16, const uint16_t* k, size_t stride, KeyRows rows, int32_t p0, int32_t headDim,
                     float scale, float* s) {
    const uint16_t* kr[N];
    __m256 dot[N];
    for (int32_t j = 0; j < N; ++j) {
        kr[j] = k + rows.row(p0 + j) * stride;
        dot[j] = _mm256_setzero_ps();
    }
    for (int32_t i = 0; i < headDim; i += 8) {
        const __m256 qi = _mm256_load_ps(q16 + i);
        for (int32_t j = 0; j < N; ++j) dot[j] = _mm256_fmadd_ps(loadHalf8(kr[j] + i), qi, dot[j]);
    }
    for (int32_t j = 0; j < N; ++j) s[j] = horizontalSum(dot[j]) * scale;
}

}  // namespace

void attendHeadF16Avx2(const float* q, const uint16_t* k, const uint16_t* v, size_t stride, KeyRows rows,
                       int32_t headDim, float scale, float* out) {
    constexpr int32_t kMaxDim = 512;
    alignas(32) float q16[kMaxDim];
    alignas(32) float acc[kMaxDim] = {};
    if (headDim > kMaxDim) return attendHeadF16Generic(q, k, v, stride, rows, headDim, scale, out);
    for (int32_t i = 0; i < headDim; i += 8) _mm256_store_ps(q16 + i, roundHalf8(_mm256_loadu_ps(q + i)));
    float maxScore = -INFINITY, sum = 0.0f;
    float scores[kScoreBlock];
    for (int32_t p0 = 0; p0 < rows.n; p0 += kScoreBlock) {
        const int32_t m = rows.n - p0 < kScoreBlock ? rows.n - p0 : kScoreBlock;
        if (m == kScoreBlock)
            scoresOf<kScoreBlock>(q16, k, stride, rows, p0, headDim, scale, scores);
        else
            for (int32_t j = 0; j < m; ++j) scoresOf<1>(q16, k, stride, rows, p0 + j, headDim, scale, scores + j);
        for (int32_t j = 0; j < m; ++j) {
            const uint16_t* vr = v + rows.row(p0 + j) * stride;
            const float s = scores[j];
            float vs = 1.0f, ms = 1.0f;
            if (s > maxScore) {
                ms = std::exp(maxScore - s);
                maxScore = s;
                const __m256 m8 = _mm256_set1_ps(ms);
                for (int32_t i = 0; i < headDim; i += 8)
                    _mm256_store_ps(acc + i, roundHalf8(_mm256_mul_ps(_mm256_load_ps(acc + i), m8)));
            } else {
                vs = std::exp(s - maxScore);
            }
            const __m256 w = _mm256_set1_ps(vs);
            for (int32_t i = 0; i < headDim; i += 8)
                _mm256_store_ps(acc + i, roundHalf8(_mm256_fmadd_ps(loadHalf8(vr + i), w, _mm256_load_ps(acc + i))));
            sum = sum * ms + vs;
        }
    }
    const __m256 inv = _mm256_set1_ps(sum > 0 ? 1.0f / sum : 0.0f);
    for (int32_t i = 0; i < headDim; i += 8) _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_load_ps(acc + i), inv));
}

}  // namespace zinc::cpu
