// AVX2 row kernels for the 32-element block types: Q8_0, Q4_0, Q5_0 against Q8_0
// activations, Q4_1, Q5_1 against Q8_1. Per block: ggml's integer dot (ggml-cpu/arch/x86/
// quants.c ggml_vec_dot_*_q8_*, MIT) scaled by fp16(d_w) * fp16(d_a); the _1 types add
// fp16(m) * fp16(s) of the activation block, as ggml does.
#include <type_traits>

#include "model/quant/blocks.h"
#include "runtime/cpu/quant_avx2_common.h"
#include "runtime/cpu/quant_kernels.h"

namespace zinc::cpu::kernels::avx2 {
namespace {

using model::BlockQ4_0;
using model::BlockQ4_1;
using model::BlockQ5_0;
using model::BlockQ5_1;
using model::BlockQ8_0;
using model::BlockQ8_1;
using model::kQK;

// The signed quants of one weight block as 32 int8.
inline __m256i signedQuants(const BlockQ8_0& x) { return load256(x.qs); }
inline __m256i signedQuants(const BlockQ4_0& x) { return _mm256_sub_epi8(nibblesToBytes(x.qs), _mm256_set1_epi8(8)); }
// Q5_0: q = (nibble | fifth bit << 4) - 16, i.e. the nibble with 0xf0 or-ed in where the bit is 0.
inline __m256i signedQuants(const BlockQ5_0& x) {
    return _mm256_or_si256(nibblesToBytes(x.qs), _mm256_andnot_si256(bitsToBytes(x.qh), _mm256_set1_epi8(static_cast<char>(0xf0))));
}
// The unsigned quants of the _1 types.
inline __m256i unsignedQuants(const BlockQ4_1& x) { return nibblesToBytes(x.qs); }
inline __m256i unsignedQuants(const BlockQ5_1& x) {
    return _mm256_or_si256(nibblesToBytes(x.qs), _mm256_and_si256(bitsToBytes(x.qh), _mm256_set1_epi8(0x10)));
}

// Weight blocks with signed quants times Q8_0.
template <typename Block, int R>
void rowsSigned(const uint8_t* w, size_t stride, int64_t nb, const BlockQ8_0* act, float* y) {
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const __m256i qa = load256(act[b].qs);
        const float da = halfToFloat(act[b].d);
        for (int r = 0; r < R; ++r) {
            const Block& x = reinterpret_cast<const Block*>(w + r * stride)[b];
            prefetchAhead<kPrefetchLegacy, 1>(&x);  // one line per block: blocks are 18..36 bytes
            const __m256 d = _mm256_set1_ps(halfToFloat(x.d) * da);
            acc[r] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(dotI8(signedQuants(x), qa)), acc[r]);
        }
    }
    storeRowSums(acc, R, y);
}

// Weight blocks with unsigned quants and a min times Q8_1.
template <typename Block, int R>
void rowsWithMin(const uint8_t* w, size_t stride, int64_t nb, const BlockQ8_1* act, float* y) {
    __m256 acc[R];
    float mins[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps(), mins[r] = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        const __m256i qa = load256(act[b].qs);
        const float da = halfToFloat(act[b].d);
        const float sa = halfToFloat(act[b].s);
        for (int r = 0; r < R; ++r) {
            const Block& x = reinterpret_cast<const Block*>(w + r * stride)[b];
            prefetchAhead<kPrefetchLegacy, 1>(&x);
            const __m256 d = _mm256_set1_ps(halfToFloat(x.d) * da);
            acc[r] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(dotU8I8(unsignedQuants(x), qa)), acc[r]);
            mins[r] += halfToFloat(x.m) * sa;
        }
    }
    float sums[R];
    storeRowSums(acc, R, sums);
    for (int r = 0; r < R; ++r) y[r] = sums[r] + mins[r];
}

template <typename Block, typename Act, void (*Group)(const uint8_t*, size_t, int64_t, const Act*, float*),
          void (*Single)(const uint8_t*, size_t, int64_t, const Act*, float*)>
void run(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    const auto* a = static_cast<const Act*>(act);
    const int64_t nb = k / kQK;
    forRowGroups<kLegacyRowGroup>(
        w, wStride, rows, y, [&](const uint8_t* rw, float* out) { Group(rw, wStride, nb, a, out); },
        [&](const uint8_t* rw, float* out) { Single(rw, wStride, nb, a, out); });
}

// Many tokens (matMul): one weight row's signed quants are computed once per block and dotted
// with up to 4 tokens. Per (row, token) these are the operations of rowsSigned (dotI8, the
// fp16 scales' product, one fma per block) and storeRowSums adds each lane in the same order
// for any group, so the results equal matVec's bit for bit.
template <typename Block, int T>
void rowTokensSigned(const uint8_t* row, int64_t nb, const BlockQ8_0* const* act, const float* das, int64_t dasStride,
                     float* y, size_t yStride) {
    __m256 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
    const auto* blocks = reinterpret_cast<const Block*>(row);
    for (int64_t b = 0; b < nb; ++b) {
        const Block& x = blocks[b];
        const __m256i q = signedQuants(x);
        const __m256i absQ = _mm256_sign_epi8(q, q);
        const float dx = halfToFloat(x.d);
        const float* da = das + b * dasStride;
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
            const __m256i p16 = _mm256_maddubs_epi16(absQ, _mm256_sign_epi8(load256(act[t][b].qs), q));
            const __m256i dot = _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(dx * da[t]), _mm256_cvtepi32_ps(dot), acc[t]);
        }
    }
    float out[4];
    storeRowSums(acc, T, out);
    for (int t = 0; t < T; ++t) y[static_cast<size_t>(t) * yStride] = out[t];
}

