#pragma once
// The K-quant (Q4_K, Q5_K, Q6_K x Q8_K) multi-token row kernels of the AVX2 build
// (quant_avx2_kquants.cpp) and the pieces the AVX-512 VNNI build (quant_vnni_kquants.cpp)
// shares with them: the per-token float accumulation (TokenActs, addSuperBlocks,
// storeTokenSums), the weight unpacking and the tiling (multiToken). Both builds put the
// same integer products into the same int32 lanes (integer sums are exact), so they give
// the same bits. Internal linkage throughout, for the reason given in quant_avx2_common.h;
// include only from files compiled with at least -mavx2 -mfma -mf16c.
#include <utility>

#include "model/quant/blocks.h"
#include "runtime/cpu/quant_avx2_common.h"

namespace zinc::cpu::kernels::avx2 {
namespace {

using model::BlockQ4_K;
using model::BlockQ5_K;
using model::BlockQ6_K;
using model::BlockQ8_K;
using model::kQKK;

// Whether the multi-token kernels prefetch weights ahead (their weight tiles are reused from L2).
constexpr bool kPrefetchInMatMul = true;

// Q4_K/Q5_K scales and mins (see model/quant/k_scales.h) as 16 int16: scales 0..7, mins 0..7.
// Reads 16 bytes at `packed`: the 12 packed bytes and 4 bytes of the same block after them.
inline __m256i unpackScalesMins(const uint8_t* packed) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(packed));  // words u0 u1 u2 -
    const __m128i low6 = _mm_and_si128(v, _mm_set1_epi8(0x3f));                     // sc0-3 | mn0-3
    const __m128i top2 = _mm_and_si128(_mm_srli_epi32(v, 2), _mm_set1_epi8(0x30));  // bits 6-7 of u0 | u1 -> 4-5
    const __m128i nibbles = _mm_and_si128(_mm_srlv_epi32(_mm_shuffle_epi32(v, 0xaa), _mm_setr_epi32(0, 4, 0, 0)),
                                          _mm_set1_epi8(0x0f));                     // u2 low | high nibbles
    const __m128i upper = _mm_or_si128(nibbles, top2);                              // sc4-7 | mn4-7
    const __m128i all = _mm_unpacklo_epi64(low6, upper);                            // sc0-3 mn0-3 sc4-7 mn4-7
    return _mm256_cvtepu8_epi16(_mm_shuffle_epi32(all, _MM_SHUFFLE(3, 1, 2, 0)));
}

// Broadcasts int16 element e of each 128-bit lane to the whole lane.
inline __m256i broadcastI16(__m256i v, int e) {
    return _mm256_shuffle_epi8(v, _mm256_set1_epi16(static_cast<int16_t>(((2 * e + 1) << 8) | (2 * e))));
}

// Lane 0 = int16 element 2g of v (all 8 positions), lane 1 = element 2g + 1 (v has the same
// 8 scales in both lanes).
inline __m256i pairScales(__m256i v, int g) {
    const int16_t lo = static_cast<int16_t>(((4 * g + 1) << 8) | (4 * g));
    const int16_t hi = static_cast<int16_t>(((4 * g + 3) << 8) | (4 * g + 2));
    return _mm256_shuffle_epi8(v, _mm256_setr_epi16(lo, lo, lo, lo, lo, lo, lo, lo, hi, hi, hi, hi, hi, hi, hi, hi));
}

// An empty asm that claims to change v: the compiler can no longer reassociate the integer
// additions across it (it otherwise keeps every token's products live and spills them).
inline void keepInRegister(__m256i& v) { asm("" : "+v"(v)); }

inline __m256 withMinsSubtracted(__m256 acc, __m128 accMin) {
    return _mm256_sub_ps(acc, _mm256_set_m128(_mm_setzero_ps(), accMin));
}

// Brings bit n (0..7) of every byte to bit 4 (other bits are garbage; mask with 0x10).
inline __m256i bitToFour(__m256i v, int n) {
    if (n < 4) return _mm256_slli_epi16(v, 4 - n);
    if (n > 4) return _mm256_srli_epi16(v, n - 4);
    return v;
}

