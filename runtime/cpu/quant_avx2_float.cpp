// AVX2 row kernels for float weights: F32 x F32, F16 x F16 and BF16 x BF16 (activations
// already rounded to the weight's format, as ggml's vec_dot_type), products accumulated in
// fp32 with FMA like ggml_vec_dot_f32/_f16/_bf16 (ggml-cpu/vec.cpp, MIT).
#include "model/quant/blocks.h"
#include "runtime/cpu/quant_avx2_common.h"
#include "runtime/cpu/quant_kernels.h"

namespace zinc::cpu::kernels::avx2 {
namespace {

struct F32 {
    using Elem = float;
    static __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
    static float scalar(float v) { return v; }
};
struct F16 {
    using Elem = uint16_t;
    static __m256 load8(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
    static float scalar(uint16_t v) { return halfToFloat(v); }
};
struct BF16 {
    using Elem = uint16_t;
    static __m256 load8(const uint16_t* p) {
        const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
    }
    static float scalar(uint16_t v) { return __builtin_bit_cast(float, static_cast<uint32_t>(v) << 16); }
};

// Two accumulators per row (16 elements a step), then 8 at a time, then a scalar tail; the
// same sequence for every row whatever R is.
template <typename Fmt, int R>
void rowsFloat(const uint8_t* w, size_t stride, int64_t k, const typename Fmt::Elem* a, float* y) {
    using Elem = typename Fmt::Elem;
    const Elem* x[R];
    for (int r = 0; r < R; ++r) x[r] = reinterpret_cast<const Elem*>(w + r * stride);
    __m256 acc0[R], acc1[R];
    for (int r = 0; r < R; ++r) acc0[r] = _mm256_setzero_ps(), acc1[r] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= k; i += 16) {
        const __m256 a0 = Fmt::load8(a + i), a1 = Fmt::load8(a + i + 8);
        for (int r = 0; r < R; ++r) {
            prefetchAhead<kPrefetchLegacy, 16 * sizeof(Elem)>(x[r] + i);
            acc0[r] = _mm256_fmadd_ps(Fmt::load8(x[r] + i), a0, acc0[r]);
            acc1[r] = _mm256_fmadd_ps(Fmt::load8(x[r] + i + 8), a1, acc1[r]);
        }
    }
    if (i + 8 <= k) {
        const __m256 a0 = Fmt::load8(a + i);
        for (int r = 0; r < R; ++r) acc0[r] = _mm256_fmadd_ps(Fmt::load8(x[r] + i), a0, acc0[r]);
        i += 8;
    }
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_add_ps(acc0[r], acc1[r]);
    storeRowSums(acc, R, y);
    for (int r = 0; r < R; ++r)
        for (int64_t j = i; j < k; ++j) y[r] += Fmt::scalar(x[r][j]) * Fmt::scalar(a[j]);
}

template <typename Fmt>
void run(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    const auto* a = static_cast<const typename Fmt::Elem*>(act);
    forRowGroups<kLegacyRowGroup>(
        w, wStride, rows, y, [&](const uint8_t* rw, float* out) { rowsFloat<Fmt, kLegacyRowGroup>(rw, wStride, k, a, out); },
        [&](const uint8_t* rw, float* out) { rowsFloat<Fmt, 1>(rw, wStride, k, a, out); });
}

}  // namespace

void matVecF32(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    run<F32>(k, w, wStride, rows, act, y);
}
void matVecF16(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    run<F16>(k, w, wStride, rows, act, y);
}
void matVecBF16(int64_t k, const void* w, size_t wStride, int64_t rows, const void* act, float* y) {
    run<BF16>(k, w, wStride, rows, act, y);
}

}  // namespace zinc::cpu::kernels::avx2
