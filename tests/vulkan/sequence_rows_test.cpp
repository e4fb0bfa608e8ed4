// Continuous batching on the vulkan tier (Tier::evaluateRows through the batched plans): the
// body every tier runs (tests/sequence_rows_body.h). Every sequence gets the same greedy id after
// every wanted row and logits within the goldens' tolerance (tests/tier_conformance.h) of its
// evaluate() path (whose prompts take the tiled matmul), and bit for bit the logits it gets alone
// through evaluateRows (a batched plan's rows do not depend on the rows beside them: serve's
// outputs do not depend on the load).
#include <gtest/gtest.h>

#include "tests/sequence_rows_body.h"
#include "tests/tier_conformance.h"
#include "tests/vulkan/vulkan_fixture.h"

namespace zinc {
namespace {

// The model of `file` and vulkan tiers of a given slot count and context over it (64-row steps).
struct VulkanRows {
    explicit VulkanRows(const std::string& file) : loaded(test::load(file, false)) {  // the cpu tier is not used
        tier.name = "vulkan";
        tier.config = &loaded.model->config();
        tier.open = [this](int32_t slots, int32_t contextLength) {
            runtime::TierOptions options;
            options.contextLength = contextLength;
            options.maxBatch = 64;
            options.sequences = slots;
            return vulkan::makeVulkanTier(loaded.graph, options, 0);
        };
        tier.expectSame = [file](const test::SequenceLogits& got, const test::SequenceLogits& want, const std::string& where) {
            ASSERT_EQ(got.size(), want.size()) << where;
            for (size_t i = 0; i < got.size(); ++i) {
                const std::string row = where + ", wanted row " + std::to_string(i);
                EXPECT_EQ(runtime::argmax(got[i]), runtime::argmax(want[i])) << row;
                test::expectNearCpu(got[i], want[i], test::toleranceFor(file), row);
            }
        };
        tier.exactAloneThroughRows = true;
    }
    VulkanRows(const VulkanRows&) = delete;  // tier.open holds `this`
    VulkanRows& operator=(const VulkanRows&) = delete;
    test::Loaded loaded;
    test::SequenceRowsTier tier;
};

class VulkanSequenceRows : public testing::TestWithParam<const char*> {};

TEST_P(VulkanSequenceRows, SeveralSequencesInOneStepEqualEachAlone) {
    ZINC_REQUIRE_VULKAN();
    test::expectSeveralSequencesInOneStepEqualEachAlone(VulkanRows(GetParam()).tier, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Models, VulkanSequenceRows,
                         testing::Values("qwen3-tiny.gguf", "qwen3moe-tiny.gguf", "stories260K.gguf", "gemma3-tiny.gguf",
                                         "qwen35moe-tiny.gguf"),
                         test::modelParamName);

// evaluateRowsGreedy's plan (argmax.comp, a workgroup a wanted row, the ids through the ring)
// against the logits plan's read-back and the host's argmax.
TEST(VulkanSequenceRowsDecode, GreedyRowsAreTheirLogitsArgmax) {
    ZINC_REQUIRE_VULKAN();
    test::expectGreedyRowsAreTheirLogitsArgmax(VulkanRows("stories260K.gguf").tier, "stories260K.gguf", 8, 6);
}

// A step of decode rows in slots of their own rotates and stores each row's key in the split
// attention (FUSED); beside a prompt chunk qk_rope.comp does: the same bits. On the MoE files a
// lone row's router and a step of three's take the same (split) form.
TEST(VulkanSequenceRowsDecode, ADecodeRowIsTheSameBesideAPromptChunk) {
    ZINC_REQUIRE_VULKAN();
    for (const char* file : {"qwen3-tiny.gguf", "stories260K.gguf", "qwen3moe-tiny.gguf", "qwen35moe-tiny.gguf"})
        test::expectADecodeRowIsTheSameBesideAPromptChunk(VulkanRows(file).tier, file, {10, 40});
}

// Steps of rows multiply matrices under 1 MiB with at most 512 rows or columns a workgroup a
// token; against the staged token tiles (ZINC_VK_ROWS_UNTILED_BYTES=0, the form before): every
// logit of two steps (prompts of 1, 3 and 5 tokens side by side, then a row in each of 8 slots)
// bit for bit, on a hybrid MoE and a plain MoE. (The router's fused form is not bit for bit its
// split form on NVIDIA: a rows plan never takes it, ADecodeRowIsTheSameBesideAPromptChunk.)
TEST(VulkanSequenceRowsDecode, UntiledSmallMatricesGiveTheTilesBits) {
    ZINC_REQUIRE_VULKAN();
    for (const char* file : {"qwen35moe-tiny.gguf", "qwen3moe-tiny.gguf"}) {
        SCOPED_TRACE(file);
        VulkanRows rows(file);
        const size_t vocab = size_t(rows.tier.config->nVocab);
        std::vector<runtime::SequenceRow> prompt, decode;
        for (int32_t s = 0; s < 3; ++s)
            for (int32_t p = 0; p <= 2 * s; ++p) prompt.push_back({s, p, 11 + 7 * s + p, true});
        for (int32_t s = 0; s < 8; ++s) decode.push_back({s, s < 3 ? 2 * s + 1 : 0, 100 + s, true});
        const auto logitsWith = [&](const char* untiledBytes) {
            setenv("ZINC_VK_ROWS_UNTILED_BYTES", untiledBytes, 1);  // read when a plan is recorded
            auto tier = rows.tier.open(8, 64);
            std::vector<float> first(vocab * prompt.size()), second(vocab * decode.size());
            tier->evaluateRows(prompt, first);
            tier->evaluateRows(decode, second);
            unsetenv("ZINC_VK_ROWS_UNTILED_BYTES");
            first.insert(first.end(), second.begin(), second.end());
            return first;
        };
        const std::vector<float> now = logitsWith(""), before = logitsWith("0");
        ASSERT_EQ(now.size(), before.size());
        size_t differ = 0;
        for (size_t i = 0; i < now.size(); ++i) differ += now[i] != before[i];
        EXPECT_EQ(differ, 0u) << "logits of " << now.size() << " differ";
    }
}

// evaluateRowsSampled's plan (sample.comp, a chain a wanted row: its own sampler block,
// counter and candidates, the ids through the ring) against the logits read back and the
// host's sampler.
TEST(VulkanSequenceRowsDecode, SampledRowsAreTheirSamplersDraws) {
    ZINC_REQUIRE_VULKAN();
    test::expectSampledRowsAreTheirSamplersDraws(VulkanRows("stories260K.gguf").tier, "stories260K.gguf", 8, 6);
}

TEST(VulkanSequenceRowsDecode, EightSequencesAtDifferentLengthsDecodeTogether) {
    ZINC_REQUIRE_VULKAN();
    test::expectSequencesAtDifferentLengthsDecodeTogether(VulkanRows("qwen3-tiny.gguf").tier, "qwen3-tiny.gguf", 8);
}

// Past kExactAttentionMax (16) keys a row splits its attention beside short rows computed exactly
// (260 tokens, 64-row prompt steps: the trimmed long-context tests of 1ad36d6).
TEST(VulkanSequenceRowsDecode, ARowPastTheExactLengthSplitsAsItDoesAlone) {
    ZINC_REQUIRE_VULKAN();
    test::expectALongRowBesideAShortOneEqualsItselfAlone(VulkanRows("stories260K.gguf").tier, "stories260K.gguf", 260, 272);
}

// Two sequences a step on quantized weights (Q8_0, Q4_K, Q5_K, Q6_K): the 2-token tiles of
// matvec_rows_tiles (units in flight, no staging), bit for bit each row alone.
TEST(VulkanSequenceRowsDecode, TwoSequencesOnQuantizedWeightsEqualEachAlone) {
    ZINC_REQUIRE_VULKAN();
    test::expectALongRowBesideAShortOneEqualsItselfAlone(VulkanRows("qwen3-tiny.gguf").tier, "qwen3-tiny.gguf", 70, 80);
}

// A hybrid (qwen35moe) keeps its conv windows and DeltaNet matrices per slot (ssm_conv.comp and
// delta_net.comp find each row's slot in the token state): decode rows side by side, each slot
// from where its state ends or from its snapshot, the ids picked on the device.
TEST(VulkanSequenceRowsHybrid, EightSequencesAtDifferentLengthsDecodeTogether) {
    ZINC_REQUIRE_VULKAN();
    test::expectSequencesAtDifferentLengthsDecodeTogether(VulkanRows("qwen35moe-tiny.gguf").tier, "qwen35moe-tiny.gguf", 8);
}

TEST(VulkanSequenceRowsHybrid, AHybridSlotGoesOnOnlyFromWhereItsStateEnds) {
    ZINC_REQUIRE_VULKAN();
    test::expectAHybridSlotGoesOnOnlyFromWhereItsStateEnds(VulkanRows("qwen35moe-tiny.gguf").tier);
}

TEST(VulkanSequenceRowsHybrid, AHybridSlotGoesOnFromItsSnapshot) {
    ZINC_REQUIRE_VULKAN();
    test::expectAHybridSlotGoesOnFromItsSnapshot(VulkanRows("qwen35moe-tiny.gguf").tier);
}

TEST(VulkanSequenceRowsHybrid, GreedyRowsAreTheirLogitsArgmax) {
    ZINC_REQUIRE_VULKAN();
    test::expectGreedyRowsAreTheirLogitsArgmax(VulkanRows("qwen35moe-tiny.gguf").tier, "qwen35moe-tiny.gguf", 4, 4);
}

TEST(VulkanSequenceRowsErrors, ARowOutsideTheSlotsIsAnError) {
    ZINC_REQUIRE_VULKAN();
    test::expectRowsOutsideTheSlotsAreAnError(VulkanRows("stories260K.gguf").tier);
}

}  // namespace
}  // namespace zinc