// The row kernels below handle T tokens (1..4) of one weight row at once: the weight block
// is unpacked once and dotted with each token's activations. For every (row, token) the
// integer block sum is exact (so its order of additions does not matter) and the float
// accumulation is the same sequence of operations whatever T is, so a token's result does
// not depend on how many tokens it was processed with (matMul == matVec bit for bit).
// dy: each block's activation scale d for the T tokens, T floats at dy + b * dyStride bytes
// (readable up to 8 floats; lanes past T are finite and unused). sums: the tokens' sub-block
// sums (Q4_K/Q5_K), T entries at sums + b * sumsStride (readable up to a multiple of 4).
template <int T>
struct TokenActs {
    const BlockQ8_K* act[T];
    const uint8_t* dy;
    size_t dyStride;
    const __m128i* sums;
    size_t sumsStride;
};

// The T tokens' d of block b in lanes 0..T-1.
template <int T>
inline __m256 tokenScales(const TokenActs<T>& ta, int64_t b) {
    const auto* p = reinterpret_cast<const float*>(ta.dy + static_cast<size_t>(b) * ta.dyStride);
    if constexpr (T == 1) return _mm256_zextps128_ps256(_mm_load_ss(p));
    if constexpr (T <= 4) return _mm256_zextps128_ps256(_mm_loadu_ps(p));
    return _mm256_loadu_ps(p);
}

// Lane t of v in all 8 lanes of a 256-bit vector.
template <int Lane>
inline __m256 laneToAll(__m256 v) {
    if constexpr (Lane == 0) return _mm256_broadcastss_ps(_mm256_castps256_ps128(v));
    return _mm256_permutevar8x32_ps(v, _mm256_set1_epi32(Lane));
}

// Lane t of v in lanes 0..3, lane t + 1 in lanes 4..7.
template <int Lane>
inline __m256 lanePairToHalves(__m256 v) {
    return _mm256_permutevar8x32_ps(v,
                                    _mm256_setr_epi32(Lane, Lane, Lane, Lane, Lane + 1, Lane + 1, Lane + 1, Lane + 1));
}

// Adds block b of T tokens to the Q4_K/Q5_K accumulators: acc[t] += d * dy_t * sumi[t] and
// the mins term dmin * dy_t * (min_j * subBlockSum_j) into accMin, which holds two tokens per
// register (token 2p in lanes 0..3, 2p + 1 in 4..7). Lane by lane these are the operations
// of a single token's kernel, so the results do not depend on T.
template <int T>
inline void addSuperBlocks(__m256* acc, __m256* accMin, const void* dAndMin, const TokenActs<T>& ta, int64_t b,
                           const __m256i* sumi, __m256i scalesMins) {
    uint32_t halves;
    __builtin_memcpy(&halves, dAndMin, sizeof(halves));
    const __m128 dm = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(halves)));
    const __m256 dy = tokenScales<T>(ta, b);
    const __m256 dScaled = _mm256_mul_ps(_mm256_broadcastss_ps(dm), dy);
    const __m256 minScaled = _mm256_mul_ps(_mm256_broadcastss_ps(_mm_shuffle_ps(dm, dm, 0x55)), dy);
    const __m128i* sums = ta.sums + static_cast<size_t>(b) * ta.sumsStride;
    [&]<int... t>(std::integer_sequence<int, t...>) {
        ((acc[t] = _mm256_fmadd_ps(laneToAll<t>(dScaled), _mm256_cvtepi32_ps(sumi[t]), acc[t])), ...);
    }(std::make_integer_sequence<int, T>{});
    if constexpr (T >= 2) {
        const __m256i mins2 = _mm256_permute2x128_si256(scalesMins, scalesMins, 0x11);
        [&]<int... p>(std::integer_sequence<int, p...>) {
            ((accMin[p] = _mm256_fmadd_ps(lanePairToHalves<2 * p>(minScaled),
                                          _mm256_cvtepi32_ps(_mm256_madd_epi16(mins2, load256(sums + 2 * p))),
                                          accMin[p])),
             ...);
        }(std::make_integer_sequence<int, T / 2>{});
    }
    if constexpr (T % 2 == 1) {
        constexpr int last = T - 1;
        const __m128i minProducts = _mm_madd_epi16(_mm256_extracti128_si256(scalesMins, 1), sums[last]);
        const __m128 m = _mm256_castps256_ps128(laneToAll<last>(minScaled));
        const __m128 prev = _mm256_castps256_ps128(accMin[last / 2]);
        accMin[last / 2] = _mm256_castps128_ps256(_mm_fmadd_ps(m, _mm_cvtepi32_ps(minProducts), prev));
    }
}

