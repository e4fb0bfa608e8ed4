// The kfd tier on the simulated GPU against the independent engine's goldens, by the cpu
// tier's criteria and tolerances (tests/golden_check.h).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kfd/sim/isa/wave.h"
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
class KfdScoreTest : public testing::TestWithParam<test::GoldenCase> {};

TEST_P(KfdScoreTest, ScoreOnTheSimulatedGpuMeetsTheGolden) {
    const auto& c = GetParam();
    test::expectScoreMeetsGolden(c, "--tier=kfd --sim");
}

// kernels/README.md: the guides' pseudo-code for v_fma_mixlo_f16 (attention's
// zk_round_half(acc*ms)) rounds to f32, then to f16; hardware rounding once would differ by 1 ulp
// of f16 in rare ties. The goldens hold under both readings, and the logits barely move.
TEST(KfdMixRounding, GoldensHoldUnderEitherReadingOfFmaMixF16) {
    if (kfd::simExecFromEnvironment() != kfd::SimExec::Isa) GTEST_SKIP() << "the readings are the interpreter's";
    struct Restore {
        ~Restore() { kfd::isa::setMixRounding(kfd::isa::MixRounding::TwoSteps); }
    } restore;
    {
        const test::GoldenCase c = test::goldenCases()[0];  // stories260K: trained, sharp logits
        const auto golden = test::readGoldenCase(c);
        std::vector<float> logits[2];
        for (int once = 0; once < 2; ++once) {
            kfd::isa::setMixRounding(once ? kfd::isa::MixRounding::Once : kfd::isa::MixRounding::TwoSteps);
            auto l = test::load(golden.modelFile, true);
            if (once) test::expectMeetsGolden(*l.model, *l.session, c, golden);  // TwoSteps: the goldens above
            const int32_t nVocab = l.model->config().nVocab;
            logits[once].assign(size_t(nVocab), 0.0f);
            const std::vector<int32_t> tokens = {1, 400, 30, 7};
            for (int32_t p = 0; p < int32_t(tokens.size()); ++p)
                l.tier->evaluate({&tokens[size_t(p)], 1}, p, runtime::LogitsWanted::Last, logits[once]);
        }
        double maxDiff = 0;
        for (size_t i = 0; i < logits[0].size(); ++i) maxDiff = std::max(maxDiff, double(std::fabs(logits[0][i] - logits[1][i])));
        std::printf("%s: max |logit difference| between the two readings after 4 tokens: %.3g\n", c.golden.c_str(), maxDiff);
        EXPECT_LT(maxDiff, 1e-2) << c.golden;
    }
}

INSTANTIATE_TEST_SUITE_P(Kfd, KfdGoldenTest, testing::ValuesIn(test::goldenCases()), test::goldenCaseName);
INSTANTIATE_TEST_SUITE_P(KfdGemma, KfdGoldenTest, testing::ValuesIn(test::gemmaGoldenCases()), test::goldenCaseName);
INSTANTIATE_TEST_SUITE_P(KfdWeightTypes, KfdGoldenTest, testing::ValuesIn(test::weightTypeGoldenCases()), test::goldenCaseName);
// The command line on the trained model, the MoE and gemma3 (each golden in process above: the
// interpreter would only run the same kernels again in a zinc-rt process).
INSTANTIATE_TEST_SUITE_P(Kfd, KfdScoreTest,
                         testing::Values(test::goldenCases()[0], test::goldenCases()[3], test::gemmaGoldenCases()[0]),
                         test::goldenCaseName);

}  // namespace
}  // namespace zinc
