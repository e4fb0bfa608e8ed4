// The kfd tier on the simulated GPU against the independent engine's goldens, by the cpu
// tier's criteria and tolerances (tests/golden_check.h).
#include <gtest/gtest.h>

#include "tests/golden_check.h"
#include "tests/kfd_tier/kfd_tier_fixture.h"

namespace zinc {
namespace {

class KfdGoldenTest : public testing::TestWithParam<test::GoldenCase> {};

TEST_P(KfdGoldenTest, MeetsTheGoldenOnTheSimulatedGpu) {
    const auto& c = GetParam();
    const auto golden = test::readGoldenCase(c);
    auto l = test::load(golden.modelFile, true);
    test::expectMeetsGolden(*l.model, *l.session, c, golden);
}

INSTANTIATE_TEST_SUITE_P(Kfd, KfdGoldenTest, testing::ValuesIn(test::goldenCases()), test::goldenCaseName);

}  // namespace
}  // namespace zinc