// Stores the T tokens' sums (acc[t] minus, for the Q4_K/Q5_K kernels, token t's mins term)
// to y[t * yStride]: the horizontal sums of up to 4 tokens per storeRowSums, which adds
// each lane in the same order as rowSum does for one token.
template <int T>
inline void storeTokenSums(__m256* acc, const __m256* accMin, float* y, size_t yStride) {
    if (accMin)
        for (int t = 0; t < T; ++t)
            acc[t] = withMinsSubtracted(acc[t], t % 2 ? _mm256_extractf128_ps(accMin[t / 2], 1)
                                                      : _mm256_castps256_ps128(accMin[t / 2]));
    float out[T];
    for (int t0 = 0; t0 < T; t0 += 4) storeRowSums(acc + t0, T - t0 < 4 ? T - t0 : 4, out + t0);
    for (int t = 0; t < T; ++t) y[static_cast<size_t>(t) * yStride] = out[t];
}

// The unsigned quants of chunk c (elements 64c..64c+63) of a Q4_K / Q5_K super-block: lo =
// the 32 low-nibble elements, hi = the 32 high-nibble ones. Q5_K: the fifth bit of element
// 32c + l (low nibbles) is bit 2c of qh[l]; of the high-nibble element, bit 2c + 1.
inline void chunkQuants(const BlockQ4_K* x, int c, __m256i& lo, __m256i& hi) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m256i q4 = load256(x->qs + 32 * c);
    lo = _mm256_and_si256(q4, m4);
    hi = _mm256_and_si256(_mm256_srli_epi16(q4, 4), m4);
}
inline void chunkQuants(const BlockQ5_K* x, int c, __m256i& lo, __m256i& hi) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m256i bit4 = _mm256_set1_epi8(0x10);
    const __m256i q4 = load256(x->qs + 32 * c);
    const __m256i qh = load256(x->qh);
    lo = _mm256_or_si256(_mm256_and_si256(q4, m4), _mm256_and_si256(bitToFour(qh, 2 * c), bit4));
    hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q4, 4), m4),
                         _mm256_and_si256(bitToFour(qh, 2 * c + 1), bit4));
}

// A Q6_K block's 16 scales as int16: lane 0 = sub-blocks 0..7 (half 0), lane 1 = 8..15 (half 1).
inline __m256i q6Scales(const BlockQ6_K* x) {
    return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x->scales)));
}
// The -32 of every Q6_K quant against activation block a, as 8 int32 (subtracted from the
// unsigned quants' sums): 32 * scale_s * bsum_s, two sub-blocks of 16 per lane.
inline __m256i q6Offset(__m256i scales, const BlockQ8_K& a) {
    return _mm256_slli_epi32(_mm256_madd_epi16(scales, load256(a.bsums)), 5);
}
// Half h's 8 scales in both lanes (group g then uses sub-blocks 2g in lane 0, 2g + 1 in lane 1).
inline __m256i q6HalfScales(__m256i scales, int h) {
    return h == 0 ? _mm256_permute2x128_si256(scales, scales, 0x00) : _mm256_permute2x128_si256(scales, scales, 0x11);
}

// The unsigned (0..63) quants of half h (elements 128h..128h+127) of a Q6_K block, 4 groups
// of 32: group g takes low bits from ql[64h + 32(g&1) + l] (low nibble for g < 2, high for
// g >= 2) and bits 2g..2g+1 of qh[32h + l].
inline void q6Groups(const BlockQ6_K* x, int h, __m256i* q) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m256i m2 = _mm256_set1_epi8(0x03);
    const __m256i ql0 = load256(x->ql + 64 * h);
    const __m256i ql1 = load256(x->ql + 64 * h + 32);
    const __m256i qh = load256(x->qh + 32 * h);
    q[0] = _mm256_or_si256(_mm256_and_si256(ql0, m4), _mm256_slli_epi16(_mm256_and_si256(qh, m2), 4));
    q[1] = _mm256_or_si256(_mm256_and_si256(ql1, m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), m2), 4));
    q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4),
                           _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), m2), 4));
    q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                           _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), m2), 4));
}

