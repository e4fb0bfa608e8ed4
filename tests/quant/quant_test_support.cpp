#include "tests/quant/quant_test_support.h"

#include <cmath>
#include <cstring>

#include "model/quant/blocks.h"
#include "model/quant/dequantize.h"
#include "model/quant/fp16.h"
#include "runtime/cpu/quant_dot.h"

namespace zinc::test {

using model::GgmlType;

const std::vector<GgmlType>& computableWeightTypes() {
    static const std::vector<GgmlType> types = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0,
                                                GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                                                GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q2_K,
                                                GgmlType::Q3_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS};
    return types;
}

std::vector<float> randomFloats(int64_t n, std::mt19937& rng, float stddev) {
    std::normal_distribution<float> dist(0.0f, stddev);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = dist(rng);
    return v;
}

namespace {

uint16_t randomScale(std::mt19937& rng, bool positive) {
    std::uniform_real_distribution<float> mag(1e-3f, 1e-2f);
    const float s = mag(rng);
    return model::fp32ToFp16(positive || (rng() & 1) ? s : -s);
}

// Overwrites the fp16 fields of every block (at byte offsets `halves` in a block) with scales.
void setHalves(std::vector<uint8_t>& row, size_t blockBytes, std::initializer_list<size_t> halves, bool positive,
               std::mt19937& rng) {
    for (size_t b = 0; b < row.size(); b += blockBytes)
        for (size_t off : halves) {
            const uint16_t h = randomScale(rng, positive);
            std::memcpy(&row[b + off], &h, sizeof(h));
        }
}

}  // namespace

std::vector<uint8_t> randomWeightRow(GgmlType type, int64_t k, std::mt19937& rng) {
    const auto& t = model::traitsOf(type);
    std::vector<uint8_t> row(model::rowBytes(type, static_cast<uint64_t>(k)));
    if (type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16) {
        const auto v = randomFloats(k, rng, 0.05f);
        for (int64_t i = 0; i < k; ++i) {
            if (type == GgmlType::F32) std::memcpy(&row[4 * i], &v[i], 4);
            const uint16_t h = type == GgmlType::F16 ? model::fp32ToFp16(v[i]) : model::fp32ToBf16(v[i]);
            if (type != GgmlType::F32) std::memcpy(&row[2 * i], &h, 2);
        }
        return row;
    }
    for (auto& byte : row) byte = static_cast<uint8_t>(rng());
    switch (type) {
        case GgmlType::Q4_0:
        case GgmlType::Q5_0:
        case GgmlType::Q8_0: setHalves(row, t.blockBytes, {0}, false, rng); break;
        case GgmlType::Q4_1:
        case GgmlType::Q5_1: setHalves(row, t.blockBytes, {0, 2}, false, rng); break;
        case GgmlType::Q4_K:
        case GgmlType::Q5_K: setHalves(row, t.blockBytes, {0, 2}, true, rng); break;
        case GgmlType::Q6_K: setHalves(row, t.blockBytes, {offsetof(model::BlockQ6_K, d)}, false, rng); break;
        case GgmlType::Q2_K:
            setHalves(row, t.blockBytes, {offsetof(model::BlockQ2_K, d), offsetof(model::BlockQ2_K, dmin)}, true, rng);
            break;
        case GgmlType::Q3_K: setHalves(row, t.blockBytes, {offsetof(model::BlockQ3_K, d)}, false, rng); break;
        case GgmlType::IQ4_NL:
        case GgmlType::IQ4_XS: setHalves(row, t.blockBytes, {0}, false, rng); break;
        default: break;
    }
    return row;
}

ReferenceDot referenceDot(GgmlType weight, int64_t k, const void* wRow, const void* act) {
    std::vector<float> w(static_cast<size_t>(k)), a(static_cast<size_t>(k));
    model::dequantizeRow(weight, wRow, w.data(), k);
    model::dequantizeRow(cpu::activationType(weight), act, a.data(), k);
    ReferenceDot r{0.0, 0.0};
    for (int64_t i = 0; i < k; ++i) {
        const double p = static_cast<double>(w[i]) * static_cast<double>(a[i]);
        r.value += p;
        r.absSum += std::fabs(p);
    }
    if (weight == GgmlType::Q4_1 || weight == GgmlType::Q5_1) {
        const auto* blocks = static_cast<const model::BlockQ8_1*>(act);
        const size_t wBlockBytes = model::traitsOf(weight).blockBytes;
        for (int64_t b = 0; b < k / model::kQK; ++b) {
            uint16_t mHalf;  // m sits right after d in both BlockQ4_1 and BlockQ5_1
            std::memcpy(&mHalf, static_cast<const uint8_t*>(wRow) + b * wBlockBytes + 2, 2);
            const double m = model::fp16ToFp32(mHalf);
            const double da = model::fp16ToFp32(blocks[b].d);
            long sum = 0;
            for (int j = 0; j < model::kQK; ++j) sum += blocks[b].qs[j];
            r.value += m * (model::fp16ToFp32(blocks[b].s) - da * static_cast<double>(sum));
        }
    }
    return r;
}

}  // namespace zinc::test
