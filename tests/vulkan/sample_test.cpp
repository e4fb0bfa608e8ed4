// sample.comp dispatched alone, off any model, against the host sampler (runtime/sampler.cpp)
// on the same logits, seed and draw index: a workgroup per 2,048-logit slice, so the global
// top k is merged from many slices; ties at the k-th logit across slices (the lowest ids win),
// a last slice shorter than k, a vocabulary shorter than k, masked (-inf) logits, and the
// penalty's recent ids, which the kernel extends with each token it draws.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/sampler.h"
#include "tests/vulkan/gpu_fixture.h"
#include "tests/vulkan/vulkan_fixture.h"
#include "vulkan/ops.h"
#include "vulkan/sampler_state.h"
#include "vulkan/token_state.h"

namespace zinc {
namespace {

constexpr uint32_t kRing = 16;

// Draws `steps` tokens from the same logits on the GPU and on the host, each step's token
// joining the penalty's history on both, and expects the same ids.
void expectHostTokens(test::Gpu& gpu, const std::vector<float>& logits, const runtime::SamplerParams& p,
                      std::vector<int32_t> history, uint64_t drawBase, int steps, const std::string& what) {
    const auto n = static_cast<uint32_t>(logits.size());
    auto logitsBuf = gpu.buffer(logits.size() * sizeof(float), logits.data());
    auto state = gpu.buffer(vk::tokenStateBytes(1));
    auto ring = gpu.buffer(kRing * sizeof(int32_t));
    auto chain = gpu.buffer(vk::kSamplerStateBytes);
    auto scratch = gpu.buffer(vk::sampleScratchBytes(n));

    vk::writeSamplerBlock(chain.mapped(), p, drawBase, history);

    runtime::Sampler host(p);
    host.skipDraws(drawBase);
    const vk::SampleOp::Buffers buffers{logitsBuf.address(), state.address(), ring.address(), chain.address(), scratch.address()};
    for (int step = 0; step < steps; ++step) {
        gpu.run([&](vk::Recorder& rec) {
            vk::SampleOp::record(rec, gpu.pipelines.get(vk::Shader::Sample), buffers, n, kRing);
        });
        const auto* ints = static_cast<const int32_t*>(state.mapped());
        const int32_t want = host.sample(logits, history);
        ASSERT_EQ(ints[8], want) << what << ", step " << step;
        EXPECT_EQ(static_cast<const int32_t*>(ring.mapped())[step % kRing], want) << what << ": the ring";
        EXPECT_EQ(ints[3], step + 1) << what << ": the step advances";
        EXPECT_EQ(static_cast<const uint32_t*>(scratch.mapped())[0], 0u) << what << ": the last workgroup resets the count";
        history.push_back(want);
    }
}

std::vector<float> normalLogits(uint32_t n, float sigma, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, sigma);
    std::vector<float> logits(n);
    for (float& l : logits) l = d(rng);
    return logits;
}

runtime::SamplerParams chain(float temperature, int32_t topK, float topP, float minP, float penalty, int32_t lastN) {
    runtime::SamplerParams p;
    p.temperature = temperature;
    p.topK = topK;
    p.topP = topP;
    p.minP = minP;
    p.repeatPenalty = penalty;
    p.repeatLastN = lastN;
    p.seed = 0x5eed0000beefULL;
    return p;
}

TEST(VulkanSample, TheHostChainOverAQwenVocabulary) {
    ZINC_REQUIRE_VULKAN();
    test::Gpu gpu(nullptr);
    auto logits = normalLogits(151936, 3.0f, 1);
    // The recent ids hold some of the largest logits (the penalty moves them), repeats and
    // ids in several slices.
    std::vector<int32_t> history;
    for (uint32_t i = 0; i < logits.size() && history.size() < 24; ++i)
        if (logits[i] > 9.0f) history.push_back(static_cast<int32_t>(i));
    for (int32_t id : {7, 7, 2048, 2047, 151935, 90000, 90000}) history.push_back(id);
    expectHostTokens(gpu, logits, chain(0.8f, 40, 0.95f, 0.05f, 1.1f, 64), history, 0, 8, "llama.cpp's defaults");
    expectHostTokens(gpu, logits, chain(1.5f, 256, 1.0f, 0.0f, 1.0f, 64), history, 1000, 6, "top-k 256 alone");
}

TEST(VulkanSample, TiesAtTheKthLogitTakeTheLowestIdsAcrossSlices) {
    ZINC_REQUIRE_VULKAN();
    test::Gpu gpu(nullptr);
    // Logits in steps of 0.5: hundreds share the k-th value, spread over every slice.
    auto logits = normalLogits(100000, 2.0f, 2);
    for (float& l : logits) l = std::round(l * 2.0f) / 2.0f;
    expectHostTokens(gpu, logits, chain(2.0f, 256, 1.0f, 0.0f, 1.0f, 0), {}, 0, 6, "ties, top-k 256");
    expectHostTokens(gpu, logits, chain(1.0f, 3, 1.0f, 0.0f, 1.0f, 0), {}, 50, 6, "ties, top-k 3");
}

TEST(VulkanSample, GreedyWithAPenaltyTakesTheFirstLargestLeft) {
    ZINC_REQUIRE_VULKAN();
    test::Gpu gpu(nullptr);
    auto logits = normalLogits(50000, 1.0f, 3);
    // The largest value three times in three slices; each token drawn is penalised next step.
    for (uint32_t id : {40000u, 3u, 20000u}) logits[id] = 50.0f;
    logits[4100] = 40.0f;
    expectHostTokens(gpu, logits, chain(0.0f, 40, 1.0f, 0.0f, 1.5f, 8), {3}, 0, 5, "greedy, penalty");
}

TEST(VulkanSample, ShortSlicesShortVocabulariesAndMaskedLogits) {
    ZINC_REQUIRE_VULKAN();
    test::Gpu gpu(nullptr);
    // The last slice holds 1 logit, fewer than k.
    expectHostTokens(gpu, normalLogits(2049, 2.0f, 4), chain(1.0f, 256, 0.9f, 0.0f, 1.0f, 0), {}, 0, 4, "2,049 logits");
    // A vocabulary shorter than k.
    expectHostTokens(gpu, normalLogits(7, 1.0f, 5), chain(1.0f, 40, 0.9f, 0.0f, 1.0f, 0), {}, 0, 4, "7 logits");
    // Masked logits (a grammar's): all but 10 are -inf, and top-k 40 reaches into them.
    std::vector<float> masked(5000, -std::numeric_limits<float>::infinity());
    for (uint32_t i = 0; i < 10; ++i) masked[i * 480 + 17] = static_cast<float>(i % 4);
    expectHostTokens(gpu, masked, chain(1.0f, 40, 1.0f, 0.0f, 1.0f, 0), {}, 0, 6, "masked logits");
}

}  // namespace
}  // namespace zinc
