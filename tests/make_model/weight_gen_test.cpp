// Generated blocks: deterministic per (seed, tensor, block), independent of how the work is
// split, every scale field varying, and — dequantized with the runtime's own dequantizer —
// zero-mean weights with the requested standard deviation.
#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "model/make_model/weight_gen.h"
#include "model/quant/blocks.h"
#include "model/quant/fp16.h"

#if __has_include("model/quant/dequantize.h")
#include "model/quant/dequantize.h"
#define ZINC_HAVE_DEQUANTIZE 1
#endif

namespace zinc::model {
namespace {

const GgmlType kTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0,
                           GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                           GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q2_K,
                           GgmlType::Q3_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS};

std::vector<uint8_t> generate(GgmlType type, WeightInit init, uint64_t elements, uint64_t seed = 1,
                              uint64_t tensor = 0) {
    const uint64_t units = genUnitCount(type, elements);
    std::vector<uint8_t> out(rowBytes(type, elements));
    EXPECT_EQ(generateUnits(type, init, seed, tensor, elements, 0, units, out.data()), out.size());
    return out;
}

template <class Block>
std::vector<Block> asBlocks(const std::vector<uint8_t>& bytes) {
    std::vector<Block> blocks(bytes.size() / sizeof(Block));
    std::memcpy(blocks.data(), bytes.data(), blocks.size() * sizeof(Block));
    return blocks;
}

TEST(MakeModelWeights, SplittingTheWorkDoesNotChangeTheBytes) {
    for (GgmlType type : kTypes) {
        SCOPED_TRACE(ggmlTypeName(type));
        const uint64_t elements = 256 * 20 + (traitsOf(type).blockElems == 1 ? 100 : 0);
        const auto whole = generate(type, {0.0f, 0.1f}, elements, 42, 3);
        std::vector<uint8_t> pieces(whole.size());
        const uint64_t units = genUnitCount(type, elements);
        uint64_t at = 0;
        for (uint64_t u = 0; u < units; u += 3)
            at += generateUnits(type, {0.0f, 0.1f}, 42, 3, elements, u, std::min<uint64_t>(3, units - u), pieces.data() + at);
        EXPECT_EQ(at, whole.size());
        EXPECT_EQ(pieces, whole);
        EXPECT_NE(generate(type, {0.0f, 0.1f}, elements, 43, 3), whole);  // other seed
        EXPECT_NE(generate(type, {0.0f, 0.1f}, elements, 42, 4), whole);  // other tensor
    }
}

TEST(MakeModelWeights, EveryScaleFieldVaries) {
    const uint64_t n = 256 * 64;
    std::set<uint16_t> d, dmin;
    int blocksWithVaryingScales = 0, blocksWithVaryingMins = 0;
    for (const auto& b : asBlocks<BlockQ4_K>(generate(GgmlType::Q4_K, {0.0f, 0.05f}, n))) {
        d.insert(b.d);
        dmin.insert(b.dmin);
        std::set<int> sc(b.scales, b.scales + 4), mins(b.scales + 4, b.scales + 8);
        blocksWithVaryingScales += sc.size() > 1;
        blocksWithVaryingMins += mins.size() > 1;
    }
    EXPECT_GT(d.size(), 32u);
    EXPECT_GT(dmin.size(), 32u);
    EXPECT_GT(blocksWithVaryingScales, 60);
    EXPECT_GT(blocksWithVaryingMins, 60);

    int negative = 0, positive = 0;
    for (const auto& b : asBlocks<BlockQ6_K>(generate(GgmlType::Q6_K, {0.0f, 0.05f}, n)))
        for (int8_t s : b.scales) (s < 0 ? negative : positive) += 1;
    EXPECT_GT(negative, 200);
    EXPECT_GT(positive, 200);

    std::set<bool> q4Signs;
    for (const auto& b : asBlocks<BlockQ4_0>(generate(GgmlType::Q4_0, {0.0f, 0.05f}, n)))
        q4Signs.insert(fp16ToFp32(b.d) < 0);
    EXPECT_EQ(q4Signs.size(), 2u);

    std::set<uint16_t> mins;
    for (const auto& b : asBlocks<BlockQ5_1>(generate(GgmlType::Q5_1, {0.0f, 0.05f}, n))) mins.insert(b.m);
    EXPECT_GT(mins.size(), 100u);
}

TEST(MakeModelWeights, QuantizedWeightsMustBeZeroMean) {
    std::vector<uint8_t> out(144);
    EXPECT_THROW(generateUnits(GgmlType::Q4_K, {1.0f, 0.1f}, 0, 0, 256, 0, 1, out.data()), std::exception);
    EXPECT_THROW(generateUnits(GgmlType::IQ2_XXS, {0.0f, 0.1f}, 0, 0, 256, 0, 1, out.data()), std::exception);
    EXPECT_FALSE(canGenerate(GgmlType::IQ2_XXS));
    EXPECT_TRUE(canGenerate(GgmlType::Q2_K) && canGenerate(GgmlType::Q3_K) && canGenerate(GgmlType::IQ4_XS));
}

#ifdef ZINC_HAVE_DEQUANTIZE
struct Stats {
    double mean, std;
};

Stats statsOf(GgmlType type, const std::vector<uint8_t>& bytes, uint64_t n) {
    std::vector<float> values(n);
    dequantizeRow(type, bytes.data(), values.data(), static_cast<int64_t>(n));
    double sum = 0, sumSq = 0;
    for (float v : values) {
        sum += v;
        sumSq += static_cast<double>(v) * v;
    }
    const double mean = sum / n;
    return {mean, std::sqrt(sumSq / n - mean * mean)};
}
#endif

TEST(MakeModelWeights, DequantizedStdIsOneOverSqrtFanIn) {
#ifndef ZINC_HAVE_DEQUANTIZE
    GTEST_SKIP() << "model/quant/dequantize.h has not landed yet";
#else
    const uint64_t fanIn = 1024, rows = 256, n = fanIn * rows;
    const float target = 1.0f / std::sqrt(static_cast<float>(fanIn));
    for (GgmlType type : kTypes) {
        SCOPED_TRACE(ggmlTypeName(type));
        const Stats s = statsOf(type, generate(type, {0.0f, target}, n), n);
        EXPECT_NEAR(s.std, target, 0.03 * target);
        EXPECT_NEAR(s.mean, 0.0, 0.03 * target);
    }
    const Stats norm = statsOf(GgmlType::F32, generate(GgmlType::F32, {1.0f, 0.05f}, 4096), 4096);
    EXPECT_NEAR(norm.mean, 1.0, 0.01);
    EXPECT_NEAR(norm.std, 0.05, 0.005);
#endif
}

}  // namespace
}  // namespace zinc::model
