// The golden files against an exact-arithmetic forward pass (tests/cpu/fp64_forward.h), and
// the cpu tier against the same pass: where ../shared/reference/README.md has not calibrated a
// golden, this measures how far the reference itself is from exact, and holds the cpu tier to
// that exact pass directly.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/graph.h"
#include "model/model.h"
#include "runtime/cpu/cpu_tier.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "tests/cpu/fp64_forward.h"
#include "tests/golden_check.h"
#include "tests/test_paths.h"

namespace zinc {
namespace {

// The largest |logit - exact| over a golden's listed ids, and the teacher-forced positions
// whose top-1 differs from the exact pass's where the exact top-1/top-2 gap exceeds `gap`.
struct Distance {
    double maxAbs = 0;
    int flips = 0;
    double neededAbsolute = 0;  // the README's form: |got - golden| <= a + 1 % |golden|, smallest a
    double neededGap = 0;       // smallest golden top-1/top-2 gap above which the top-1 agrees
};

template <typename LogitsAt>
Distance distanceFromExact(const test::Golden& golden, const std::vector<std::vector<double>>& exact, LogitsAt logitsAt,
                           double gap) {
    Distance d;
    for (size_t p = 0; p < golden.positions.size(); ++p) {
        const auto& ex = exact[p];
        for (const auto& [id, ref] : golden.positions[p].top)
            d.maxAbs = std::max(d.maxAbs, std::fabs(logitsAt(p, id) - ex[static_cast<size_t>(id)]));
        const auto& top = golden.positions[p].top;
        int32_t argmaxId = 0;
        for (size_t i = 1; i < ex.size(); ++i) if (ex[i] > ex[static_cast<size_t>(argmaxId)]) argmaxId = static_cast<int32_t>(i);
        for (const auto& [id, ref] : top)
            d.neededAbsolute = std::max(d.neededAbsolute, std::fabs(ex[static_cast<size_t>(id)] - ref) - 0.01 * std::fabs(ref));
        if (argmaxId != top[0].first) d.neededGap = std::max(d.neededGap, static_cast<double>(top[0].second - top[1].second));
        std::vector<size_t> order(ex.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::partial_sort(order.begin(), order.begin() + 2, order.end(), [&](size_t a, size_t b) { return ex[a] > ex[b]; });
        if (ex[order[0]] - ex[order[1]] <= gap) continue;
        int32_t best = golden.positions[p].top.front().first;
        double bestLogit = -INFINITY;
        for (const auto& [id, ref] : golden.positions[p].top)
            if (logitsAt(p, id) > bestLogit) bestLogit = logitsAt(p, id), best = id;
        if (static_cast<size_t>(best) != order[0]) ++d.flips;
    }
    return d;
}

// calibrated: the README says its dense tolerance was calibrated on this golden with an fp64
// pass, so ours must meet it too (a check of this pass); otherwise the tolerance the tiers are
// held to (golden_check.h) must cover what exact arithmetic needs. cpuMax: how far the cpu tier
// may sit from exact (measured 2026-11-25: qwen3 0.064, qwen2 0.080, llama-2 < 1e-4, gemma3 0.180,
// the five weight-type files 0.046-0.068), and its top-1 must be exact's wherever exact's gap
// exceeds 0.1 (a flip needs two logits' errors: bf16 flips one at a smaller gap).
// The weight-type files are "not yet calibrated" in the README: exact meets them at 0.016-0.031
// + 1 % and never differs in top-1, so the dense tolerance holds for them as measured here.
struct CalibrationCase {
    const char* golden;
    bool calibrated;
    double cpuMax;
    bool withReferenceRounding = false;  // also print the pass with the reference's roundings
};

class Fp64Calibration : public testing::TestWithParam<CalibrationCase> {};

TEST_P(Fp64Calibration, ReferenceAndCpuTierAgainstExact) {
    const CalibrationCase c = GetParam();
    const test::Golden golden = test::readGolden(test::sharedPath(std::string("reference/") + c.golden));
    auto model = model::Model::load(test::sharedPath("models/" + golden.modelFile));
    auto goldenLogit = [&](size_t p, int32_t id) {
        for (const auto& [i, l] : golden.positions[p].top)
            if (i == id) return static_cast<double>(l);
        return 0.0;
    };
    const auto exact = test::fp64Logits(*model, golden.prompt);
    const Distance ref = distanceFromExact(golden, exact, goldenLogit, 0.05);
    const Distance refRounded =
        c.withReferenceRounding
            ? distanceFromExact(golden, test::fp64Logits(*model, golden.prompt, test::Fp64Rounding::LikeReference),
                                goldenLogit, 0.05)
            : Distance{};

    graph::Graph g = graph::buildDecodeGraph(model->config(), model->weights());
    runtime::TierOptions options;
    options.threads = 2;
    options.contextLength = 512;
    auto tier = cpu::makeCpuTier(g, options);
    runtime::Session session(model->config(), *tier);
    std::vector<std::vector<float>> cpu;
    for (int32_t t : golden.prompt) {
        const auto logits = session.step(t);
        cpu.emplace_back(logits.begin(), logits.end());
    }
    const Distance ours = distanceFromExact(
        golden, exact, [&](size_t p, int32_t id) { return static_cast<double>(cpu[p][static_cast<size_t>(id)]); }, 0.1);
    std::printf("%s: golden vs exact max %.4f (%.4f with the reference's roundings), %d top-1 flips; the exact pass "
                "meets the golden at %.4f + 1 %% and a top-1 gap of %.4f; cpu tier vs exact max %.4f, %d flips\n",
                c.golden, ref.maxAbs, refRounded.maxAbs, ref.flips, ref.neededAbsolute, ref.neededGap, ours.maxAbs,
                ours.flips);

    EXPECT_LE(ours.maxAbs, c.cpuMax) << c.golden;
    EXPECT_EQ(ours.flips, 0) << c.golden << ": the cpu tier's top-1 differs from exact where exact's gap > 0.1";
    if (c.calibrated) {
        EXPECT_LE(ref.neededAbsolute, 0.1) << c.golden << ": the README's calibration does not reproduce";
        EXPECT_LE(ref.neededGap, 0.05) << c.golden;
        return;
    }
    std::vector<test::GoldenCase> heldCases = test::gemmaGoldenCases();
    for (const auto& w : test::weightTypeGoldenCases()) heldCases.push_back(w);
    for (const auto& held : heldCases)
        if (held.golden == c.golden) {
            EXPECT_GE(held.tolerance.absolute, ref.neededAbsolute) << c.golden << ": exact arithmetic would fail it";
            EXPECT_GE(held.tolerance.top1Gap, ref.neededGap) << c.golden;
        }
}

INSTANTIATE_TEST_SUITE_P(Goldens, Fp64Calibration,
                         testing::Values(CalibrationCase{"qwen3-tiny.golden", true, 0.1},
                                         CalibrationCase{"qwen2-tiny.golden", true, 0.1},
                                         CalibrationCase{"llama-2-tiny-random.golden", true, 0.1},
                                         CalibrationCase{"gemma3-tiny.golden", false, 0.2, true},
                                         CalibrationCase{"qwen3-tiny-q3_k_m.golden", false, 0.1},
                                         CalibrationCase{"qwen3-tiny-q2_k.golden", false, 0.1},
                                         CalibrationCase{"qwen3-tiny-iq4_xs.golden", false, 0.1},
                                         CalibrationCase{"qwen3-tiny-q4_1.golden", false, 0.1},
                                         CalibrationCase{"qwen3-tiny-bf16.golden", false, 0.1}),
                         [](const testing::TestParamInfo<CalibrationCase>& info) {
                             std::string name = info.param.golden;
                             name = name.substr(0, name.find('.'));
                             for (char& ch : name) if (ch == '-') ch = '_';
                             return name;
                         });

}  // namespace
}  // namespace zinc
