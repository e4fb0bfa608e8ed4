#include "model/make_model/weight_gen.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/make_model/rng.h"
#include "model/model_error.h"
#include "model/quant/blocks.h"
#include "model/quant/fp16.h"

// Block layouts and value formulas: ggml/src/ggml-common.h and ggml-quants.c (MIT).
//   Q4_0 d*(q-8)  Q4_1 d*q+m  Q5_0 d*(q-16)  Q5_1 d*q+m  Q8_0 d*q
//   Q4_K/Q5_K d*sc[j]*q - dmin*m[j] per 32-element sub-block j
//   Q6_K d*sc[j]*(q-32) per 16-element sub-block j (sc signed)
//   Q2_K d*sc[j]*q - dmin*m[j] per 16-element sub-block j   Q3_K d*(s[j]-32)*q, q in -4..3
//   IQ4_NL d*v[q]   IQ4_XS d*(s[j]-32)*v[q] per 32-element sub-block j (v: kIq4nlValues)
// With q uniform over its range, E[(q-c)^2] is a closed form; each block's scale is set from
// it so that the RMS of the weights is the requested std.

namespace zinc::model {
namespace {

using make_model::BlockRng;

constexpr uint64_t kPlainUnit = 256;
// Each block's overall scale is std * u with u ~ U(0.75, 1.25), so blocks differ; divide by
// the RMS of u (sqrt(1 + 0.5^2/12)) to keep the overall std.
constexpr float kURms = 1.0103630f;

float blockScale(BlockRng& rng, float std, float quantRms) {
    return std * rng.uniform(0.75f, 1.25f) / (quantRms * kURms);
}

float halfRoundTrip(float x) { return fp16ToFp32(fp32ToFp16(x)); }

template <class Block>
void store(const Block& b, uint8_t* out) {
    std::memcpy(out, &b, sizeof(Block));
}

// Q8_0: q in [-127, 127] as llama.cpp's quantizer writes; a drawn -128 becomes 0, which
// keeps the distribution symmetric: E[q^2] = 2 * (127 * 128 * 255 / 6) / 256 = 5397.5.
void genQ8_0(BlockRng& rng, float std, uint8_t* out) {
    BlockQ8_0 b;
    b.d = fp32ToFp16(blockScale(rng, std, std::sqrt(5397.5f)));
    rng.fillBytes(reinterpret_cast<uint8_t*>(b.qs), kQK);
    for (auto& q : b.qs) q = q == -128 ? int8_t{0} : q;
    store(b, out);
}

// Q4_0 / Q5_0: symmetric, so the sign of d is random (as llama.cpp's quantizer produces: d
// takes the sign of the block's largest magnitude) and the q-8 / q-16 offset averages out.
void genQ4_0(BlockRng& rng, float std, uint8_t* out) {
    BlockQ4_0 b;
    const float d = blockScale(rng, std, std::sqrt(21.5f));
    b.d = fp32ToFp16(rng.coin() ? d : -d);
    rng.fillBytes(b.qs, sizeof b.qs);
    store(b, out);
}

void genQ5_0(BlockRng& rng, float std, uint8_t* out) {
    BlockQ5_0 b;
    const float d = blockScale(rng, std, std::sqrt(85.5f));
    b.d = fp32ToFp16(rng.coin() ? d : -d);
    rng.fillBytes(b.qh, sizeof b.qh);
    rng.fillBytes(b.qs, sizeof b.qs);
    store(b, out);
}

// Q4_1 / Q5_1: m cancels the mean of d*q, with a little noise so that m is not just -c*d.
void genQ4_1(BlockRng& rng, float std, uint8_t* out) {
    BlockQ4_1 b;
    const float d = halfRoundTrip(blockScale(rng, std, std::sqrt(21.25f)));
    b.d = fp32ToFp16(d);
    b.m = fp32ToFp16(-7.5f * d * rng.uniform(0.98f, 1.02f));
    rng.fillBytes(b.qs, sizeof b.qs);
    store(b, out);
}

void genQ5_1(BlockRng& rng, float std, uint8_t* out) {
    BlockQ5_1 b;
    const float d = halfRoundTrip(blockScale(rng, std, std::sqrt(85.25f)));
    b.d = fp32ToFp16(d);
    b.m = fp32ToFp16(-15.5f * d * rng.uniform(0.98f, 1.02f));
    rng.fillBytes(b.qh, sizeof b.qh);
    rng.fillBytes(b.qs, sizeof b.qs);
    store(b, out);
}

// Inverse of get_scale_min_k4: 8 six-bit scales and mins into 12 bytes.
void packScaleMinK4(const uint8_t sc[8], const uint8_t m[8], uint8_t packed[12]) {
    for (int j = 0; j < 4; ++j) {
        packed[j] = static_cast<uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
        packed[j + 4] = static_cast<uint8_t>((m[j] & 63) | ((m[j + 4] >> 4) << 6));
        packed[j + 8] = static_cast<uint8_t>((sc[j + 4] & 15) | ((m[j + 4] & 15) << 4));
    }
}

// Q4_K / Q5_K: sub-block scales in [24, 63], d from their RMS; each sub-block's min
// cancels its mean (qMean * d * sc), expressed in dmin units with the largest min = 63.
void genKScalesAndMins(BlockRng& rng, float std, float qMean, float qVar, uint16_t& dOut, uint16_t& dminOut,
                       uint8_t packed[12]) {
    uint8_t sc[8], m[8];
    float sumSq = 0.0f;
    for (auto& s : sc) {
        s = static_cast<uint8_t>(rng.uniformInt(24, 63));
        sumSq += static_cast<float>(s) * s;
    }
    const float d = halfRoundTrip(blockScale(rng, std, std::sqrt(qVar * sumSq / 8.0f)));
    const float maxMin = qMean * d * *std::max_element(sc, sc + 8);
    const float dmin = halfRoundTrip(maxMin / 63.0f);
    for (int j = 0; j < 8; ++j) {
        const float mj = std::round(qMean * d * sc[j] / dmin);
        m[j] = static_cast<uint8_t>(std::clamp(mj, 0.0f, 63.0f));
    }
    dOut = fp32ToFp16(d);
    dminOut = fp32ToFp16(dmin);
    packScaleMinK4(sc, m, packed);
}

void genQ4_K(BlockRng& rng, float std, uint8_t* out) {
    BlockQ4_K b;
    genKScalesAndMins(rng, std, 7.5f, 21.25f, b.d, b.dmin, b.scales);
    rng.fillBytes(b.qs, sizeof b.qs);
    store(b, out);
}

void genQ5_K(BlockRng& rng, float std, uint8_t* out) {
    BlockQ5_K b;
    genKScalesAndMins(rng, std, 15.5f, 85.25f, b.d, b.dmin, b.scales);
    rng.fillBytes(b.qh, sizeof b.qh);
    rng.fillBytes(b.qs, sizeof b.qs);
    store(b, out);
}

// Q6_K: 16 signed scales of magnitude 16..127 and random sign, so that a wrong scale index
// or sign handling changes the weights; E[(q-32)^2] = 341.5.
void genQ6_K(BlockRng& rng, float std, uint8_t* out) {
    BlockQ6_K b;
    float sumSq = 0.0f;
    for (auto& s : b.scales) {
        const int mag = rng.uniformInt(16, 127);
        s = static_cast<int8_t>(rng.coin() ? mag : -mag);
        sumSq += static_cast<float>(mag) * mag;
    }
    b.d = fp32ToFp16(blockScale(rng, std, std::sqrt(341.5f * sumSq / 16.0f)));
    rng.fillBytes(b.ql, sizeof b.ql);
    rng.fillBytes(b.qh, sizeof b.qh);
    store(b, out);
}

// Q2_K: scales 8..15 and each sub-block's min equal to its scale with dmin = 1.5 d, so the
// min cancels the mean of q in 0..3: weights d*sc*(q - 1.5), E[(q - 1.5)^2] = 1.25.
void genQ2_K(BlockRng& rng, float std, uint8_t* out) {
    BlockQ2_K b;
    float sumSq = 0.0f;
    for (auto& s : b.scales) {
        const int sc = rng.uniformInt(8, 15);
        s = static_cast<uint8_t>(sc | (sc << 4));
        sumSq += static_cast<float>(sc * sc);
    }
    const float d = halfRoundTrip(blockScale(rng, std, std::sqrt(1.25f * sumSq / 16.0f)));
    b.d = fp32ToFp16(d);
    b.dmin = fp32ToFp16(1.5f * d);
    rng.fillBytes(b.qs, sizeof b.qs);
    store(b, out);
}

// Q3_K: random bytes everywhere; a 6-bit scale uniform over 0..63 less 32 has E[s^2] = 341.5,
// q uniform over -4..3 has E[q^2] = 5.5 (its mean, -0.5, averages out over the signed scales).
void genQ3_K(BlockRng& rng, float std, uint8_t* out) {
    BlockQ3_K b;
    rng.fillBytes(b.hmask, sizeof b.hmask);
    rng.fillBytes(b.qs, sizeof b.qs);
    rng.fillBytes(b.scales, sizeof b.scales);
    b.d = fp32ToFp16(blockScale(rng, std, std::sqrt(5.5f * 341.5f)));
    store(b, out);
}

// IQ4_NL / IQ4_XS: the 16 levels have E[v^2] = 4548 (mean -5.9: a random sign of d cancels it).
constexpr float kIq4MeanSquare = 4548.0f;

void genIQ4_NL(BlockRng& rng, float std, uint8_t* out) {
    BlockIQ4_NL b;
    const float d = blockScale(rng, std, std::sqrt(kIq4MeanSquare));
    b.d = fp32ToFp16(rng.coin() ? d : -d);
    rng.fillBytes(b.qs, sizeof b.qs);
    store(b, out);
}

void genIQ4_XS(BlockRng& rng, float std, uint8_t* out) {
    BlockIQ4_XS b;
    rng.fillBytes(b.scalesL, sizeof b.scalesL);
    rng.fillBytes(reinterpret_cast<uint8_t*>(&b.scalesH), sizeof b.scalesH);
    rng.fillBytes(b.qs, sizeof b.qs);
    const float d = blockScale(rng, std, std::sqrt(341.5f * kIq4MeanSquare));
    b.d = fp32ToFp16(rng.coin() ? d : -d);
    store(b, out);
}

using BlockGen = void (*)(BlockRng&, float, uint8_t*);

BlockGen blockGenerator(GgmlType type) {
    switch (type) {
    case GgmlType::Q4_0: return genQ4_0;
    case GgmlType::Q4_1: return genQ4_1;
    case GgmlType::Q5_0: return genQ5_0;
    case GgmlType::Q5_1: return genQ5_1;
    case GgmlType::Q8_0: return genQ8_0;
    case GgmlType::Q4_K: return genQ4_K;
    case GgmlType::Q5_K: return genQ5_K;
    case GgmlType::Q6_K: return genQ6_K;
    case GgmlType::Q2_K: return genQ2_K;
    case GgmlType::Q3_K: return genQ3_K;
    case GgmlType::IQ4_NL: return genIQ4_NL;
    case GgmlType::IQ4_XS: return genIQ4_XS;
    default: return nullptr;
    }
}

bool isPlain(GgmlType type) { return type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16; }

void genPlain(GgmlType type, BlockRng& rng, const WeightInit& init, uint64_t n, uint8_t* out) {
    for (uint64_t i = 0; i < n; ++i) {
        const float v = init.mean + init.std * rng.normal();
        if (type == GgmlType::F32) {
            std::memcpy(out + 4 * i, &v, 4);
        } else {
            const uint16_t h = type == GgmlType::F16 ? fp32ToFp16(v) : fp32ToBf16(v);
            std::memcpy(out + 2 * i, &h, 2);
        }
    }
}

}  // namespace

uint64_t genUnitElems(GgmlType type) { return isPlain(type) ? kPlainUnit : traitsOf(type).blockElems; }

uint64_t genUnitCount(GgmlType type, uint64_t elements) {
    const uint64_t unit = genUnitElems(type);
    return (elements + unit - 1) / unit;
}

uint64_t genUnitBytes(GgmlType type) {
    return isPlain(type) ? kPlainUnit * traitsOf(type).blockBytes : traitsOf(type).blockBytes;
}

bool canGenerate(GgmlType type) { return isPlain(type) || blockGenerator(type) != nullptr; }

uint64_t generateUnits(GgmlType type, const WeightInit& init, uint64_t seed, uint64_t tensorIndex,
                       uint64_t elements, uint64_t firstUnit, uint64_t nUnits, uint8_t* out) {
    if (!canGenerate(type)) {
        throw ModelError("make-model cannot generate " + std::string(ggmlTypeName(type)) + " weights");
    }
    uint64_t written = 0;
    if (isPlain(type)) {
        const uint64_t elemBytes = traitsOf(type).blockBytes;
        for (uint64_t u = firstUnit; u < firstUnit + nUnits; ++u) {
            BlockRng rng(seed, tensorIndex, u);
            const uint64_t n = std::min(kPlainUnit, elements - u * kPlainUnit);
            genPlain(type, rng, init, n, out + written);
            written += n * elemBytes;
        }
        return written;
    }
    if (init.mean != 0.0f) throw ModelError("make-model: quantized weights must have zero mean");
    const BlockGen gen = blockGenerator(type);
    const uint64_t blockBytes = traitsOf(type).blockBytes;
    for (uint64_t u = firstUnit; u < firstUnit + nUnits; ++u) {
        BlockRng rng(seed, tensorIndex, u);
        gen(rng, init.std, out + written);
        written += blockBytes;
    }
    return written;
}

}  // namespace zinc::model
