#include "model/quant/quantize_activations.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "model/model_error.h"
#include "model/quant/fp16.h"

// Float expressions here must stay exactly as written (no FMA contraction, no fast-math):
// the project builds with -std=c++20, for which GCC defaults to -ffp-contract=off.
namespace zinc::model {
namespace {

int64_t blockCount(int64_t n, int blockElems, const char* what) {
    if (n < 0 || n % blockElems != 0)
        throw ModelError(std::string(what) + ": row of " + std::to_string(n) +
                         " elements is not a multiple of " + std::to_string(blockElems));
    return n / blockElems;
}

float absMax(const float* x, int n) {
    float amax = 0.0f;
    for (int j = 0; j < n; ++j) amax = std::max(amax, std::fabs(x[j]));
    return amax;
}

// ggml's nearest_int: adding 1.5 * 2^23 leaves the rounded integer in the low mantissa bits
// (round half to even under the default rounding mode). Valid for |f| <= 2^22 - 1.
int nearestInt(float f) {
    const float shifted = f + 12582912.0f;
    return static_cast<int>(std::bit_cast<uint32_t>(shifted) & 0x007fffffu) - 0x00400000;
}

// _mm256_round_ps(v, _MM_ROUND_NEAREST), _mm256_cvtps_epi32 and the saturating packs: ties to
// even like nearestInt (|v| <= 127 + a few ulp here, well inside its range).
int8_t roundHalfEvenToInt8(float v) { return static_cast<int8_t>(std::clamp(nearestInt(v), -128, 127)); }

// Quantizes one block of 32 as ggml's x86 AVX branch; returns d (before fp16 rounding) and
// the sum of the quants.
float quantizeBlockX86(const float* x, int8_t* qs, int& sum) {
    const float amax = absMax(x, kQK);
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    sum = 0;
    for (int j = 0; j < kQK; ++j) {
        qs[j] = roundHalfEvenToInt8(x[j] * id);
        sum += qs[j];
    }
    return d;
}

float quantizeBlockReference(const float* x, int8_t* qs, int& sum) {
    const float amax = absMax(x, kQK);
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    sum = 0;
    for (int j = 0; j < kQK; ++j) {
        qs[j] = static_cast<int8_t>(std::round(x[j] * id));
        sum += qs[j];
    }
    return d;
}

}  // namespace

void quantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n) {
    const int64_t nb = blockCount(n, kQK, "quantizeRowQ8_0");
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        int sum;
        y[i].d = fp32ToFp16(quantizeBlockX86(x, y[i].qs, sum));
    }
}

void quantizeRowQ8_1(const float* x, BlockQ8_1* y, int64_t n) {
    const int64_t nb = blockCount(n, kQK, "quantizeRowQ8_1");
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        int sum;
        const float d = quantizeBlockX86(x, y[i].qs, sum);
        y[i].d = fp32ToFp16(d);
        y[i].s = fp32ToFp16(d * static_cast<float>(sum));
    }
}

void quantizeRowQ8_0Reference(const float* x, BlockQ8_0* y, int64_t n) {
    const int64_t nb = blockCount(n, kQK, "quantizeRowQ8_0Reference");
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        int sum;
        y[i].d = fp32ToFp16(quantizeBlockReference(x, y[i].qs, sum));
    }
}

void quantizeRowQ8_1Reference(const float* x, BlockQ8_1* y, int64_t n) {
    const int64_t nb = blockCount(n, kQK, "quantizeRowQ8_1Reference");
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        int sum;
        const float d = quantizeBlockReference(x, y[i].qs, sum);
        y[i].d = fp32ToFp16(d);
        y[i].s = fp32ToFp16(static_cast<float>(sum) * d);
    }
}

void quantizeRowQ8_K(const float* x, BlockQ8_K* y, int64_t n) {
    const int64_t nb = blockCount(n, kQKK, "quantizeRowQ8_K");
    for (int64_t i = 0; i < nb; ++i, x += kQKK) {
        float max = 0.0f, amax = 0.0f;  // the first element of largest magnitude, with its sign
        for (int j = 0; j < kQKK; ++j) {
            const float ax = std::fabs(x[j]);
            if (ax > amax) {
                amax = ax;
                max = x[j];
            }
        }
        if (amax == 0.0f) {
            y[i] = BlockQ8_K{};  // ggml leaves bsums unwritten here; zero is what they sum to
            continue;
        }
        const float iscale = -127.0f / max;
        for (int j = 0; j < kQKK; ++j) y[i].qs[j] = static_cast<int8_t>(std::min(127, nearestInt(iscale * x[j])));
        for (int g = 0; g < kQKK / 16; ++g) {
            int sum = 0;
            for (int j = 0; j < 16; ++j) sum += y[i].qs[16 * g + j];
            y[i].bsums[g] = static_cast<int16_t>(sum);
        }
        y[i].d = 1.0f / iscale;
    }
}

void convertRowF16(const float* x, uint16_t* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = fp32ToFp16(x[i]);
}

void convertRowBF16(const float* x, uint16_t* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = fp32ToBf16(x[i]);
}

}  // namespace zinc::model
