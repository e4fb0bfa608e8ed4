// AVX-512 VNNI builds of the K-quant multi-token kernels: quant_kquant_tiles.h's tiling
// and float accumulation with a 512-bit inner loop (AVX512BW maddubs, VNNI dpwssd fusing
// the madd and add). Compiled with -mavx512f -mavx512vl -mavx512bw -mavx512vnni and called
// only after quant_dot.cpp's feature check. Measured on Zen 4 (quant_bench --tokens 8,
// G multiply-adds per CPU-second, Q4_K / Q6_K): AVX2 85 / 82; 256-bit dpwssd 112 / 113;
// these 512-bit kernels 128 / 116. Tried and slower there: 8 tokens per block (72, spills),
// dpbusd to int32 with one dpwssd per two groups (96: the extra shift and blend cost more
// than the multiply saved).
#include "runtime/cpu/quant_kernels.h"
#include "runtime/cpu/quant_kquant_tiles.h"

namespace zinc::cpu::kernels::vnni {
namespace {

using namespace avx2;

constexpr int kTokenGroup = 4;

// 512-bit variants: the two 32-byte groups that the 256-bit kernels multiply one after the
// other (a Q4_K/Q5_K chunk's low- and high-nibble halves; a pair of Q6_K groups) sit in the
// two halves of one register, against 64 contiguous activation bytes, so each (chunk, token)
// takes one maddubs and one dpwssd. The two halves' int32 sums are added lane by lane at the
// end of each super-block: lane i then holds the same products as the 256-bit kernels' lane
// i, so the results are the same bits.
// (The masked insert/extract: GCC 12's plain _mm512_inserti64x4 / _mm512_extracti64x4_epi64
// pass an uninitialized register through their all-ones mask and warn.)
inline __m512i joinHalves(__m256i lo, __m256i hi) {
    const __m512i wide = _mm512_castsi256_si512(lo);
    return _mm512_mask_inserti64x4(wide, 0xff, wide, hi, 1);
}
inline __m256i foldHalves(__m512i v) {
    return _mm256_add_epi32(_mm512_maskz_extracti64x4_epi64(0xff, v, 0), _mm512_maskz_extracti64x4_epi64(0xff, v, 1));
}
inline __m512i load512(const void* p) { return _mm512_loadu_si512(p); }
inline void keepInRegister512(__m512i& v) { asm("" : "+v"(v)); }

template <int T, class Block>
void rowNibbleK512(const uint8_t* row, int64_t nb, const TokenActs<T>& ta, float* y, size_t yStride) {
    __m256 acc[T], accMin[(T + 1) / 2];
    for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
    for (int p = 0; p < (T + 1) / 2; ++p) accMin[p] = _mm256_setzero_ps();
    const auto* blocks = reinterpret_cast<const Block*>(row);
    for (int64_t b = 0; b < nb; ++b) {
        const Block* x = blocks + b;
        if (kPrefetchInMatMul) prefetchAhead<kPrefetchK, sizeof(Block)>(x);
        const __m256i scalesMins = unpackScalesMins(x->scales);
        const __m256i scales = _mm256_permute2x128_si256(scalesMins, scalesMins, 0x00);
        __m512i sumi[T];
        for (int t = 0; t < T; ++t) sumi[t] = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
            __m256i lo, hi;
            chunkQuants(x, c, lo, hi);
            const __m512i q = joinHalves(lo, hi);
            const __m512i s = joinHalves(broadcastI16(scales, 2 * c), broadcastI16(scales, 2 * c + 1));
#pragma GCC unroll 4
            for (int t = 0; t < T; ++t) {
                sumi[t] = _mm512_dpwssd_epi32(sumi[t], _mm512_maddubs_epi16(q, load512(ta.act[t][b].qs + 64 * c)), s);
                keepInRegister512(sumi[t]);
            }
        }
        __m256i folded[T];
        for (int t = 0; t < T; ++t) folded[t] = foldHalves(sumi[t]);
        addSuperBlocks<T>(acc, accMin, &x->d, ta, b, folded, scalesMins);
    }
    storeTokenSums<T>(acc, accMin, y, yStride);
}

template <int T>
void rowQ6_K512(const uint8_t* row, int64_t nb, const TokenActs<T>& ta, float* y, size_t yStride) {
    __m256 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
    const auto* blocks = reinterpret_cast<const BlockQ6_K*>(row);
    for (int64_t b = 0; b < nb; ++b) {
        const BlockQ6_K* x = blocks + b;
        if (kPrefetchInMatMul) prefetchAhead<kPrefetchK, sizeof(BlockQ6_K)>(x);
        const __m256i scales = q6Scales(x);
        __m512i sumi[T];
        for (int t = 0; t < T; ++t) sumi[t] = _mm512_setzero_si512();
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const __m256i halfScales = q6HalfScales(scales, h);
            __m256i q[4];
            q6Groups(x, h, q);
            const __m512i q01 = joinHalves(q[0], q[1]);
            const __m512i q23 = joinHalves(q[2], q[3]);
            const __m512i s01 = joinHalves(pairScales(halfScales, 0), pairScales(halfScales, 1));
            const __m512i s23 = joinHalves(pairScales(halfScales, 2), pairScales(halfScales, 3));
#pragma GCC unroll 4
            for (int t = 0; t < T; ++t) {
                const int8_t* qa = ta.act[t][b].qs + 128 * h;
                sumi[t] = _mm512_dpwssd_epi32(sumi[t], _mm512_maddubs_epi16(q01, load512(qa)), s01);
                sumi[t] = _mm512_dpwssd_epi32(sumi[t], _mm512_maddubs_epi16(q23, load512(qa + 64)), s23);
                keepInRegister512(sumi[t]);
            }
        }
        const __m256 dScaled = _mm256_mul_ps(_mm256_set1_ps(halfToFloat(x->d)), tokenScales<T>(ta, b));
        [&]<int... t>(std::integer_sequence<int, t...>) {
            // The -32 offset (see rowQ6_K) joins the products' sum here: integer, exact.
            ((acc[t] = _mm256_fmadd_ps(
                  laneToAll<t>(dScaled),
                  _mm256_cvtepi32_ps(_mm256_sub_epi32(foldHalves(sumi[t]), q6Offset(scales, ta.act[t][b]))),
                  acc[t])),
             ...);
        }(std::make_integer_sequence<int, T>{});
    }
    storeTokenSums<T>(acc, nullptr, y, yStride);
}

