// Embedding rows, activation quantization and matvec run on PoCL through kernarg segments,
// against model/quant and the cpu tier's generic matVec kernels: bit-exact.
#include <gtest/gtest.h>

#include <limits>

#include "kernels/kernel_args.h"
#include "model/quant/blocks.h"
#include "model/quant/dequantize.h"
#include "model/quant/quantize_activations.h"
#include "runtime/cpu/quant_dot.h"
#include "tests/kernels/kernel_test_support.h"

namespace zinc::kernels::test {
namespace {

using model::GgmlType;

struct TypeCase {
    GgmlType type;
    const char* suffix;
};
const TypeCase kTypes[] = {{GgmlType::F32, "f32"},   {GgmlType::F16, "f16"},   {GgmlType::Q8_0, "q8_0"},
                           {GgmlType::Q4_K, "q4_k"}, {GgmlType::Q5_K, "q5_k"}, {GgmlType::Q6_K, "q6_k"},
                           {GgmlType::BF16, "bf16"}, {GgmlType::Q4_0, "q4_0"}, {GgmlType::Q4_1, "q4_1"},
                           {GgmlType::Q5_0, "q5_0"}, {GgmlType::Q5_1, "q5_1"}, {GgmlType::Q2_K, "q2_k"},
                           {GgmlType::Q3_K, "q3_k"}, {GgmlType::IQ4_NL, "iq4_nl"}, {GgmlType::IQ4_XS, "iq4_xs"}};

TEST(PoclKernels, EmbedRowsEqualDequantizeRow) {
    std::mt19937 rng(1);
    const int64_t cols = 512, vocab = 7;
    const std::vector<int32_t> tokens = {3, 0, 6};
    for (const auto& tc : kTypes) {
        SCOPED_TRACE(tc.suffix);
        const auto table = randomWeights(rng, tc.type, vocab, cols);
        const size_t rowBytes = table.size() / vocab;
        SvmBuffer dTable(table), dTokens(tokens), dOut(tokens.size() * cols * 4);
        EmbedArgs a{dTable.addr(), dTokens.addr(), dOut.addr(), rowBytes, static_cast<int32_t>(cols), static_cast<int32_t>(cols)};
        launch((std::string("embed_") + tc.suffix).c_str(), a, {ceilDiv(cols, 256), static_cast<uint32_t>(tokens.size()), 1});
        const auto got = dOut.read<float>(tokens.size() * cols);
        for (size_t t = 0; t < tokens.size(); ++t) {
            std::vector<float> want(cols);
            model::dequantizeRow(tc.type, table.data() + static_cast<size_t>(tokens[t]) * rowBytes, want.data(), cols);
            const Diff d = compare(std::span(got).subspan(t * cols, cols), want);
            EXPECT_EQ(d.mismatches, 0u) << "token " << t << " max |diff| " << d.maxAbs;
        }
    }
}

// Rows with varied magnitudes, exact zeros, a zero block and repeated extremes (ties).
std::vector<float> activationRows(std::mt19937& rng, int rows, int n) {
    auto x = randomFloats(rng, static_cast<size_t>(rows) * n, 2.0f);
    for (int i = 0; i < 32; ++i) x[static_cast<size_t>(i)] = 0.0f;      // a zero Q8_0 block
    x[100] = 7.5f, x[140] = -7.5f, x[300] = -9.0f, x[301] = 9.0f;       // equal magnitudes
    for (int i = 0; i < n; i += 37) x[static_cast<size_t>(n + i)] *= 1e-3f;
    return x;
}

TEST(PoclKernels, QuantizeQ8_0IsBitExact) {
    std::mt19937 rng(2);
    const int rows = 3, n = 1024;
    const auto x = activationRows(rng, rows, n);
    const size_t rowBytes = n / 32 * sizeof(model::BlockQ8_0);
    SvmBuffer dx(x), dOut(rows * rowBytes);
    launch("quantize_q8_0", QuantizeArgs{dx.addr(), dOut.addr(), n, n, rowBytes}, {ceilDiv(n, 256), rows, 1});
    std::vector<uint8_t> want(rows * rowBytes);
    for (int t = 0; t < rows; ++t)
        model::quantizeRowQ8_0(x.data() + t * n, reinterpret_cast<model::BlockQ8_0*>(want.data() + t * rowBytes), n);
    EXPECT_EQ(dOut.read<uint8_t>(want.size()), want);
}

TEST(PoclKernels, QuantizeQ8_KIsBitExact) {
    std::mt19937 rng(3);
    const int rows = 3, n = 1024;
    auto x = activationRows(rng, rows, n);
    for (int i = 512; i < 768; ++i) x[static_cast<size_t>(i)] = 0.0f;  // an all-zero super-block
    x[800] = -12.0f, x[900] = 12.0f;                                    // the first one's sign wins
    const size_t rowBytes = n / 256 * sizeof(model::BlockQ8_K);
    SvmBuffer dx(x), dOut(rows * rowBytes);
    launch("quantize_q8_k", QuantizeArgs{dx.addr(), dOut.addr(), n, n, rowBytes}, {n / 256, rows, 1});
    std::vector<uint8_t> want(rows * rowBytes);
    for (int t = 0; t < rows; ++t)
        model::quantizeRowQ8_K(x.data() + t * n, reinterpret_cast<model::BlockQ8_K*>(want.data() + t * rowBytes), n);
    EXPECT_EQ(dOut.read<uint8_t>(want.size()), want);
}

TEST(PoclKernels, QuantizeQ8_1IsBitExact) {
    std::mt19937 rng(6);
    const int rows = 3, n = 1024;
    const auto x = activationRows(rng, rows, n);
    const size_t rowBytes = n / 32 * sizeof(model::BlockQ8_1);
    SvmBuffer dx(x), dOut(rows * rowBytes);
    launch("quantize_q8_1", QuantizeArgs{dx.addr(), dOut.addr(), n, n, rowBytes}, {ceilDiv(n, 256), rows, 1});
    std::vector<uint8_t> want(rows * rowBytes);
    for (int t = 0; t < rows; ++t)
        model::quantizeRowQ8_1(x.data() + t * n, reinterpret_cast<model::BlockQ8_1*>(want.data() + t * rowBytes), n);
    EXPECT_EQ(dOut.read<uint8_t>(want.size()), want);
}

TEST(PoclKernels, ConvertBF16IsBitExact) {
    std::mt19937 rng(7);
    const int rows = 2, n = 700;
    auto x = randomFloats(rng, rows * n, 3.0f);
    x[1] = 1e-40f, x[2] = 3.4e38f, x[3] = std::numeric_limits<float>::quiet_NaN(), x[4] = 1.00390625f;  // subnormal, near max, NaN, a tie
    SvmBuffer dx(x), dOut(rows * n * 2);
    launch("quantize_bf16", ConvertF16Args{dx.addr(), dOut.addr(), n, n, n}, {ceilDiv(n, 256), rows, 1});
    std::vector<uint16_t> want(rows * n);
    model::convertRowBF16(x.data(), want.data(), rows * n);
    EXPECT_EQ(dOut.read<uint16_t>(want.size()), want);
}

TEST(PoclKernels, ConvertF16IsBitExact) {
    std::mt19937 rng(4);
    const int rows = 2, n = 700;
    auto x = randomFloats(rng, rows * n, 3.0f);
    x[1] = 1e-6f, x[2] = 7e4f, x[3] = 1e5f, x[4] = -3e-8f, x[5] = 65520.0f;  // subnormal, near max, overflow
    SvmBuffer dx(x), dOut(rows * n * 2);
    launch("quantize_f16", ConvertF16Args{dx.addr(), dOut.addr(), n, n, n}, {ceilDiv(n, 256), rows, 1});
    std::vector<uint16_t> want(rows * n);
    model::convertRowF16(x.data(), want.data(), rows * n);
    EXPECT_EQ(dOut.read<uint16_t>(want.size()), want);
}

// The activation row the cpu tier would multiply `type` with, quantized on the host.
std::vector<uint8_t> hostActivation(GgmlType type, const std::vector<float>& x, int tokens, int64_t k) {
    const size_t bytes = cpu::activationRowBytes(type, k);
    std::vector<uint8_t> act(bytes * tokens);
    for (int t = 0; t < tokens; ++t) cpu::quantizeActivationRow(type, x.data() + t * k, act.data() + t * bytes, k);
    return act;
}

class MatVec : public ::testing::TestWithParam<TypeCase> {
protected:
    void SetUp() override { cpu::forceGenericQuantKernels(true); }
    void TearDown() override { cpu::forceGenericQuantKernels(false); }
};

TEST_P(MatVec, EqualsGenericCpuKernel) {
    const auto tc = GetParam();
    std::mt19937 rng(5);
    const int64_t k = 1024 + (model::traitsOf(tc.type).blockElems == 1 ? 5 : 0), rows = 37;  // ragged rows and tail
    const int tokens = 2;
    const auto w = randomWeights(rng, tc.type, rows, k);
    const size_t rowBytes = w.size() / rows;
    const auto x = randomFloats(rng, tokens * k);
    const auto act = hostActivation(tc.type, x, tokens, k);
    const size_t actBytes = act.size() / tokens;
    SvmBuffer dw(w), dAct(act), dy(tokens * rows * 4);
    const MatVecArgs a{dw.addr(), dAct.addr(), dy.addr(), rowBytes, actBytes, static_cast<int32_t>(k), static_cast<int32_t>(rows),
                       static_cast<int32_t>(rows)};
    launch((std::string("matvec_") + tc.suffix).c_str(), a, {ceilDiv(rows, kMatVecShape.perGroupX), tokens, 1});
    const auto got = dy.read<float>(tokens * rows);
    for (int t = 0; t < tokens; ++t) {
        std::vector<float> want(rows);
        cpu::matVec(tc.type, k, w.data(), rowBytes, rows, act.data() + t * actBytes, want.data());
        const Diff d = compare(std::span(got).subspan(t * rows, rows), want);
        EXPECT_EQ(d.mismatches, 0u) << "token " << t << " max |diff| " << d.maxAbs << " of " << d.maxRef;
    }
}

// The expert form reads the expert id from memory (as the router wrote it) and writes one
// output row per (token, slot).
TEST_P(MatVec, ExpertFormReadsTheExpertIdFromMemory) {
    const auto tc = GetParam();
    std::mt19937 rng(6);
    const int64_t k = 512, rows = 24, experts = 5;
    const int tokens = 2, slots = 3;
    const auto w = randomWeights(rng, tc.type, rows * experts, k);
    const size_t rowBytes = w.size() / (rows * experts), expertBytes = rowBytes * rows;
    const auto x = randomFloats(rng, tokens * slots * k);
    const auto act = hostActivation(tc.type, x, tokens * slots, k);
    const size_t actBytes = act.size() / (tokens * slots);
    const std::vector<int32_t> ids = {4, 0, 2, 1, 4, 3};
    SvmBuffer dw(w), dAct(act), dIds(ids), dy(tokens * slots * rows * 4);
    const MatVecExpertArgs a{dw.addr(), dAct.addr(), dy.addr(), dIds.addr(), rowBytes, actBytes * slots, actBytes, expertBytes,
                             static_cast<int32_t>(k), static_cast<int32_t>(rows), static_cast<int32_t>(rows * slots),
                             static_cast<int32_t>(rows), slots};
    launch((std::string("matvec_") + tc.suffix + "_expert").c_str(), a, {ceilDiv(rows, kMatVecShape.perGroupX), tokens, slots});
    const auto got = dy.read<float>(tokens * slots * rows);
    for (int t = 0; t < tokens; ++t)
        for (int s = 0; s < slots; ++s) {
            const int i = t * slots + s;
            std::vector<float> want(rows);
            cpu::matVec(tc.type, k, w.data() + ids[i] * expertBytes, rowBytes, rows, act.data() + i * actBytes, want.data());
            EXPECT_EQ(compare(std::span(got).subspan(i * rows, rows), want).mismatches, 0u) << "token " << t << " slot " << s;
        }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, MatVec, ::testing::ValuesIn(kTypes),
                         [](const auto& info) { return std::string(info.param.suffix); });

}  // namespace
}  // namespace zinc::kernels::test
