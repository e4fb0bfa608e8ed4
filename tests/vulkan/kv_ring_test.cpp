// The sliding-window KV ring on the vulkan tier (tests/kv_ring_check.h): kv_store.comp writes
// position p to row p % slots, attention.comp reads the window back in position order.
#include <gtest/gtest.h>

#include "tests/kv_ring_check.h"
#include "tests/vulkan/vulkan_fixture.h"

namespace zinc {
namespace {

std::unique_ptr<runtime::Tier> makeVulkan(const graph::Graph& graph, const runtime::TierOptions& options) {
    return vulkan::makeVulkanTier(graph, options, 0);
}

TEST(VulkanKvRing, GemmaMeetsGoldenThroughWrappingRings) {
    ZINC_REQUIRE_VULKAN();
    test::expectRingMeetsGolden(makeVulkan, 0.15f);  // tests/golden_check.h says why 0.15
}
TEST(VulkanKvRing, PrefillInSmallStepsEqualsStepByStep) {
    ZINC_REQUIRE_VULKAN();
    test::expectRingPrefillEqualsStepByStep(makeVulkan, 1e-3f);
}
TEST(VulkanKvRing, RewindsOnlyWhereItHoldsTheKeys) {
    ZINC_REQUIRE_VULKAN();
    test::expectRingRewindsOnlyWhereItHoldsTheKeys(makeVulkan, 1e-3f);
}

}  // namespace
}  // namespace zinc
