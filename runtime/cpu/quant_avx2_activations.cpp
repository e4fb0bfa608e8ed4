// AVX2 activation quantizers, byte-identical to model/quant/quantize_activations.cpp (the
// specification; tests/quant compares them on random and tie inputs). Q8_0/Q8_1 are the
// AVX form ggml's x86 backend itself runs (ggml-cpu/arch/x86/quants.c quantize_row_q8_0/_1,
// MIT); Q8_K vectorizes quantize_row_q8_K_ref (same products, same round-half-even); F16 is
// F16C's round-to-nearest-even conversion, as ggml's ggml_cpu_fp32_to_fp16.
#include "model/quant/blocks.h"
#include "runtime/cpu/quant_avx2_common.h"
#include "runtime/cpu/quant_kernels.h"

namespace zinc::cpu::kernels::avx2 {
namespace {

using model::BlockQ8_0;
using model::BlockQ8_1;
using model::BlockQ8_K;

inline __m256 absPs(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

inline float maxOf(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

// Round half to even (the default MXCSR mode, as ggml's _MM_ROUND_NEAREST and nearest_int).
inline __m256i roundToInt(__m256 v) {
    return _mm256_cvtps_epi32(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// Four vectors of 8 int32 -> 32 saturated int8 in element order.
inline __m256i packToInt8(__m256i i0, __m256i i1, __m256i i2, __m256i i3) {
    const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(i0, i1), _mm256_packs_epi32(i2, i3));
    return _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

inline int hsumI32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

// One block of 32: writes the quants, returns d (before fp16 rounding) and the sum of quants.
inline float quantizeBlock32(const float* x, int8_t* qs, int& sum) {
    const __m256 v[4] = {_mm256_loadu_ps(x), _mm256_loadu_ps(x + 8), _mm256_loadu_ps(x + 16), _mm256_loadu_ps(x + 24)};
    const float amax = maxOf(_mm256_max_ps(_mm256_max_ps(absPs(v[0]), absPs(v[1])), _mm256_max_ps(absPs(v[2]), absPs(v[3]))));
    const float d = amax / 127.0f;
    const __m256 id = _mm256_set1_ps(amax != 0.0f ? 127.0f / amax : 0.0f);
    __m256i q[4];
    for (int i = 0; i < 4; ++i) q[i] = roundToInt(_mm256_mul_ps(v[i], id));
    sum = hsumI32(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs), packToInt8(q[0], q[1], q[2], q[3]));
    return d;
}

inline uint16_t toHalf(float f) { return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT)); }

}  // namespace

void quantizeQ8_0(const float* x, void* out, int64_t n) {
    auto* y = static_cast<BlockQ8_0*>(out);
    for (int64_t b = 0; b < n / model::kQK; ++b, x += model::kQK) {
        int sum;
        y[b].d = toHalf(quantizeBlock32(x, y[b].qs, sum));
    }
}

void quantizeQ8_1(const float* x, void* out, int64_t n) {
    auto* y = static_cast<BlockQ8_1*>(out);
    for (int64_t b = 0; b < n / model::kQK; ++b, x += model::kQK) {
        int sum;
        const float d = quantizeBlock32(x, y[b].qs, sum);
        y[b].d = toHalf(d);
        y[b].s = toHalf(d * static_cast<float>(sum));
    }
}

void quantizeQ8_K(const float* x, void* out, int64_t n) {
    auto* y = static_cast<BlockQ8_K*>(out);
    constexpr int kQKK = model::kQKK;
    for (int64_t b = 0; b < n / kQKK; ++b, x += kQKK) {
        __m256 m = _mm256_setzero_ps();
        for (int j = 0; j < kQKK; j += 8) m = _mm256_max_ps(m, absPs(_mm256_loadu_ps(x + j)));
        const float amax = maxOf(m);
        if (amax == 0.0f) {
            y[b] = BlockQ8_K{};
            continue;
        }
        // The reference keeps the first element of largest magnitude, with its sign.
        float max = 0.0f;
        for (int j = 0; j < kQKK; j += 8) {
            const int hits = _mm256_movemask_ps(_mm256_cmp_ps(absPs(_mm256_loadu_ps(x + j)), _mm256_set1_ps(amax), _CMP_EQ_OQ));
            if (hits) {
                max = x[j + __builtin_ctz(static_cast<unsigned>(hits))];
                break;
            }
        }
        const float iscale = -127.0f / max;
        const __m256 scale = _mm256_set1_ps(iscale);
        const __m256i limit = _mm256_set1_epi32(127);
        for (int j = 0; j < kQKK; j += 32) {
            __m256i q[4];
            for (int i = 0; i < 4; ++i)
                q[i] = _mm256_min_epi32(roundToInt(_mm256_mul_ps(scale, _mm256_loadu_ps(x + j + 8 * i))), limit);
            const __m256i packed = packToInt8(q[0], q[1], q[2], q[3]);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[b].qs + j), packed);
            // Sums of 8 bytes at a time (biased by +128 each), then of 16.
            const __m256i sad = _mm256_sad_epu8(_mm256_xor_si256(packed, _mm256_set1_epi8(static_cast<char>(0x80))),
                                                _mm256_setzero_si256());
            y[b].bsums[j / 16] = static_cast<int16_t>(_mm256_extract_epi64(sad, 0) + _mm256_extract_epi64(sad, 1) - 2048);
            y[b].bsums[j / 16 + 1] = static_cast<int16_t>(_mm256_extract_epi64(sad, 2) + _mm256_extract_epi64(sad, 3) - 2048);
        }
        y[b].d = 1.0f / iscale;
    }
}

void convertF16(const float* x, void* out, int64_t n) {
    auto* y = static_cast<uint16_t*>(out);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; ++i) y[i] = toHalf(x[i]);
}

}  // namespace zinc::cpu::kernels::avx2
