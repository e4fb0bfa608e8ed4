// AVX-512 VNNI builds of the K-quant multi-token kernels: quant_kquant_tiles.h's tiling with
// a 512-bit inner loop (AVX512BW maddubs, VNNI dpwssd fusing the madd and add) and a 512-bit
// float epilogue that keeps two tokens per accumulator. Compiled with -mavx512f -mavx512vl
// -mavx512bw -mavx512vnni and called only after quant_dot.cpp's feature check.
//
// Up to 8 tokens share each unpacked weight block (the decode step of 8 batched sequences
// is one group). Per super-block and token the multiply is 8 instructions (4 chunks x
// maddubs + dpwssd); everything else (unpacking, scales, the float accumulation) was ~2/3 of
// the old kernel's instructions, so it is shared across tokens where it can be: the weight
// block is unpacked once per 8 tokens, the sub-block scales are picked with one vpshufb per
// chunk, two tokens' int32 sums are folded and accumulated as one 16-lane float vector, and
// four tokens' Q4_K/Q5_K min terms as another.
//
// Lane for lane these are the operations of matVec's kernels (quant_avx2_kquants.cpp): the
// same integer products in the same int32 lanes (integer sums are exact in any order), then
// the same float multiply-adds per lane; so the results are the same bits for any token count.
#include "runtime/cpu/quant_kernels.h"
#include "runtime/cpu/quant_kquant_tiles.h"

namespace zinc::cpu::kernels::vnni {
namespace {

using namespace avx2;

constexpr int kTokenGroup = 8;

inline __m512i load512(const void* p) { return _mm512_loadu_si512(p); }
inline void keepInRegister512(__m512i& v) { asm("" : "+v"(v)); }
// The upper 256 bits of a 512-bit vector, as a mask of 16-bit or 32-bit elements.
constexpr __mmask32 kUpperWords = 0xffff0000u;
constexpr __mmask16 kUpperDwords = 0xff00;

// GCC 12's plain forms of these intrinsics pass an uninitialized register through an
// all-ones mask and warn (-Wmaybe-uninitialized); the zero-masked forms with all lanes
// selected are the same instructions without it.
inline __m512i joinHalves(__m256i lo, __m256i hi) {
    const __m512i wide = _mm512_castsi256_si512(lo);
    return _mm512_mask_inserti64x4(wide, 0xff, wide, hi, 1);
}
inline __m512i broadcast128(__m128i v) { return _mm512_maskz_broadcast_i32x4(0xffff, v); }
inline __m512i broadcast256(__m256i v) { return _mm512_maskz_broadcast_i64x4(0xff, v); }
inline __m512 toFloats(__m512i v) { return _mm512_maskz_cvtepi32_ps(0xffff, v); }
inline __m512 permuteFloats(__m512i index, __m512 v) { return _mm512_maskz_permutexvar_ps(0xffff, index, v); }
template <int Imm>
inline __m512i shuffle128(__m512i a, __m512i b) { return _mm512_maskz_shuffle_i64x2(0xff, a, b, Imm); }

// vpshufb controls that put int16 element lo of a 128-bit lane in every word of 128-bit
// lanes 0 and 1 and element hi in lanes 2 and 3 (or, with perLane, element base + j in lane j).
struct alignas(64) ShuffleControl {
    uint8_t bytes[64];
};
constexpr ShuffleControl wordPicker(int lo, int hi) {
    ShuffleControl c{};
    for (int i = 0; i < 64; ++i) c.bytes[i] = static_cast<uint8_t>(2 * (i < 32 ? lo : hi) + (i & 1));
    return c;
}
constexpr ShuffleControl wordPerLane(int base) {
    ShuffleControl c{};
    for (int i = 0; i < 64; ++i) c.bytes[i] = static_cast<uint8_t>(2 * (base + i / 16) + (i & 1));
    return c;
}
// Q4_K/Q5_K chunk c: the low-nibble half uses sub-block 2c, the high-nibble half 2c + 1.
constexpr ShuffleControl kChunkScales[4] = {wordPicker(0, 1), wordPicker(2, 3), wordPicker(4, 5), wordPicker(6, 7)};
// Q6_K: groups 0,1 (resp. 2,3) of a half hold sub-blocks 0..3 (4..7) of it, one per 128-bit lane.
constexpr ShuffleControl kQ6Scales[2] = {wordPerLane(0), wordPerLane(4)};
inline __m512i control(const ShuffleControl& c) { return _mm512_load_si512(c.bytes); }

// permutexvar indices: token 2p's float in lanes 0..7, 2p + 1's in 8..15 (pairs); token
// 4q + j's in lanes 4j..4j+3 (quads).
inline __m512i pairIndex(int p) { return _mm512_mask_blend_epi32(kUpperDwords, _mm512_set1_epi32(2 * p), _mm512_set1_epi32(2 * p + 1)); }
inline __m512i quadIndex(int q) {
    return _mm512_add_epi32(_mm512_set1_epi32(4 * q),
                            _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3));
}

// Two tokens' 512-bit int32 sums, each folded to 8 lanes (low + high 256-bit half, as the
// 256-bit kernels hold them): token a in lanes 0..7, token b in 8..15.
inline __m512i foldPair(__m512i a, __m512i b) {
    return _mm512_add_epi32(shuffle128<_MM_SHUFFLE(1, 0, 1, 0)>(a, b), shuffle128<_MM_SHUFFLE(3, 2, 3, 2)>(a, b));
}

// The 8 tokens' activation d of block b (lanes past T are finite and unused: multiToken pads).
template <int T>
inline __m256 tokenScales8(const TokenActs<T>& ta, int64_t b) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(ta.dy + static_cast<size_t>(b) * ta.dyStride));
}