template <class Block>
struct NibbleK512Rows {
    template <int T>
    static void run(const uint8_t* row, int64_t nb, const TokenActs<T>& ta, float* y, size_t s) {
        rowNibbleK512<T, Block>(row, nb, ta, y, s);
    }
};
struct Q6K512Rows {
    template <int T>
    static void run(const uint8_t* row, int64_t nb, const TokenActs<T>& ta, float* y, size_t s) {
        rowQ6_K512<T>(row, nb, ta, y, s);
    }
};

}  // namespace

void matMulQ4_K(int64_t k, const void* w, size_t wStride, int64_t rows, const void* acts, int64_t nTokens, float* y,
                size_t yStride) {
    multiToken<NibbleK512Rows<BlockQ4_K>, kTokenGroup>(k, w, wStride, rows, acts, nTokens, y, yStride, true);
}
void matMulQ5_K(int64_t k, const void* w, size_t wStride, int64_t rows, const void* acts, int64_t nTokens, float* y,
                size_t yStride) {
    multiToken<NibbleK512Rows<BlockQ5_K>, kTokenGroup>(k, w, wStride, rows, acts, nTokens, y, yStride, true);
}
void matMulQ6_K(int64_t k, const void* w, size_t wStride, int64_t rows, const void* acts, int64_t nTokens, float* y,
                size_t yStride) {
    multiToken<Q6K512Rows, kTokenGroup>(k, w, wStride, rows, acts, nTokens, y, yStride, false);
}

}  // namespace zinc::cpu::kernels::vnni
