#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

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

// argmax's vectorizable form against std::max_element over vocabulary-sized rows: ties
// (the first wins), signed zeros, infinities, NaNs in front, inside and after the maximum.
TEST(Sampler, ArgmaxIsMaxElementsFirstLargest) {
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> coarse(-20, 20);
    for (size_t n : {1u, 7u, 63u, 64u, 65u, 1000u, 151936u}) {
        for (int trial = 0; trial < 12; ++trial) {
            std::vector<float> v(n);
            for (auto& x : v) x = static_cast<float>(coarse(rng)) / 4.0f;  // many ties
            std::uniform_int_distribution<size_t> at(0, n - 1);
            if (trial % 4 == 1) v[at(rng)] = std::numeric_limits<float>::quiet_NaN();
            if (trial % 4 == 2) v[0] = std::numeric_limits<float>::quiet_NaN();
            if (trial % 4 == 3) v[at(rng)] = std::numeric_limits<float>::infinity(), v[at(rng)] = -0.0f;
            if (trial == 8) std::fill(v.begin(), v.end(), -std::numeric_limits<float>::infinity());
            const auto expected = static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
            ASSERT_EQ(argmax(v), expected) << "n " << n << " trial " << trial;
        }
    }
}

TEST(Sampler, RepeatPenaltyChangesTheGreedyChoice) {
    SamplerParams p;
    p.temperature = 0;
    p.repeatPenalty = 1.5f;  // 3.0 -> 2.0, so 2.9 wins
    Sampler s(p);
    const std::vector<int32_t> history = {1};
    EXPECT_EQ(s.sample(kLogits, history), 5);
}

// Top-k without every candidate (Sampler::selectTopK) against the plain definition: penalise
// the history's ids, order every id by (logit desc, id asc), keep the first k. Logits with many
// ties (quarter steps) and penalised ids among the best, over k from 1 to 300.
TEST(Sampler, TopKIsTheFirstKOfEveryIdInOrder) {
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::uniform_int_distribution<int32_t> anyId(0, 4999);
    for (int trial = 0; trial < 24; ++trial) {
        std::vector<float> logits(5000);
        for (float& l : logits) l = std::round(normal(rng) * 4.0f) / 4.0f;
        std::vector<int32_t> history;
        for (int i = 0; i < 30; ++i) history.push_back(anyId(rng));
        history.push_back(static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin()));
        history.push_back(-3);  // out of range: no penalty
        SamplerParams p;
        p.temperature = 1.0f;
        p.topP = 1.0f;
        p.minP = 0.0f;
        p.topK = std::vector<int32_t>{1, 2, 7, 40, 256, 300}[static_cast<size_t>(trial % 6)];
        p.repeatPenalty = trial % 2 ? 1.3f : 1.0f;
        p.repeatLastN = 20;  // the last 20 of the 32 ids
        std::vector<Sampler::Candidate> want;
        for (int32_t id = 0; id < 5000; ++id) {
            float l = logits[size_t(id)];
            if (p.repeatPenalty != 1.0f && std::find(history.end() - 20, history.end(), id) != history.end())
                l = l > 0 ? l / p.repeatPenalty : l * p.repeatPenalty;
            want.push_back({id, l, 0.0f});
        }
        std::sort(want.begin(), want.end(), [](const auto& a, const auto& b) { return a.logit > b.logit || (a.logit == b.logit && a.id < b.id); });
        want.resize(size_t(p.topK));
        Sampler s(p);
        const int32_t id = s.sample(logits, history);
        const auto got = s.candidates();
        ASSERT_EQ(got.size(), want.size()) << "trial " << trial;
        for (size_t i = 0; i < want.size(); ++i) {
            EXPECT_EQ(got[i].id, want[i].id) << "trial " << trial << ", candidate " << i;
            EXPECT_EQ(got[i].logit, want[i].logit) << "trial " << trial << ", candidate " << i;
        }
        EXPECT_TRUE(std::any_of(got.begin(), got.end(), [&](const auto& c) { return c.id == id; })) << "trial " << trial;
    }
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
