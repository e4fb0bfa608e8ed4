#include "tests/kernels/kernel_test_support.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "kernels/embedded.h"
#include "model/quant/blocks.h"
#include "model/quant/fp16.h"

namespace zinc::kernels::test {

PoclRunner& runner() {
    static PoclRunner instance;
    return instance;
}

const CodeObject& codeObject() {
    static const CodeObject object = CodeObject::parse(embeddedCodeObject("gfx1100"), "embedded gfx1100");
    return object;
}

std::vector<float> randomFloats(std::mt19937& rng, size_t n, float scale) {
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
}

namespace {

void putHalf(uint8_t* p, float v) {
    const uint16_t h = model::fp32ToFp16(v);
    std::memcpy(p, &h, 2);
}

}  // namespace

std::vector<uint8_t> randomWeights(std::mt19937& rng, model::GgmlType type, int64_t rows, int64_t cols) {
    using model::GgmlType;
    const auto& traits = model::traitsOf(type);
    const size_t rowBytes = static_cast<size_t>(model::rowBytes(type, static_cast<uint64_t>(cols)));
    std::vector<uint8_t> data(rowBytes * static_cast<size_t>(rows));
    if (type == GgmlType::F32) {
        const auto v = randomFloats(rng, data.size() / 4, 0.5f);
        std::memcpy(data.data(), v.data(), data.size());
        return data;
    }
    if (type == GgmlType::F16) {
        const auto v = randomFloats(rng, data.size() / 2, 0.5f);
        for (size_t i = 0; i < v.size(); ++i) putHalf(data.data() + 2 * i, v[i]);
        return data;
    }
    if (type == GgmlType::BF16) {
        const auto v = randomFloats(rng, data.size() / 2, 0.5f);
        for (size_t i = 0; i < v.size(); ++i) {
            uint32_t bits;
            std::memcpy(&bits, &v[i], 4);
            const auto h = static_cast<uint16_t>(bits >> 16);
            std::memcpy(data.data() + 2 * i, &h, 2);
        }
        return data;
    }
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> scale(0.001f, 0.05f);
    for (auto& b : data) b = static_cast<uint8_t>(byte(rng));
    for (size_t off = 0; off < data.size(); off += traits.blockBytes) {
        uint8_t* b = data.data() + off;
        switch (type) {
            case GgmlType::Q8_0: putHalf(b, scale(rng)); break;
            case GgmlType::Q4_K:
            case GgmlType::Q5_K:
                putHalf(b, scale(rng));
                putHalf(b + 2, scale(rng));
                break;
            case GgmlType::Q6_K: putHalf(b + 208, scale(rng)); break;
            case GgmlType::Q4_0:
            case GgmlType::Q5_0:
            case GgmlType::IQ4_NL:
            case GgmlType::IQ4_XS: putHalf(b, scale(rng)); break;
            case GgmlType::Q4_1:
            case GgmlType::Q5_1:
                putHalf(b, scale(rng));
                putHalf(b + 2, -scale(rng));
                break;
            case GgmlType::Q2_K:
                putHalf(b + 80, scale(rng));
                putHalf(b + 82, scale(rng));
                break;
            case GgmlType::Q3_K: putHalf(b + 108, scale(rng)); break;
            default: break;
        }
    }
    return data;
}

Diff compare(std::span<const float> got, std::span<const float> want) {
    Diff d;
    for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
        d.maxAbs = std::max(d.maxAbs, std::fabs(static_cast<double>(got[i]) - want[i]));
        d.maxRef = std::max(d.maxRef, std::fabs(static_cast<double>(want[i])));
        uint32_t a, b;
        std::memcpy(&a, &got[i], 4);
        std::memcpy(&b, &want[i], 4);
        if (a != b) ++d.mismatches;
    }
    return d;
}

}  // namespace zinc::kernels::test
