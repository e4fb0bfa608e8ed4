// The kfd tier on the simulated GPU against the independent engine's goldens, by the cpu
// tier's criteria and tolerances (tests/golden_check.h).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/golden_check.h"
#include "tests/kfd_tier/kfd_tier_fixture.h"
#include "tests/kfd_tier/score_golden.h"

namespace zinc {
namespace {

class KfdGoldenTest : public testing::TestWithParam<test::GoldenCase> {};

TEST_P(KfdGoldenTest, MeetsTheGoldenOnTheSimulatedGpu) {
    const auto& c = GetParam();
    const auto golden = test::readGoldenCase(c);
    auto l = test::load(golden.modelFile, true);
    test::expectMeetsGolden(*l.model, *l.session, c, golden);
}

// RDNA4: the gfx1201 code object's machine code (its own encodings, s_wait_* counters, workgroup
// ids in ttmp registers) meets the same goldens.
TEST_P(KfdGoldenTest, MeetsTheGoldenOnTheSimulatedGfx1201) {
    const auto& c = GetParam();
    const auto golden = test::readGoldenCase(c);
    auto l = test::load(golden.modelFile, true, 256, "gfx1201");
    test::expectMeetsGolden(*l.model, *l.session, c, golden);
}

// The same through the command line: `score --tier=kfd --sim` prints the golden format; its
// output, read back as a golden, meets the reference by the same criteria (an id the reference
// lists but the kfd run does not rank in its top 10 counts as an outlier).
TEST_P(KfdGoldenTest, ScoreOnTheSimulatedGpuMeetsTheGolden) {
    const auto& c = GetParam();
    test::expectScoreMeetsGolden(c, "--tier=kfd --sim");
}

INSTANTIATE_TEST_SUITE_P(Kfd, KfdGoldenTest, testing::ValuesIn(test::goldenCases()), test::goldenCaseName);
INSTANTIATE_TEST_SUITE_P(KfdGemma, KfdGoldenTest, testing::ValuesIn(test::gemmaGoldenCases()), test::goldenCaseName);
INSTANTIATE_TEST_SUITE_P(KfdWeightTypes, KfdGoldenTest, testing::ValuesIn(test::weightTypeGoldenCases()), test::goldenCaseName);

}  // namespace
}  // namespace zinc
