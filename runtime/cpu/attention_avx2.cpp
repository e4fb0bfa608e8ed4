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
// value accumulator then go through the positions one by one, as before. H query heads that
// share a kv head go together: each K and V chunk is converted from F16 once for all of them,
// and each head still sees exactly the operations it sees alone.
constexpr int32_t kScoreBlock = 8;
constexpr int32_t kMaxDim = 512;

// Scores of positions p0..p0+N for H heads: s[h * kScoreBlock + j].
template <int32_t N, int H>
inline void scoresOf(const float (*q16)[kMaxDim], const uint16_t* k, size_t stride, KeyRows rows, int32_t p0,
                     int32_t headDim, float scale, float* s) {
    const uint16_t* kr[N];
    __m256 dot[H][N];
    for (int32_t j = 0; j < N; ++j) {
        kr[j] = k + rows.row(p0 + j) * stride;
        for (int h = 0; h < H; ++h) dot[h][j] = _mm256_setzero_ps();
    }
    for (int32_t i = 0; i < headDim; i += 8)
        for (int32_t j = 0; j < N; ++j) {
            const __m256 kj = loadHalf8(kr[j] + i);
            for (int h = 0; h < H; ++h) dot[h][j] = _mm256_fmadd_ps(kj, _mm256_load_ps(q16[h] + i), dot[h][j]);
        }
    for (int h = 0; h < H; ++h)
        for (int32_t j = 0; j < N; ++j) s[h * kScoreBlock + j] = horizontalSum(dot[h][j]) * scale;
}

// Asks for the K and V rows of positions p0..p0+n (headDim halves each) to be brought into
// cache. They are strided by the whole KV row (kvDim halves), which the hardware prefetchers
// do not follow, and in a batched decode step they come from memory (every sequence's cache).
inline void prefetchRows(const uint16_t* base, size_t stride, KeyRows rows, int32_t p0, int32_t n, int32_t headDim) {
    for (int32_t j = p0; j < p0 + n && j < rows.n; ++j) {
        const char* r = reinterpret_cast<const char*>(base + rows.row(j) * stride);
        for (int32_t off = 0; off < headDim * 2; off += 64) _mm_prefetch(r + off, _MM_HINT_T0);
    }
}

// H heads (q and out: head h at h * headDim) over the same K and V rows.
template <int H>
void attendHeads(const float* q, const uint16_t* k, const uint16_t* v, size_t stride, KeyRows rows, int32_t headDim,
                 float scale, float* out) {
    alignas(32) float q16[H][kMaxDim];
    alignas(32) float acc[H][kMaxDim] = {};
    for (int h = 0; h < H; ++h)
        for (int32_t i = 0; i < headDim; i += 8)
            _mm256_store_ps(q16[h] + i, roundHalf8(_mm256_loadu_ps(q + h * headDim + i)));
    float maxScore[H], sum[H], scores[H * kScoreBlock];
    for (int h = 0; h < H; ++h) maxScore[h] = -INFINITY, sum[h] = 0.0f;
    constexpr int32_t kChains = kScoreBlock / H;  // 8 FMA chains in flight
    prefetchRows(k, stride, rows, 0, kScoreBlock, headDim);
    for (int32_t p0 = 0; p0 < rows.n; p0 += kScoreBlock) {
        const int32_t m = rows.n - p0 < kScoreBlock ? rows.n - p0 : kScoreBlock;
        prefetchRows(v, stride, rows, p0, kScoreBlock, headDim);
        prefetchRows(k, stride, rows, p0 + kScoreBlock, kScoreBlock, headDim);
        int32_t j0 = 0;
        for (; j0 + kChains <= m; j0 += kChains)
            scoresOf<kChains, H>(q16, k, stride, rows, p0 + j0, headDim, scale, scores + j0);
        for (; j0 < m; ++j0) scoresOf<1, H>(q16, k, stride, rows, p0 + j0, headDim, scale, scores + j0);
        for (int32_t j = 0; j < m; ++j) {
            const uint16_t* vr = v + rows.row(p0 + j) * stride;
            __m256 w[H];
            for (int h = 0; h < H; ++h) {
                const float s = scores[h * kScoreBlock + j];
                float vs = 1.0f, ms = 1.0f;
                if (s > maxScore[h]) {
                    ms = std::exp(maxScore[h] - s);
                    maxScore[h] = s;
                    const __m256 m8 = _mm256_set1_ps(ms);
                    for (int32_t i = 0; i < headDim; i += 8)
                        _mm256_store_ps(acc[h] + i, roundHalf8(_mm256_mul_ps(_mm256_load_ps(acc[h] + i), m8)));
                } else {
                    vs = std::exp(s - maxScore[h]);
                }
                w[h] = _mm256_set1_ps(vs);
                sum[h] = sum[h] * ms + vs;
            }
            for (int32_t i = 0; i < headDim; i += 8) {
                const __m256 vi = loadHalf8(vr + i);
                for (int h = 0; h < H; ++h)
                    _mm256_store_ps(acc[h] + i, roundHalf8(_mm256_fmadd_ps(vi, w[h], _mm256_load_ps(acc[h] + i))));
            }
        }
    }
    for (int h = 0; h < H; ++h) {
        const __m256 inv = _mm256_set1_ps(sum[h] > 0 ? 1.0f / sum[h] : 0.0f);
        for (int32_t i = 0; i < headDim; i += 8)
            _mm256_storeu_ps(out + h * headDim + i, _mm256_mul_ps(_mm256_load_ps(acc[h] + i), inv));
    }
}

}  // namespace

void attendHeadF16Avx2(const float* q, const uint16_t* k, const uint16_t* v, size_t stride, KeyRows rows,
                       int32_t headDim, float scale, float* out) {
    if (headDim > kMaxDim) return attendHeadF16Generic(q, k, v, stride, rows, headDim, scale, out);
    attendHeads<1>(q, k, v, stride, rows, headDim, scale, out);
}

void attendHeadPairF16Avx2(const float* q, const uint16_t* k, const uint16_t* v, size_t stride, KeyRows rows,
                           int32_t headDim, float scale, float* out) {
    if (headDim > kMaxDim) {
        attendHeadF16Generic(q, k, v, stride, rows, headDim, scale, out);
        return attendHeadF16Generic(q + headDim, k, v, stride, rows, headDim, scale, out + headDim);
    }
    attendHeads<2>(q, k, v, stride, rows, headDim, scale, out);
}

}  // namespace zinc::cpu
