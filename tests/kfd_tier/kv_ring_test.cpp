// The sliding-window KV ring on the PM4 tier (simulated GPU; tests/kv_ring_check.h):
// kernels/cl/attention.cl stores position p in row p % slots and reads the window back in order.
#include <gtest/gtest.h>

#include "tests/kfd_tier/kfd_tier_fixture.h"
#include "tests/kv_ring_check.h"

namespace zinc {
namespace {

std::unique_ptr<runtime::Tier> makeKfd(const graph::Graph& graph, const runtime::TierOptions& options) {
    return kfd::makePm4Tier(graph, options, test::simDevice());
}

TEST(KfdKvRing, GemmaMeetsGoldenThroughWrappingRings) { test::expectRingMeetsGolden(makeKfd); }
TEST(KfdKvRing, PrefillInSmallStepsEqualsStepByStep) { test::expectRingPrefillEqualsStepByStep(makeKfd, 1e-3f); }
TEST(KfdKvRing, RewindsOnlyWhereItHoldsTheKeys) { test::expectRingRewindsOnlyWhereItHoldsTheKeys(makeKfd, 1e-3f); }

}  // namespace
}  // namespace zinc
