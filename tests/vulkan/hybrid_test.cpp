// The vulkan tier on the qwen35moe hybrid (gated DeltaNet state on the device): the golden,
// batched prefill against one token per step, and greedy decoding against the cpu tier.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <utility>

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

// A 14-token prompt: chunks of 4, 4, 4 and 2 tokens with deltaChunk 4.
const std::vector<int32_t> kPrompt = {71, 335, 291, 265, 292, 310, 261, 283, 119, 368, 834, 267, 30, 41};

// The recurrence (deltaChunk 0: delta_net.comp walks the batch token by token): the logits
// after it equal those of one token per step, and decoding goes on alike.
TEST(VulkanHybrid, BatchedPrefillEqualsStepByStep) {
    ZINC_REQUIRE_VULKAN();
    auto batched = test::load(kModel, true, 128, 0), stepped = test::load(kModel, true, 128, 0);
    const auto a = copy(batched.session->feed(kPrompt));
    std::span<const float> b;
    for (int32_t t : kPrompt) b = stepped.session->step(t);
    EXPECT_LT(maxAbsDiff(a, b), 1e-3f);
    EXPECT_LT(maxAbsDiff(batched.session->step(7), stepped.session->step(7)), 1e-3f);
}

// The chunked delta rule (delta_chunk_prep.comp, delta_chunk_state.comp) in chunks of 4, the
// last partial, against one token per step on the GPU and against the cpu tier's chunked
// prefill: within the golden's tolerance (8-bit activations turn rounding differences into
// quantization steps, tests/cpu/hybrid_test.cpp), the same top-1 and the same 8 greedy tokens.
TEST(VulkanHybrid, ChunkedPrefillMeetsStepByStepWithinTheGoldenTolerance) {
    ZINC_REQUIRE_VULKAN();
    auto chunked = test::load(kModel, true, 128, 4), stepped = test::load(kModel, true, 128, 0);
    auto cpu = test::load(kModel, false, 128, 4);
    chunked.session->feed(kPrompt);
    for (int32_t t : kPrompt) stepped.session->step(t);
    const auto tolerance = test::hybridGoldenCase().tolerance;
    test::expectWithinGoldenTolerance(chunked.session->logits(), stepped.session->logits(), tolerance);
    test::expectWithinGoldenTolerance(chunked.session->logits(), cpu.session->feed(kPrompt), tolerance);
    test::expectSameGreedyTokens(*chunked.session, *stepped.session, 8);
}

// Several full chunks and partial ones (80 tokens in chunks of 24, which batches of 64 cut
// again): the chunked prefill against the recurrence's batched prefill, as above.
TEST(VulkanHybrid, ChunkedPrefillOverSeveralChunksMeetsTheRecurrence) {
    ZINC_REQUIRE_VULKAN();
    auto chunked = test::load(kModel, true, 128, 24), recurrent = test::load(kModel, true, 128, 0);
    std::vector<int32_t> prompt;
    for (int32_t i = 0; i < 80; ++i) prompt.push_back(5 + (i * 37) % 1000);
    chunked.session->feed(prompt);
    recurrent.session->feed(prompt);
    test::expectWithinGoldenTolerance(chunked.session->logits(), recurrent.session->logits(),
                                      test::hybridGoldenCase().tolerance);
    test::expectSameGreedyTokens(*chunked.session, *recurrent.session, 8);
}

// Greedy ids chosen on the GPU (no logits read back) against the cpu tier's, after a reset
// (a new sequence clears the device state).
TEST(VulkanHybrid, GreedyOnTheGpuEqualsCpu) {
    ZINC_REQUIRE_VULKAN();
    auto gpu = test::load(kModel, true, 128), cpu = test::load(kModel, false, 128);
    test::expectGreedyAfterANewSequenceEqualsCpu(*gpu.session, *gpu.tier, *cpu.session, *cpu.tier, gpu.model->config().nVocab, 12);
}