// Chunk c of a Q4_K/Q5_K block: the 32 low-nibble quants in the low half, the 32
// high-nibble ones in the high half (the activation's 64 bytes 64c.. in the same order).
inline __m512i chunk512(const BlockQ4_K* x, int c) {
    const __m512i q = broadcast256(load256(x->qs + 32 * c));
    return _mm512_and_si512(_mm512_mask_srli_epi16(q, kUpperWords, q, 4), _mm512_set1_epi8(0x0f));
}
inline __m512i chunk512(const BlockQ5_K* x, int c) {
    __m256i lo, hi;
    chunkQuants(x, c, lo, hi);
    return joinHalves(lo, hi);
}

// The lower or upper 8 floats (AVX512F only; masked for the reason given at joinHalves).
template <int Half>
inline __m256 halfOf(__m512 v) {
    return _mm256_castsi256_ps(_mm512_maskz_extracti64x4_epi64(0xff, _mm512_castps_si512(v), Half));
}

// Stores the tokens' sums from the pair-packed accumulators (and, for Q4_K/Q5_K, the
// quad-packed mins) through storeTokenSums, which adds them as matVec's kernels do.
template <int T>
inline void storePacked(const __m512* acc, const __m512* accMin, float* y, size_t yStride) {
    __m256 acc256[T], min256[(T + 1) / 2];
    for (int t = 0; t < T; ++t)
        acc256[t] = t % 2 ? halfOf<1>(acc[t / 2]) : halfOf<0>(acc[t / 2]);
    if (accMin)
        for (int p = 0; p < (T + 1) / 2; ++p)
            min256[p] = p % 2 ? halfOf<1>(accMin[p / 2]) : halfOf<0>(accMin[p / 2]);
    storeTokenSums<T>(acc256, accMin ? min256 : nullptr, y, yStride);
}

template <int T, class Block>
void rowNibbleK512(const uint8_t* row, int64_t nb, const TokenActs<T>& ta, float* y, size_t yStride) {
    constexpr int P = (T + 1) / 2, Q = (T + 3) / 4;
    __m512 acc[P], accMin[Q];
    for (int p = 0; p < P; ++p) acc[p] = _mm512_setzero_ps();
    for (int q = 0; q < Q; ++q) accMin[q] = _mm512_setzero_ps();
    const auto* blocks = reinterpret_cast<const Block*>(row);
    for (int64_t b = 0; b < nb; ++b) {
        const Block* x = blocks + b;
        if (kPrefetchInMatMul) prefetchAhead<kPrefetchK, sizeof(Block)>(x);
        const __m256i scalesMins = unpackScalesMins(x->scales);
        const __m512i scales = broadcast128(_mm256_castsi256_si128(scalesMins));
        // The first chunk's products start the sums (vpmaddwd: a zmm zeroing move costs a
        // vector uop on Intel), the other three accumulate (vpdpwssd).
        __m512i sumi[2 * P];
        if constexpr (T % 2) sumi[T] = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
            const __m512i q = chunk512(x, c);
            const __m512i s = _mm512_shuffle_epi8(scales, control(kChunkScales[c]));
#pragma GCC unroll 8
            for (int t = 0; t < T; ++t) {
                const __m512i products = _mm512_maddubs_epi16(q, load512(ta.act[t][b].qs + 64 * c));
                sumi[t] = c == 0 ? _mm512_madd_epi16(products, s) : _mm512_dpwssd_epi32(sumi[t], products, s);
                keepInRegister512(sumi[t]);
            }
        }
        // acc += d * dy * sumi (two tokens a vector); accMin += dmin * dy * (min_j * subBlockSum_j)
        // (four tokens a vector; subtracted at the end).
        uint32_t halves;
        __builtin_memcpy(&halves, &x->d, sizeof(halves));
        const __m128 dm = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(halves)));
        const __m256 dy = tokenScales8<T>(ta, b);
        const __m512 dScaled = _mm512_castps256_ps512(_mm256_mul_ps(_mm256_broadcastss_ps(dm), dy));
        const __m512 minScaled =
            _mm512_castps256_ps512(_mm256_mul_ps(_mm256_broadcastss_ps(_mm_shuffle_ps(dm, dm, 0x55)), dy));
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p)
            acc[p] = _mm512_fmadd_ps(permuteFloats(pairIndex(p), dScaled),
                                     toFloats(foldPair(sumi[2 * p], sumi[2 * p + 1])), acc[p]);
        const __m512i mins = broadcast128(_mm256_extracti128_si256(scalesMins, 1));
        const __m128i* sums = ta.sums + static_cast<size_t>(b) * ta.sumsStride;
