// AVX2 row kernels for the 32-element block types: Q8_0, Q4_0, Q5_0 against Q8_0
// activations, Q4_1, Q5_1 against Q8_1. Per block: ggml's integer dot (ggml-cpu/arch/x86/
// quants.c ggml_vec_dot_*_q8_*, MIT) scaled by fp16(d_w) * fp16(d_a); the _1 types add
// fp16(m) * fp16(s) of the activation block, as ggml does.
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

}  // namespace

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
