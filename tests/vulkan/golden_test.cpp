// The vulkan tier against the independent engine's goldens, by the same criteria and
// tolerances as the cpu tier (tests/cpu/golden_test.cpp, ../shared/reference/README.md).
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/sampler.h"
#include "tests/golden.h"
#include "tests/vulkan/vulkan_fixture.h"

namespace zinc {
namespace {

struct Tolerance {
    float absolute;
    float relative;
    int allowedOutliers;  // MoE routing near-ties (see the reference README)
};

struct GoldenCase {
    std::string golden;
    Tolerance tolerance;
    bool greedyMustMatch;
};

class VulkanGoldenTest : public testing::TestWithParam<GoldenCase> {};

TEST_P(VulkanGoldenTest, TeacherForcedLogitsMatchReference) {
    ZINC_REQUIRE_VULKAN();
    const auto& c = GetParam();
    const auto golden = test::readGolden(test::sharedPath("reference/" + c.golden));
    auto l = test::load(golden.modelFile, true);
    int outliers = 0;
    ASSERT_EQ(golden.positions.size(), golden.prompt.size());
    for (const auto& p : golden.positions) {
        auto logits = l.session->step(p.token);
        const auto& top = p.top;
        if (top.size() >= 2 && top[0].second - top[1].second > 0.05f)
            EXPECT_EQ(runtime::argmax(logits), top[0].first) << "top-1 differs at pos " << p.pos;
        for (const auto& [id, want] : top) {
            const float got = logits[static_cast<size_t>(id)];
            const float limit = c.tolerance.absolute + c.tolerance.relative * std::fabs(want);
            if (std::fabs(got - want) > limit) {
                ++outliers;
                EXPECT_LE(outliers, c.tolerance.allowedOutliers)
                    << "pos " << p.pos << " id " << id << ": got " << got << ", reference " << want;
            }
        }
    }
    if (c.greedyMustMatch) {
        std::vector<int32_t> greedy;
        for (size_t i = 0; i < golden.greedy.size(); ++i) {
            greedy.push_back(runtime::argmax(l.session->logits()));
            if (i + 1 < golden.greedy.size()) l.session->step(greedy.back());
        }
        EXPECT_EQ(greedy, golden.greedy);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Vulkan, VulkanGoldenTest,
    testing::Values(GoldenCase{"stories260K.golden", {1e-3f, 0.0f, 0}, true},
                    GoldenCase{"llama-2-tiny-random.golden", {0.1f, 0.01f, 0}, false},
                    GoldenCase{"qwen3-tiny.golden", {0.1f, 0.01f, 0}, false},
                    GoldenCase{"qwen3moe-tiny.golden", {0.1f, 0.01f, 2}, false}),
    [](const auto& info) {
        std::string name = info.param.golden.substr(0, info.param.golden.find('.'));
        for (auto& ch : name)
            if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
        return name;
    });

}  // namespace
}  // namespace zinc