#pragma GCC unroll 2
        for (int q = 0; q < Q; ++q)
            accMin[q] = _mm512_fmadd_ps(permuteFloats(quadIndex(q), minScaled),
                                        toFloats(_mm512_madd_epi16(mins, load512(sums + 4 * q))), accMin[q]);
    }
    storePacked<T>(acc, accMin, y, yStride);
}

// Half h of a Q6_K block (see q6Groups) as two pairs of groups: q01 = groups 0 | 1, q23 =
// groups 2 | 3, the unsigned 6-bit quants.
inline void q6Pairs(const BlockQ6_K* x, int h, __m512i& q01, __m512i& q23) {
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    const __m512i m2 = _mm512_set1_epi8(0x30);  // the two high bits, in place
    const __m512i ql = load512(x->ql + 64 * h);  // groups 0 | 1 low nibbles, 2 | 3 high nibbles
    const __m512i qh = broadcast256(load256(x->qh + 32 * h));
    // Bits 2g..2g+1 of qh to bits 4..5: shift left by 4 (g 0), 2 (g 1); by 0 (g 2), right by 2 (g 3).
    const __m512i high01 = _mm512_mask_slli_epi16(_mm512_slli_epi16(qh, 4), kUpperWords, qh, 2);
    const __m512i high23 = _mm512_mask_srli_epi16(qh, kUpperWords, qh, 2);
    // vpternlog 0xf8: a | (b & c).
    q01 = _mm512_ternarylogic_epi32(_mm512_and_si512(ql, m4), high01, m2, 0xf8);
    q23 = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4), high23, m2, 0xf8);
}

template <int T>
void rowQ6_K512(const uint8_t* row, int64_t nb, const TokenActs<T>& ta, float* y, size_t yStride) {
    constexpr int P = (T + 1) / 2;
    __m512 acc[P];
    for (int p = 0; p < P; ++p) acc[p] = _mm512_setzero_ps();
    const auto* blocks = reinterpret_cast<const BlockQ6_K*>(row);
    for (int64_t b = 0; b < nb; ++b) {
        const BlockQ6_K* x = blocks + b;
        if (kPrefetchInMatMul) prefetchAhead<kPrefetchK, sizeof(BlockQ6_K)>(x);
        const __m256i scales = q6Scales(x);
        __m512i sumi[2 * P];
        if constexpr (T % 2) sumi[T] = _mm512_setzero_si512();
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const __m512i half = broadcast128(h == 0 ? _mm256_castsi256_si128(scales)
                                                               : _mm256_extracti128_si256(scales, 1));
            const __m512i s01 = _mm512_shuffle_epi8(half, control(kQ6Scales[0]));
            const __m512i s23 = _mm512_shuffle_epi8(half, control(kQ6Scales[1]));
            __m512i q01, q23;
            q6Pairs(x, h, q01, q23);
#pragma GCC unroll 8
            for (int t = 0; t < T; ++t) {
                const int8_t* qa = ta.act[t][b].qs + 128 * h;
                const __m512i products = _mm512_maddubs_epi16(q01, load512(qa));
                sumi[t] = h == 0 ? _mm512_madd_epi16(products, s01) : _mm512_dpwssd_epi32(sumi[t], products, s01);
                sumi[t] = _mm512_dpwssd_epi32(sumi[t], _mm512_maddubs_epi16(q23, load512(qa + 64)), s23);
                keepInRegister512(sumi[t]);
            }
        }
        // The -32 offset (see rowQ6_K), 32 * sum_s scale_s * bsum_s, two tokens a vector: the
        // scales times 32 fit int16 (|scale| <= 128), so this is q6Offset's integer.
        const __m512i scales32 = broadcast256(_mm256_slli_epi16(scales, 5));
        const __m512 dScaled = _mm512_castps256_ps512(_mm256_mul_ps(_mm256_set1_ps(halfToFloat(x->d)), tokenScales8<T>(ta, b)));
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) {
            const __m256i bsumsA = load256(ta.act[2 * p][b].bsums);
            const __m256i bsumsB = 2 * p + 1 < T ? load256(ta.act[2 * p + 1][b].bsums) : bsumsA;
            const __m512i offset = _mm512_madd_epi16(scales32, joinHalves(bsumsA, bsumsB));
            const __m512i sums = _mm512_sub_epi32(foldPair(sumi[2 * p], sumi[2 * p + 1]), offset);
            acc[p] = _mm512_fmadd_ps(permuteFloats(pairIndex(p), dScaled), toFloats(sums), acc[p]);
        }
    }
    storePacked<T>(acc, nullptr, y, yStride);
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