constexpr int64_t kLegacyTokenChunk = 64;
constexpr size_t kLegacyWeightTileBytes = 128 * 1024;

template <typename Block>
void multiTokenSigned(int64_t k, const void* w, size_t wStride, int64_t rows, const void* acts, int64_t nTokens,
                      float* y, size_t yStride) {
    const auto* a = static_cast<const BlockQ8_0*>(acts);
    const auto* base = static_cast<const uint8_t*>(w);
    const int64_t nb = k / kQK;
    const int64_t fit = static_cast<int64_t>(kLegacyWeightTileBytes / (wStride ? wStride : 1));
    const int64_t tileRows = fit > 1 ? fit : 1;
    for (int64_t c0 = 0; c0 < nTokens; c0 += kLegacyTokenChunk) {
        const int64_t n = nTokens - c0 < kLegacyTokenChunk ? nTokens - c0 : kLegacyTokenChunk;
        // The chunk's activation scales as floats, block-major (entry b * n + t); raw array
        // (no std template instantiated with AVX2 flags, see quant_avx2_common.h).
        float* das = new float[static_cast<size_t>(nb * n)];
        for (int64_t t = 0; t < n; ++t)
            for (int64_t b = 0; b < nb; ++b) das[b * n + t] = halfToFloat(a[(c0 + t) * nb + b].d);
        for (int64_t r0 = 0; r0 < rows; r0 += tileRows) {
            const int64_t nr = rows - r0 < tileRows ? rows - r0 : tileRows;
            int64_t t = 0;
            auto group = [&]<int T>(std::integral_constant<int, T>) {
                const BlockQ8_0* ta[T];
                for (int i = 0; i < T; ++i) ta[i] = a + (c0 + t + i) * nb;
                float* ty = y + static_cast<size_t>(c0 + t) * yStride;
                for (int64_t r = r0; r < r0 + nr; ++r)
                    rowTokensSigned<Block, T>(base + static_cast<size_t>(r) * wStride, nb, ta, das + t, n, ty + r, yStride);
                t += T;
            };
            while (t + 4 <= n) group(std::integral_constant<int, 4>{});
            switch (n - t) {
                case 3: group(std::integral_constant<int, 3>{}); break;
                case 2: group(std::integral_constant<int, 2>{}); break;
                case 1: group(std::integral_constant<int, 1>{}); break;
                default: break;
            }
        }
        delete[] das;
    }
}

}  // namespace

void matMulQ8_0(int64_t k, const void* w, size_t wStride, int64_t rows, const void* acts, int64_t nTokens, float* y,
                size_t yStride) {
    multiTokenSigned<BlockQ8_0>(k, w, wStride, rows, acts, nTokens, y, yStride);
}
void matMulQ4_0(int64_t k, const void* w, size_t wStride, int64_t rows, const void* acts, int64_t nTokens, float* y,
                size_t yStride) {
    multiTokenSigned<BlockQ4_0>(k, w, wStride, rows, acts, nTokens, y, yStride);
}
void matMulQ5_0(int64_t k, const void* w, size_t wStride, int64_t rows, const void* acts, int64_t nTokens, float* y,
                size_t yStride) {
    multiTokenSigned<BlockQ5_0>(k, w, wStride, rows, acts, nTokens, y, yStride);
}

void matVecQ8_0(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    run<BlockQ8_0, BlockQ8_0, rowsSigned<BlockQ8_0, kLegacyRowGroup>, rowsSigned<BlockQ8_0, 1>>(k, w, wStride, rows, act, y);
}
void matVecQ4_0(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    run<BlockQ4_0, BlockQ8_0, rowsSigned<BlockQ4_0, kLegacyRowGroup>, rowsSigned<BlockQ4_0, 1>>(k, w, wStride, rows, act, y);
}
void matVecQ5_0(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    run<BlockQ5_0, BlockQ8_0, rowsSigned<BlockQ5_0, kLegacyRowGroup>, rowsSigned<BlockQ5_0, 1>>(k, w, wStride, rows, act, y);
}
void matVecQ4_1(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    run<BlockQ4_1, BlockQ8_1, rowsWithMin<BlockQ4_1, kLegacyRowGroup>, rowsWithMin<BlockQ4_1, 1>>(k, w, wStride, rows, act, y);
}
void matVecQ5_1(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    run<BlockQ5_1, BlockQ8_1, rowsWithMin<BlockQ5_1, kLegacyRowGroup>, rowsWithMin<BlockQ5_1, 1>>(k, w, wStride, rows, act, y);
}

}  // namespace zinc::cpu::kernels::avx2
