// Decode attention split over the KV cache (kernels/cl/attention.cl) through the machine code
// on the simulated GPU: past one chunk of 128 positions a decode token's attention runs in
// several workgroups per kv head and attention_combine merges them (f32), where the cpu tier
// chains one F16 accumulator over every position. stories260K is trained, so a logit moved by
// the accumulator's rounding stays small: held to 2e-2 (observed 3.3e-3, the same on gfx1100, gfx1201 and PoCL) and the same argmax.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "tests/kfd_tier/kfd_tier_fixture.h"
#include "tests/run_zinc.h"
#include "tests/tier_conformance.h"

namespace zinc {
namespace {

int32_t decodeDispatches(const runtime::Tier& tier) {
    std::smatch m;
    const std::string d = tier.describe();
    if (!std::regex_search(d, m, std::regex(R"(decode IB \d+ dwords: (\d+) dispatches)"))) return -1;
    return std::stoi(m[1]);
}

TEST(KfdAttentionSplit, DecodePastOneChunkMatchesCpu) {
    auto cpu = test::load("stories260K.gguf", false, 256);
    auto gpu = test::load("stories260K.gguf", true, 256);
    const int32_t nVocab = cpu.model->config().nVocab, nLayer = cpu.model->config().nLayer, length = 140;
    std::vector<float> want(static_cast<size_t>(nVocab)), got(want.size());
    for (int32_t p0 = 0; p0 < length; p0 += 16) {  // prefill: one chunk per token, the cpu tier's recurrence
        std::vector<int32_t> batch;
        for (int32_t p = p0; p < std::min(length, p0 + 16); ++p) batch.push_back((p * 37 + 11) % nVocab);
        cpu.tier->evaluate(batch, p0, runtime::LogitsWanted::Last, want);
        gpu.tier->evaluate(batch, p0, runtime::LogitsWanted::Last, got);
    }
    for (int32_t i = 0; i < 3; ++i) {  // decode at 140..142: two chunks of the two splits a 256-row layer gets
        const int32_t token = 5 + 40 * i;
        cpu.tier->evaluate({&token, 1}, length + i, runtime::LogitsWanted::Last, want);
        gpu.tier->evaluate({&token, 1}, length + i, runtime::LogitsWanted::Last, got);
        double maxDiff = 0;
        for (int32_t v = 0; v < nVocab; ++v) maxDiff = std::max(maxDiff, std::fabs(double(got[size_t(v)]) - want[size_t(v)]));
        EXPECT_LE(maxDiff, 2e-2) << "decode at position " << length + i;
        EXPECT_EQ(runtime::argmax(got), runtime::argmax(want)) << "decode at position " << length + i;
        std::printf("decode at position %d: max |logit difference| to the cpu tier %.3g\n", length + i, maxDiff);
    }
    // The decode plan has the combine: one dispatch per layer more than with a one-split context.
    auto short_ = test::load("stories260K.gguf", true, 128);
    std::vector<float> logits(want.size());
    const int32_t token = 1;
    short_.tier->evaluate({&token, 1}, 0, runtime::LogitsWanted::Last, logits);
    EXPECT_EQ(decodeDispatches(*gpu.tier), decodeDispatches(*short_.tier) + nLayer) << gpu.tier->describe();
}

// `zinc-rt kernels --position P` counts a decode token at depth P: its attention in splits and
// their combine, one of each per layer (stories260K: 5 layers; --ctx grows to P + 1 = 301 rows,
// so 3 splits, all used).
TEST(KfdAttentionSplit, KernelsReportCountsATokenAtItsPosition) {
    const auto r = test::runZinc("kernels --model " + test::sharedPath("models/stories260K.gguf") + " --position 300");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("one decode token at position 300"), std::string::npos) << r.output;
    EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(\nattention +5 )"))) << r.output;
    EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(\nattention_combine +5 )"))) << r.output;
}

}  // namespace
}  // namespace zinc
