#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "runtime/sampler.h"

namespace zinc::runtime {
namespace {

const std::vector<float> kLogits = {1.0f, 3.0f, 2.5f, -1.0f, 0.5f, 2.9f};

TEST(Sampler, GreedyPicksArgmaxAndLowestIndexOnTies) {
    SamplerParams p;
    p.temperature = 0;
    Sampler s(p);
    EXPECT_EQ(s.sample(kLogits, {}), 1);
    EXPECT_EQ(argmax(std::vector<float>{2.0f, 5.0f, 5.0f}), 1);
}

TEST(Sampler, RepeatPenaltyChangesTheGreedyChoice) {
    SamplerParams p;
    p.temperature = 0;
    p.repeatPenalty = 1.5f;  // 3.0 -> 2.0, so 2.9 wins
    Sampler s(p);
    const std::vector<int32_t> history = {1};
    EXPECT_EQ(s.sample(kLogits, history), 5);
}

TEST(Sampler, TopKOneIsGreedy) {
    SamplerParams p;
    p.temperature = 1.5f;
    p.topK = 1;
    Sampler s(p);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(s.sample(kLogits, {}), 1);
}

TEST(Sampler, MinPDropsUnlikelyTokens) {
    SamplerParams p;
    p.temperature = 1.0f;
    p.topK = 0;
    p.topP = 1.0f;
    p.minP = 0.5f;  // keeps ids whose probability >= half the best: 1, 5, 2
    Sampler s(p);
    for (int i = 0; i < 200; ++i) {
        const int32_t id = s.sample(kLogits, {});
        EXPECT_TRUE(id == 1 || id == 5 || id == 2) << id;
    }
}

TEST(Sampler, TopPKeepsTheNucleus) {
    SamplerParams p;
    p.temperature = 1.0f;
    p.topK = 0;
    p.minP = 0;
    p.topP = 0.3f;  // the best token alone has p ~0.36
    Sampler s(p);
    for (int i = 0; i < 50; ++i) EXPECT_EQ(s.sample(kLogits, {}), 1);
}

TEST(Sampler, SameSeedSameTokensOtherSeedOtherTokens) {
    SamplerParams p;
    p.temperature = 2.0f;
    p.topK = 0;
    p.topP = 1.0f;
    p.minP = 0;
    auto draw = [&](uint64_t seed) {
        p.seed = seed;
        Sampler s(p);
        std::vector<int32_t> ids;
        for (int i = 0; i < 64; ++i) ids.push_back(s.sample(kLogits, {}));
        return ids;
    };
    EXPECT_EQ(draw(7), draw(7));
    EXPECT_NE(draw(7), draw(8));
}

TEST(Sampler, TemperatureFollowsTheSoftmax) {
    SamplerParams p;
    p.temperature = 1.0f;
    p.topK = 0;
    p.topP = 1.0f;
    p.minP = 0;
    Sampler s(p);
    const std::vector<float> two = {0.0f, std::log(3.0f)};  // p = 0.25, 0.75
    int ones = 0;
    for (int i = 0; i < 4000; ++i) ones += s.sample(two, {}) == 1;
    EXPECT_NEAR(ones / 4000.0, 0.75, 0.03);
}

// The draws a GPU repeats (vulkan/shaders/sample.comp): a pure function of (seed, index),
// uniform on [0, 1), and the 64-bit seed's both halves matter.
TEST(Sampler, UniformDrawIsAFunctionOfSeedAndIndex) {
    EXPECT_EQ(uniformDraw(5, 17), uniformDraw(5, 17));
    EXPECT_NE(uniformDraw(5, 17), uniformDraw(5, 18));
    EXPECT_NE(uniformDraw(5, 17), uniformDraw(5 + (uint64_t{1} << 32), 17));
    double sum = 0;
    for (uint64_t i = 0; i < 20000; ++i) {
        const float u = uniformDraw(42, i);
        ASSERT_GE(u, 0.0f);
        ASSERT_LT(u, 1.0f);
        sum += u;
    }
    EXPECT_NEAR(sum / 20000, 0.5, 0.01);
}

TEST(Sampler, ExpAccurateIsWithinTwoUlpsOfLibm) {
    for (float x = -87.0f; x < 88.0f; x += 0.137f) {
        const float want = std::exp(x);
        EXPECT_NEAR(expAccurate(x), want, 2.5f * (std::nextafter(want, INFINITY) - want)) << x;
    }
    EXPECT_EQ(expAccurate(-200.0f), 0.0f);
    EXPECT_EQ(expAccurate(0.0f), 1.0f);
}

TEST(Sampler, DrawsCountOnlySampledTokens) {
    SamplerParams p;
    p.temperature = 1.0f;
    Sampler s(p);
    const std::vector<float> logits = {0.0f, 1.0f, 2.0f};
    s.sample(logits, {});
    s.sample(logits, {});
    EXPECT_EQ(s.draws(), 2u);
    s.skipDraws(3);
    EXPECT_EQ(s.draws(), 5u);
    p.temperature = 0.0f;
    Sampler greedy(p);
    greedy.sample(logits, {});
    EXPECT_EQ(greedy.draws(), 0u);
}

}  // namespace
}  // namespace zinc::runtime
