#include <gtest/gtest.h>

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

}  // namespace
}  // namespace zinc::runtime
