// matVec/matMul of every weight type: against an independent double-precision dot of the
// dequantized weights and dequantized activations, generic against AVX2, and matMul
// against matVec. Tolerances are relative to sum(|w * a|), the natural scale of the float
// rounding of any summation order (the integer block sums themselves are exact).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "model/model_error.h"
#include "runtime/cpu/quant_dot.h"
#include "tests/quant/quant_test_support.h"

namespace zinc::cpu {
namespace {

using model::GgmlType;

constexpr double kRelTolerance = 1e-5;

// A weight matrix of random rows with padding between rows (wStride > row bytes), and
// quantized activations for several tokens.
struct Problem {
    GgmlType type;
    int64_t k, rows, tokens;
    size_t wStride, actBytes;
    std::vector<uint8_t> w, acts;

    Problem(GgmlType t, int64_t k_, int64_t rows_, int64_t tokens_, std::mt19937& rng)
        : type(t), k(k_), rows(rows_), tokens(tokens_) {
        const size_t rowBytes = model::rowBytes(t, static_cast<uint64_t>(k));
        wStride = rowBytes + 64;
        w.assign(wStride * rows, 0xee);
        for (int64_t r = 0; r < rows; ++r) {
            const auto row = test::randomWeightRow(t, k, rng);
            std::memcpy(&w[r * wStride], row.data(), row.size());
        }
        actBytes = activationRowBytes(t, k);
        acts.resize(actBytes * tokens);
        for (int64_t i = 0; i < tokens; ++i) {
            const auto x = test::randomFloats(k, rng);
            quantizeActivationRow(t, x.data(), &acts[i * actBytes], k);
        }
    }
    const void* row(int64_t r) const { return &w[r * wStride]; }
    const void* act(int64_t t) const { return &acts[t * actBytes]; }
    std::vector<float> matVecOf(int64_t t) const {
        std::vector<float> y(rows);
        matVec(type, k, w.data(), wStride, rows, act(t), y.data());
        return y;
    }
};

// k not a multiple of 16 for the float types exercises the kernels' tails.
int64_t testK(GgmlType t) { return model::traitsOf(t).blockElems == 1 ? 1000 + 7 : 1024; }

std::string nameOf(const testing::TestParamInfo<GgmlType>& info) { return std::string(model::ggmlTypeName(info.param)); }

struct KernelChoice {
    explicit KernelChoice(bool generic) { forceGenericQuantKernels(generic); }
    ~KernelChoice() { forceGenericQuantKernels(false); }
};

bool hasAvx2() {
    forceGenericQuantKernels(false);
    return std::string(quantKernelName()) == "avx2";
}

class QuantDot : public testing::TestWithParam<GgmlType> {};

void expectMatchesReference(GgmlType type, bool generic) {
    KernelChoice choice(generic);
    std::mt19937 rng(77 + static_cast<int>(type));
    const Problem p(type, testK(type), 11, 2, rng);
    for (int64_t t = 0; t < p.tokens; ++t) {
        const auto y = p.matVecOf(t);
        for (int64_t r = 0; r < p.rows; ++r) {
            const auto ref = test::referenceDot(type, p.k, p.row(r), p.act(t));
            EXPECT_NEAR(y[r], ref.value, kRelTolerance * ref.absSum) << quantKernelName() << " row " << r;
        }
    }
}

TEST_P(QuantDot, GenericMatchesDequantizedReference) { expectMatchesReference(GetParam(), true); }

TEST_P(QuantDot, Avx2MatchesDequantizedReference) {
    if (!hasAvx2()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C";
    expectMatchesReference(GetParam(), false);
}

TEST_P(QuantDot, GenericAndAvx2Agree) {
    if (!hasAvx2()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C";
    const GgmlType type = GetParam();
    std::mt19937 rng(99 + static_cast<int>(type));
    const Problem p(type, testK(type) * 4, 9, 1, rng);
    std::vector<float> generic, avx2;
    {
        KernelChoice choice(true);
        generic = p.matVecOf(0);
    }
    avx2 = p.matVecOf(0);
    for (int64_t r = 0; r < p.rows; ++r) {
        const auto ref = test::referenceDot(type, p.k, p.row(r), p.act(0));
        EXPECT_NEAR(generic[r], avx2[r], kRelTolerance * ref.absSum) << "row " << r;
    }
}

// Bit-exact: a row's sum must not depend on which rows it was grouped with or on the tiling.
void expectMatMulEqualsMatVec(GgmlType type, bool generic) {
    KernelChoice choice(generic);
    std::mt19937 rng(5 + static_cast<int>(type));
    const Problem p(type, testK(type), 203, 37, rng);  // rows and tokens span several tiles
    const size_t yStride = p.rows + 3;
    std::vector<float> y(yStride * p.tokens, -1.0f);
    matMul(type, p.k, p.w.data(), p.wStride, p.rows, p.acts.data(), p.tokens, y.data(), yStride);
    for (int64_t t = 0; t < p.tokens; ++t) {
        const auto expected = p.matVecOf(t);
        for (int64_t r = 0; r < p.rows; ++r)
            ASSERT_EQ(std::bit_cast<uint32_t>(y[t * yStride + r]), std::bit_cast<uint32_t>(expected[r]))
                << quantKernelName() << " token " << t << " row " << r;
        EXPECT_EQ(y[t * yStride + p.rows], -1.0f) << "wrote past the rows";
    }
}

TEST_P(QuantDot, MatMulEqualsMatVecPerTokenGeneric) { expectMatMulEqualsMatVec(GetParam(), true); }

TEST_P(QuantDot, MatMulEqualsMatVecPerTokenAvx2) {
    if (!hasAvx2()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C";
    expectMatMulEqualsMatVec(GetParam(), false);
}

// Every multi-token kernel (avx2, and avx512vnni where the CPU has it) for each token count
// 1..9 (full groups, the 3/2/1 tails, a group plus a tail) and an odd row count: equal to
// matVec bit for bit, so a sequence's numbers do not depend on how many others share its step.
TEST_P(QuantDot, MatMulEqualsMatVecForEachTokenCount) {
    if (!hasAvx2()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C";
    const GgmlType type = GetParam();
    std::mt19937 rng(31 + static_cast<int>(type));
    const Problem p(type, testK(type) * 2, 13, 9, rng);
    std::vector<std::vector<float>> expected;
    for (int64_t t = 0; t < p.tokens; ++t) expected.push_back(p.matVecOf(t));
    for (bool avx2Only : {true, false}) {
        forceAvx2MultiTokenKernels(avx2Only);
        const std::string kernel = multiTokenKernelName();
        for (int64_t n = 1; n <= p.tokens; ++n) {
            const size_t yStride = p.rows + 1;
            std::vector<float> y(yStride * n, -1.0f);
            matMul(type, p.k, p.w.data(), p.wStride, p.rows, p.acts.data(), n, y.data(), yStride);
            for (int64_t t = 0; t < n; ++t)
                for (int64_t r = 0; r < p.rows; ++r)
                    ASSERT_EQ(std::bit_cast<uint32_t>(y[t * yStride + r]), std::bit_cast<uint32_t>(expected[t][r]))
                        << kernel << ", " << n << " tokens: token " << t << " row " << r;
        }
    }
    forceAvx2MultiTokenKernels(false);
}

// The multi-token kernels over the shapes a batched decode step gives them: one and three
// super-blocks (k = 256, 768), 1..8 weight rows, 1..17 tokens (two full 8-token groups, and
// every tail 1..7 after a group); each (token, row) equal to matVec bit for bit, and near
// the portable kernel.
TEST_P(QuantDot, MultiTokenKernelsMatchMatVecOverShapes) {
    if (!hasAvx2()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C";
    const GgmlType type = GetParam();
    std::mt19937 rng(71 + static_cast<int>(type));
    for (int64_t k : {256, 768}) {
        const Problem p(type, k, 8, 17, rng);
        std::vector<std::vector<float>> expected, generic;
        for (int64_t t = 0; t < p.tokens; ++t) expected.push_back(p.matVecOf(t));
        {
            KernelChoice choice(true);
            for (int64_t t = 0; t < p.tokens; ++t) generic.push_back(p.matVecOf(t));
        }
        for (bool avx2Only : {true, false}) {
            forceAvx2MultiTokenKernels(avx2Only);
            const std::string kernel = multiTokenKernelName();
            for (int64_t rows = 1; rows <= p.rows; ++rows)
                for (int64_t n = 1; n <= p.tokens; ++n) {
                    const size_t yStride = static_cast<size_t>(rows) + 2;
                    std::vector<float> y(yStride * n, -1.0f);
                    matMul(type, k, p.w.data(), p.wStride, rows, p.acts.data(), n, y.data(), yStride);
                    for (int64_t t = 0; t < n; ++t) {
                        for (int64_t r = 0; r < rows; ++r) {
                            ASSERT_EQ(std::bit_cast<uint32_t>(y[t * yStride + r]), std::bit_cast<uint32_t>(expected[t][r]))
                                << kernel << ", k " << k << ", " << rows << " rows, " << n << " tokens: token " << t
                                << " row " << r;
                            const auto ref = test::referenceDot(type, k, p.row(r), p.act(t));
                            ASSERT_NEAR(y[t * yStride + r], generic[t][r], kRelTolerance * ref.absSum)
                                << kernel << " against generic, token " << t << " row " << r;
                        }
                        ASSERT_EQ(y[t * yStride + rows], -1.0f) << "wrote past the rows";
                    }
                }
        }
        forceAvx2MultiTokenKernels(false);
    }
}

INSTANTIATE_TEST_SUITE_P(AllWeightTypes, QuantDot, testing::ValuesIn(test::computableWeightTypes()), nameOf);

// Rows for the activation quantizers: random values, exact ties (|max| = 127 makes the
// inverse scale 1 for Q8_0/Q8_1 and -1 for Q8_K), a magnitude tie with both signs, zeros.
std::vector<std::vector<float>> quantizerInputs(int64_t k, std::mt19937& rng) {
    std::vector<std::vector<float>> rows;
    rows.push_back(test::randomFloats(k, rng));
    rows.push_back(test::randomFloats(k, rng, 1e-3f));
    std::uniform_int_distribution<int> half(-253, 253);
    std::vector<float> ties(k);
    for (auto& v : ties) v = static_cast<float>(half(rng)) / 2.0f;
    for (int64_t b = 0; b < k; b += 32) ties[b] = (b / 32) % 2 ? 127.0f : -127.0f;
    rows.push_back(ties);
    std::vector<float> signs = test::randomFloats(k, rng, 0.1f);
    for (int64_t b = 0; b < k; b += 256) signs[b + 3] = 5.0f, signs[b + 9] = -5.0f;
    for (int64_t i = 0; i < std::min<int64_t>(k, 256); ++i) signs[i] = 0.0f;
    rows.push_back(signs);
    return rows;
}

TEST(QuantDotApi, Avx2ActivationQuantizersMatchTheScalarSpecBytes) {
    if (!hasAvx2()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C";
    std::mt19937 rng(4242);
    const int64_t k = 1024;
    for (GgmlType weight : {GgmlType::Q4_K, GgmlType::Q8_0, GgmlType::Q4_1, GgmlType::F16, GgmlType::BF16}) {
        SCOPED_TRACE(std::string(model::ggmlTypeName(activationType(weight))));
        for (const auto& x : quantizerInputs(k, rng)) {
            std::vector<uint8_t> fast(activationRowBytes(weight, k)), spec(fast.size());
            quantizeActivationRow(weight, x.data(), fast.data(), k);
            {
                KernelChoice choice(true);
                quantizeActivationRow(weight, x.data(), spec.data(), k);
            }
            ASSERT_EQ(fast, spec);
        }
    }
}

TEST(QuantDotApi, ActivationTypesFollowGgmlVecDotType) {
    EXPECT_EQ(activationType(GgmlType::Q4_K), GgmlType::Q8_K);
    EXPECT_EQ(activationType(GgmlType::Q5_K), GgmlType::Q8_K);
    EXPECT_EQ(activationType(GgmlType::Q6_K), GgmlType::Q8_K);
    EXPECT_EQ(activationType(GgmlType::Q8_0), GgmlType::Q8_0);
    EXPECT_EQ(activationType(GgmlType::Q4_0), GgmlType::Q8_0);
    EXPECT_EQ(activationType(GgmlType::Q5_0), GgmlType::Q8_0);
    EXPECT_EQ(activationType(GgmlType::Q4_1), GgmlType::Q8_1);
    EXPECT_EQ(activationType(GgmlType::Q5_1), GgmlType::Q8_1);
    EXPECT_EQ(activationType(GgmlType::F16), GgmlType::F16);
    EXPECT_EQ(activationType(GgmlType::BF16), GgmlType::BF16);
    EXPECT_EQ(activationType(GgmlType::F32), GgmlType::F32);
    EXPECT_EQ(activationType(GgmlType::Q2_K), GgmlType::Q8_K);
    EXPECT_EQ(activationType(GgmlType::Q3_K), GgmlType::Q8_K);
    EXPECT_EQ(activationType(GgmlType::IQ4_XS), GgmlType::Q8_K);
    EXPECT_EQ(activationType(GgmlType::IQ4_NL), GgmlType::Q8_0);
    EXPECT_EQ(activationRowBytes(GgmlType::Q4_K, 512), 2u * 292u);
    EXPECT_EQ(activationRowBytes(GgmlType::Q4_1, 64), 2u * 36u);
}

TEST(QuantDotApi, UnsupportedWeightTypeNamesIt) {
    try {
        activationType(GgmlType::IQ2_XXS);
        FAIL() << "expected ModelError";
    } catch (const model::ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("IQ2_XXS"), std::string::npos) << e.what();
    }
    float y = 0;
    uint8_t buf[512] = {};
    EXPECT_THROW(matVec(GgmlType::IQ2_XS, 256, buf, 74, 1, buf, &y), model::ModelError);
    EXPECT_THROW(matVec(GgmlType::Q4_K, 100, buf, 144, 1, buf, &y), model::ModelError);  // not whole blocks
}

TEST(QuantDotApi, KernelSwitch) {
    {
        KernelChoice choice(true);
        EXPECT_STREQ(quantKernelName(), "generic");
    }
    const std::string active = quantKernelName();
    EXPECT_TRUE(active == "avx2" || active == "generic");
    forceAvx2MultiTokenKernels(true);
    EXPECT_STREQ(multiTokenKernelName(), active.c_str());
    forceAvx2MultiTokenKernels(false);
    const std::string multi = multiTokenKernelName();
    EXPECT_TRUE(multi == active || (active == "avx2" && multi == "avx512vnni")) << multi;
}

}  // namespace
}  // namespace zinc::cpu
