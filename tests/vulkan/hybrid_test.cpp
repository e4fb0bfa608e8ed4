// The vulkan tier on the qwen35moe hybrid (gated DeltaNet state on the device): the golden,
// batched prefill against one token per step, and greedy decoding against the cpu tier.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/sampler.h"
#include "tests/golden_check.h"
#include "tests/hybrid_checks.h"
#include "tests/vulkan/vulkan_fixture.h"

namespace zinc {
namespace {

constexpr const char* kModel = "qwen35moe-tiny.gguf";

std::vector<float> copy(std::span<const float> logits) { return {logits.begin(), logits.end()}; }

using test::maxAbsDiff;

TEST(VulkanHybrid, TeacherForcedLogitsMatchReference) {
    ZINC_REQUIRE_VULKAN();
    const auto golden = test::readGoldenCase(test::hybridGoldenCase());
    auto l = test::load(kModel, true, 128);
    test::expectMeetsGolden(*l.model, *l.session, test::hybridGoldenCase(), golden);
}

// The batch goes through the conv window and the delta rule token by token inside the
// shaders: the logits after it equal those of one token per step, and decoding goes on alike.
TEST(VulkanHybrid, BatchedPrefillEqualsStepByStep) {
    ZINC_REQUIRE_VULKAN();
    auto batched = test::load(kModel, true, 128), stepped = test::load(kModel, true, 128);
    const std::vector<int32_t> prompt = {71, 335, 291, 265, 292, 310, 261, 283, 119, 368, 834, 267};
    const auto a = copy(batched.session->feed(prompt));
    std::span<const float> b;
    for (int32_t t : prompt) b = stepped.session->step(t);
    EXPECT_LT(maxAbsDiff(a, b), 1e-3f);
    EXPECT_LT(maxAbsDiff(batched.session->step(7), stepped.session->step(7)), 1e-3f);
}

// Greedy ids chosen on the GPU (no logits read back) against the cpu tier's, after a reset
// (a new sequence clears the device state).
TEST(VulkanHybrid, GreedyOnTheGpuEqualsCpu) {
    ZINC_REQUIRE_VULKAN();
    auto gpu = test::load(kModel, true, 128), cpu = test::load(kModel, false, 128);
    test::expectGreedyAfterANewSequenceEqualsCpu(*gpu.session, *gpu.tier, *cpu.session, *cpu.tier, gpu.model->config().nVocab, 12);
}

// Chat turns on the device: each turn restores the snapshot taken on the device before the
// previous prompt's last token, and gives the logits of recomputing from scratch.
TEST(VulkanHybrid, ChatTurnsResumeFromDeviceSnapshots) {
    ZINC_REQUIRE_VULKAN();
    auto chat = test::load(kModel, true, 128), fresh = test::load(kModel, true, 128);
    test::expectChatTurnsResumeFromSnapshots(*chat.session, *fresh.session, 1e-3f);
}

}  // namespace
}  // namespace zinc