// Chat turns on the device: each turn restores the snapshot taken on the device before the
// previous prompt's last token, and gives the logits of recomputing from scratch (the
// recurrence, so that resumed and fresh runs do the same arithmetic).
TEST(VulkanHybrid, ChatTurnsResumeFromDeviceSnapshots) {
    ZINC_REQUIRE_VULKAN();
    auto chat = test::load(kModel, true, 128, 0), fresh = test::load(kModel, true, 128, 0);
    test::expectChatTurnsResumeFromSnapshots(*chat.session, *fresh.session, 1e-3f);
}

// The decode plan's dispatches, pinned so that a fusion that silently stops applying fails here
// (graph::fuse's qwen35moe fusions, tiers.md): 82 at a 128-token context (85 before the DeltaNet
// conv ran in attn_qkv's matvec, one a recurrent layer; 86 before the split
// kernel took qk_rope.comp's work in a one-token step; 84 before a context past
// kExactAttentionMax keys gave its attention layer the split's two dispatches), 112 before them. Per
// layer 7 fewer: the router's matvec and top k in one dispatch, the gated norm and the attention
// output gate into the next quantization, the shared expert's input gate, sigmoid and both adds
// into the experts' weighted sum, and no second quantization of the FFN input for the shared
// expert. (qwen35moe-tiny mixes weight types, so its layers run a few more dispatches than the
// qwen3.6-35b-a3b shape's q4_k_m file: 18 a DeltaNet layer and 19 an attention layer there, 25
// and 26 before.) Those are the plan that runs the shared expert after the routed experts
// (ZINC_VK_MOE_LANES=0); by default the two run side by side (GraphRecorder's lanes), the shared
// expert with its own quantization of the FFN input beside the router: 86, one a layer more
// (and three barriers a layer fewer: tier_test.cpp, SharedExpertBesideTheRoutedExperts...).
TEST(VulkanHybrid, DecodePlanDispatchesArePinned) {
    ZINC_REQUIRE_VULKAN();
    for (const auto& [lanes, dispatches] : {std::pair{"0", 82}, std::pair{"1", 86}}) {
        setenv("ZINC_VK_MOE_LANES", lanes, 1);  // read when a plan is recorded
        auto l = test::load(kModel, true, 128);
        l.session->step(7);
        EXPECT_EQ(l.tier->stats().dispatchesPerToken, dispatches) << "ZINC_VK_MOE_LANES=" << lanes;
    }
    unsetenv("ZINC_VK_MOE_LANES");
}

// The DeltaNet conv in attn_qkv's matvec (MatMulConv: matvec_rows.comp's conv epilogue, one
// token) against ssm_conv.comp after the plain matvec (ZINC_VK_CONV_FUSE=0): the same logits bit
// for bit over a prompt (prefill keeps ssm_conv.comp) and decode steps that move the window on,
// with one dispatch a recurrent layer fewer.
TEST(VulkanHybrid, TheConvInTheQkvMatvecGivesThePlainPlansBits) {
    ZINC_REQUIRE_VULKAN();
    std::vector<std::vector<float>> logits;
    std::vector<int64_t> dispatches;
    int64_t recurrent = 0;
    for (const char* fuse : {"1", "0"}) {
        setenv("ZINC_VK_CONV_FUSE", fuse, 1);  // read when the tier lowers its graph
        auto l = test::load(kModel, true, 128, 0);
        std::vector<float> all = copy(l.session->feed(std::span(kPrompt).subspan(0, 9)));
        for (int32_t t : std::span(kPrompt).subspan(9)) {
            const std::span<const float> stepped = l.session->step(t);
            all.insert(all.end(), stepped.begin(), stepped.end());
        }
        logits.push_back(std::move(all));
        dispatches.push_back(l.tier->stats().dispatchesPerToken);
        const auto& c = l.model->config();
        recurrent = 0;
        for (int il = 0; il < c.nLayer; ++il) recurrent += c.hybrid.recurrent(il) ? 1 : 0;
    }
    unsetenv("ZINC_VK_CONV_FUSE");
    ASSERT_GT(recurrent, 0);
    EXPECT_EQ(logits[0], logits[1]);
    EXPECT_EQ(dispatches[0] + recurrent, dispatches[1]) << "ssm_conv.comp's dispatch, a recurrent layer";
}

}  // namespace
}  // namespace zinc