// One Q4_K or Q5_K row against T tokens: each super-block is unpacked once for all of them.
template <int T, class Block>
void rowNibbleK(const uint8_t* row, int64_t nb, const TokenActs<T>& ta, float* y, size_t yStride) {
    __m256 acc[T], accMin[(T + 1) / 2];
    for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
    for (int p = 0; p < (T + 1) / 2; ++p) accMin[p] = _mm256_setzero_ps();
    const auto* blocks = reinterpret_cast<const Block*>(row);
    for (int64_t b = 0; b < nb; ++b) {
        const Block* x = blocks + b;
        if (kPrefetchInMatMul) prefetchAhead<kPrefetchK, sizeof(Block)>(x);
        const __m256i scalesMins = unpackScalesMins(x->scales);
        const __m256i scales = _mm256_permute2x128_si256(scalesMins, scalesMins, 0x00);
        __m256i sumi[T];
        for (int t = 0; t < T; ++t) sumi[t] = _mm256_setzero_si256();
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
            __m256i lo, hi;
            chunkQuants(x, c, lo, hi);
            const __m256i sLo = broadcastI16(scales, 2 * c);
            const __m256i sHi = broadcastI16(scales, 2 * c + 1);
#pragma GCC unroll 4
            for (int t = 0; t < T; ++t) {
                const int8_t* qa = ta.act[t][b].qs + 64 * c;
                const __m256i pLo = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load256(qa)), sLo);
                const __m256i pHi = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load256(qa + 32)), sHi);
                sumi[t] = _mm256_add_epi32(sumi[t], _mm256_add_epi32(pLo, pHi));
                keepInRegister(sumi[t]);
            }
        }
        addSuperBlocks<T>(acc, accMin, &x->d, ta, b, sumi, scalesMins);
    }
    storeTokenSums<T>(acc, accMin, y, yStride);
}

// Q6_K: in half h, group g (32 elements 128h + 32g + l) takes low bits from ql[64h + 32(g&1)
// + l] (low nibble for g < 2, high for g >= 2) and bits 2g..2g+1 of qh[32h + l]. The quants
// are used unsigned (0..63) and the -32 comes back as 32 * sum_s scale_s * bsum_s.
template <int T>
void rowQ6_K(const uint8_t* row, int64_t nb, const TokenActs<T>& ta, float* y, size_t yStride) {
    __m256 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
    const auto* blocks = reinterpret_cast<const BlockQ6_K*>(row);
    for (int64_t b = 0; b < nb; ++b) {
        const BlockQ6_K* x = blocks + b;
        if (kPrefetchInMatMul) prefetchAhead<kPrefetchK, sizeof(BlockQ6_K)>(x);
        const __m256i scales = q6Scales(x);
        __m256i sumi[T];
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t)
            sumi[t] = _mm256_sub_epi32(_mm256_setzero_si256(), q6Offset(scales, ta.act[t][b]));
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const __m256i halfScales = q6HalfScales(scales, h);
            __m256i q[4];
            q6Groups(x, h, q);
#pragma GCC unroll 4
            for (int g = 0; g < 4; ++g) {
                const __m256i s = pairScales(halfScales, g);
#pragma GCC unroll 4
                for (int t = 0; t < T; ++t) {
                    const __m256i p16 = _mm256_maddubs_epi16(q[g], load256(ta.act[t][b].qs + 128 * h + 32 * g));
                    sumi[t] = _mm256_add_epi32(sumi[t], _mm256_madd_epi16(p16, s));
                    keepInRegister(sumi[t]);
                }
            }
        }
        const __m256 dScaled = _mm256_mul_ps(_mm256_set1_ps(halfToFloat(x->d)), tokenScales<T>(ta, b));
        [&]<int... t>(std::integer_sequence<int, t...>) {
            ((acc[t] = _mm256_fmadd_ps(laneToAll<t>(dScaled), _mm256_cvtepi32_ps(sumi[t]), acc[t])), ...);
        }(std::make_integer_sequence<int, T>{});
    }
    storeTokenSums<T>(acc, nullptr, y, yStride);
}

// Row kernel for T tokens starting at token t0 of a chunk of n tokens (activations `acts`;
// d and sub-block sums block-major: entry b * n + t), over all rows.
template <int T, class Rows>
void rowsForTokens(const uint8_t* base, size_t wStride, int64_t rows, int64_t nb, const BlockQ8_K* acts,
                   const float* dys, const __m128i* sums, int64_t n, int64_t t0, float* y, size_t yStride) {
    TokenActs<T> ta;
    for (int t = 0; t < T; ++t) ta.act[t] = acts + (t0 + t) * nb;
    ta.dy = reinterpret_cast<const uint8_t*>(dys + t0);
    ta.dyStride = static_cast<size_t>(n) * sizeof(float);
    ta.sums = sums + t0;
    ta.sumsStride = static_cast<size_t>(n);
    float* yt = y + static_cast<size_t>(t0) * yStride;
    for (int64_t r = 0; r < rows; ++r)
        Rows::template run<T>(base + static_cast<size_t>(r) * wStride, nb, ta, yt + r, yStride);
}

