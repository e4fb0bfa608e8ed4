// The sliding-window KV ring on the cpu tier (tests/kv_ring_check.h), and the layout itself.
#include <gtest/gtest.h>

#include "graph/kv_layout.h"
#include "runtime/cpu/cpu_tier.h"
#include "tests/kv_ring_check.h"

namespace zinc {
namespace {

std::unique_ptr<runtime::Tier> makeCpu(const graph::Graph& graph, const runtime::TierOptions& options) {
    return cpu::makeCpuTier(graph, options);
}

TEST(KvLayout, SlidingLayersKeepWindowPlusStepRowsGlobalLayersTheContext) {
    const auto model = model::Model::load(test::sharedPath("models/gemma3-tiny.gguf"));
    const graph::KvLayout kv = graph::planKv(model->config(), 4096, 4);
    ASSERT_EQ(kv.layers.size(), 6u);
    for (int il = 0; il < 5; ++il) {
        EXPECT_EQ(kv.layer(il).window, 8);
        EXPECT_EQ(kv.layer(il).slots, 11) << "layer " << il;
    }
    EXPECT_EQ(kv.layer(5).window, 0);
    EXPECT_EQ(kv.layer(5).slots, 4096);
    EXPECT_EQ(kv.rows, 5 * 11 + 4096);
    EXPECT_EQ(kv.layer(5).firstRow, 55);
    // A context shorter than the ring: no more rows than positions.
    EXPECT_EQ(graph::planKv(model->config(), 6, 4).layer(0).slots, 6);
}

TEST(KvLayout, ResumesOnlyWhereTheRingStillHoldsTheWindow) {
    const auto model = model::Model::load(test::sharedPath("models/gemma3-tiny.gguf"));
    const graph::KvLayout kv = graph::planKv(model->config(), 512, 4);  // rings of 11
    EXPECT_TRUE(kv.canResumeAt(36, 36));   // going on from the end
    EXPECT_TRUE(kv.canResumeAt(32, 36));   // needs 25..31; holds 25..35
    EXPECT_FALSE(kv.canResumeAt(31, 36));  // needs 24..30
    EXPECT_TRUE(kv.canResumeAt(5, 9));     // nothing overwritten yet
}

TEST(CpuKvRing, GemmaMeetsGoldenThroughWrappingRings) { test::expectRingMeetsGolden(makeCpu); }
TEST(CpuKvRing, PrefillInSmallStepsEqualsStepByStep) { test::expectRingPrefillEqualsStepByStep(makeCpu, 1e-3f); }
TEST(CpuKvRing, RewindsOnlyWhereItHoldsTheKeys) { test::expectRingRewindsOnlyWhereItHoldsTheKeys(makeCpu, 1e-3f); }

}  // namespace
}  // namespace zinc
