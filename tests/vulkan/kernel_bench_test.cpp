// bench --kernels (vulkan/kernel_bench.h) on the tiny models: a row per matvec shape of the
// decode graph, token count and kernel variant, with positive times, the copy kernel's
// bandwidth, and the cost of a dispatch and of a grid barrier. Structure only: on lavapipe the
// figures mean nothing.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "tests/vulkan/vulkan_fixture.h"
#include "vulkan/kernel_bench.h"

namespace zinc {
namespace {

vulkan::KernelBenchReport benchTiny(const std::string& file) {
    auto l = test::load(file, false);
    vulkan::KernelBenchOptions options;
    options.tokens = {1, 8};
    options.targetMs = 1;
    options.syncGroups = {1, 2};
    return vulkan::benchMatVecKernels(l.graph, options);
}

void expectTimed(const vulkan::KernelBenchReport& r) {
    EXPECT_FALSE(r.device.empty());
    EXPECT_GT(r.copyBytes, 0u);
    EXPECT_GT(r.copyGbps, 0.0);
    // Dispatch and grid-barrier costs at each grid asked for; one workgroup is always resident.
    ASSERT_EQ(r.sync.size(), 2u);
    for (const auto& t : r.sync) EXPECT_GT(t.dispatchUs, 0.0) << t.groups << " workgroups";
    EXPECT_EQ(r.sync[0].groups, 1u);
    EXPECT_EQ(r.sync[0].gaveUp, 0u);
    EXPECT_GT(r.sync[0].gridBarrierUs, 0.0);
    for (const auto& k : r.kernels) {
        const std::string what = k.label + " " + k.kernel + " tokens " + std::to_string(k.tokens);
        EXPECT_GT(k.calls, 0u) << what;
        EXPECT_GT(k.usPerCall, 0.0) << what;
        EXPECT_GT(k.usPerCallBarrier, 0.0) << what;
        EXPECT_GT(k.weightBytes, 0.0) << what;
        EXPECT_GT(k.gbps, 0.0) << what;
        EXPECT_GT(k.copyFraction, 0.0) << what;
    }
}

TEST(VulkanKernelBench, TimesEveryMatVecShapeOfADenseModelForOneAndEightTokens) {
    ZINC_REQUIRE_VULKAN();
    const auto r = benchTiny("qwen3-tiny.gguf");
    expectTimed(r);
    // qwen3-tiny: attn_q (Q4_K), attn_k (Q8_0), attn_v (Q6_K), attn_output (F16), ffn_gate (Q4_K)
    // and ffn_up (Q5_K: not a pair), ffn_down (Q6_K), the output (lm_head, Q6_K).
    // A label may come with two types (attn_v and ffn_down alternate Q6_K and Q4_K): a row per shape.
    std::set<std::string> labels;
    std::set<std::tuple<std::string, std::string, uint32_t, std::string>> rows;
    for (const auto& k : r.kernels) {
        labels.insert(k.label);
        EXPECT_TRUE(rows.insert({k.label, k.type, k.tokens, k.kernel}).second) << k.label << " " << k.type << " twice";
    }
    for (const char* want : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down", "lm_head"})
        EXPECT_EQ(labels.count(want), 1u) << want << " missing";
    // Every matrix of the step counted once: 7 a layer, 4 layers, and the output.
    uint32_t calls = 0;
    for (const auto& k : r.kernels) calls += k.kernel == "v1" && k.tokens == 1 ? k.perToken : 0;
    EXPECT_EQ(calls, 7u * 4u + 1u);
    // Both variants for every quantized shape at 1 and 8 tokens; the F16 one has v1 only.
    for (const auto& [label, type, tokens, kernel] : rows) {
        EXPECT_EQ(rows.count({label, type, tokens == 1 ? 8u : 1u, kernel}), 1u) << label << " " << type;
        if (kernel == "v1") {
            EXPECT_EQ(rows.count({label, type, tokens, "v2"}), type == "F16" ? 0u : 1u) << label << " " << type;
        }
    }
}

TEST(VulkanKernelBench, TimesTheExpertMatVecsOfAMoeModel) {
    ZINC_REQUIRE_VULKAN();
    const auto r = benchTiny("qwen3moe-tiny.gguf");
    expectTimed(r);
    size_t experts = 0, pairs = 0;
    for (const auto& k : r.kernels) {
        experts += k.experts > 0;
        pairs += k.experts > 0 && k.pair;
    }
    EXPECT_GE(experts, 8u);  // gate+up and down, 2 token counts, 2 kernels
    EXPECT_EQ(pairs, 4u);    // gate+up (both Q4_K): one dispatch
}

}  // namespace
}  // namespace zinc