// The last left (1..Max) tokens of a chunk, as one group of that many.
template <int Max, class Rows>
void tokensTail(int64_t left, const uint8_t* base, size_t wStride, int64_t rows, int64_t nb, const BlockQ8_K* acts,
                const float* dys, const __m128i* sums, int64_t n, int64_t t0, float* y, size_t yStride) {
    if constexpr (Max >= 1) {
        if (left == Max) return rowsForTokens<Max, Rows>(base, wStride, rows, nb, acts, dys, sums, n, t0, y, yStride);
        tokensTail<Max - 1, Rows>(left, base, wStride, rows, nb, acts, dys, sums, n, t0, y, yStride);
    }
}

// The row kernels as types (rowsForTokens' Rows): Q4_K/Q5_K by block type, and Q6_K.
template <class Block>
struct NibbleKRows {
    template <int T>
    static void run(const uint8_t* row, int64_t nb, const TokenActs<T>& ta, float* y, size_t s) {
        rowNibbleK<T, Block>(row, nb, ta, y, s);
    }
};
struct Q6KRows {
    template <int T>
    static void run(const uint8_t* row, int64_t nb, const TokenActs<T>& ta, float* y, size_t s) {
        rowQ6_K<T>(row, nb, ta, y, s);
    }
};

// Tiling: a chunk of tokens (their activations stay in L2) times a tile of weight rows
// (stays in L2 too), in groups of Group tokens (4 or 8) whose activations sit in L1 while
// each weight row of the tile is unpacked once for the whole group.
constexpr size_t kKWeightTileBytes = 128 * 1024;
constexpr int64_t kKTokenChunk = 64;

template <class Row, int Group>
void multiToken(int64_t k, const void* w, size_t wStride, int64_t rows, const void* acts, int64_t nTokens, float* y,
                size_t yStride, bool usesMins) {
    const auto* a = static_cast<const BlockQ8_K*>(acts);
    const auto* base = static_cast<const uint8_t*>(w);
    const int64_t nb = k / kQKK;
    const int64_t fit = static_cast<int64_t>(kKWeightTileBytes / (wStride ? wStride : 1));
    const int64_t tileRows = fit > 1 ? fit : 1;
    for (int64_t c0 = 0; c0 < nTokens; c0 += kKTokenChunk) {
        const int64_t c1 = nTokens - c0 < kKTokenChunk ? nTokens : c0 + kKTokenChunk;
        // The chunk's activation scales and sub-block sums, block-major, padded for the
        // 8-float and 4-entry loads; raw arrays (see SubBlockSums).
        const int64_t n = c1 - c0;
        float* dys = new float[static_cast<size_t>(nb * n + 8)];
        __m128i* sums = new __m128i[static_cast<size_t>(usesMins ? nb * n + 3 : 1)];
        for (int64_t t = 0; t < n; ++t)
            for (int64_t b = 0; b < nb; ++b) {
                const BlockQ8_K& blk = a[(c0 + t) * nb + b];
                dys[b * n + t] = blk.d;
                if (usesMins) {
                    const __m256i bs = load256(blk.bsums);
                    sums[b * n + t] = _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1));
                }
            }
        for (int i = 0; i < 8; ++i) dys[nb * n + i] = 0.0f;
        if (usesMins)
            for (int i = 0; i < 3; ++i) sums[nb * n + i] = _mm_setzero_si128();
        const BlockQ8_K* ca = a + c0 * nb;
        float* cy = y + static_cast<size_t>(c0) * yStride;
        for (int64_t r0 = 0; r0 < rows; r0 += tileRows) {
            const int64_t nr = rows - r0 < tileRows ? rows - r0 : tileRows;
            const uint8_t* tw = base + static_cast<size_t>(r0) * wStride;
            float* ty = cy + r0;
            int64_t t = 0;
            for (; t + Group <= n; t += Group)
                rowsForTokens<Group, Row>(tw, wStride, nr, nb, ca, dys, sums, n, t, ty, yStride);
            if (t < n) tokensTail<Group - 1, Row>(n - t, tw, wStride, nr, nb, ca, dys, sums, n, t, ty, yStride);
        }
        delete[] dys;
        delete[] sums;
    }
}

}  // namespace
}  // namespace zinc::cpu::kernels::avx2
