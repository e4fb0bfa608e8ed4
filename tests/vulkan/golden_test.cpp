// The vulkan tier against the independent engine's goldens: the same test body and
// tolerances as every tier (tests/golden_check.h, ../shared/reference/README.md).
#include <gtest/gtest.h>

#include "tests/golden_check.h"
#include "tests/vulkan/vulkan_fixture.h"

namespace zinc {
namespace {

class VulkanGoldenTest : public testing::TestWithParam<test::GoldenCase> {};

TEST_P(VulkanGoldenTest, TeacherForcedLogitsMatchReference) {
    ZINC_REQUIRE_VULKAN();
    const auto golden = test::readGoldenCase(GetParam());
    auto l = test::load(golden.modelFile, true);
    test::expectMeetsGolden(*l.model, *l.session, GetParam(), golden);
}

INSTANTIATE_TEST_SUITE_P(Vulkan, VulkanGoldenTest, testing::ValuesIn(test::goldenCases()), test::goldenCaseName);
INSTANTIATE_TEST_SUITE_P(VulkanGemma, VulkanGoldenTest, testing::ValuesIn(test::gemmaGoldenCases(0.15f)),
                         test::goldenCaseName);
INSTANTIATE_TEST_SUITE_P(VulkanWeightTypes, VulkanGoldenTest, testing::ValuesIn(test::weightTypeGoldenCases()),
                         test::goldenCaseName);

}  // namespace
}  // namespace zinc
