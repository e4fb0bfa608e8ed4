#pragma once
// The sliding-window KV ring (graph/kv_layout.h) on any tier, one test body: gemma3-tiny's five
// sliding layers (window 8) with 4-token steps keep rings of 8 + 4 - 1 = 11 rows, so its
// 36-token golden prompt wraps each ring three times.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "model/model.h"
#include "runtime/session.h"
#include "runtime/tier.h"
#include "tests/golden_check.h"
#include "tests/test_paths.h"

namespace zinc::test {

using MakeTier = std::function<std::unique_ptr<runtime::Tier>(const graph::Graph&, const runtime::TierOptions&)>;

struct RingLoaded {
    std::unique_ptr<model::Model> model;
    graph::Graph graph;
    std::unique_ptr<runtime::Tier> tier;
    std::unique_ptr<runtime::Session> session;
};

inline constexpr int32_t kRingStep = 4;  // tokens per step: rings of window + 3 rows

inline RingLoaded loadRing(const MakeTier& make, int32_t maxBatch = kRingStep) {
    RingLoaded l;
    l.model = model::Model::load(sharedPath("models/gemma3-tiny.gguf"));
    l.graph = graph::buildDecodeGraph(l.model->config(), l.model->weights());
    runtime::TierOptions options;
    options.threads = 2;
    options.contextLength = 512;
    options.maxBatch = maxBatch;
    l.tier = make(l.graph, options);
    l.session = std::make_unique<runtime::Session>(l.model->config(), *l.tier);
    return l;
}

// The golden, one token per step, through rings that wrap (the tier's gemma top-1 gap).
inline void expectRingMeetsGolden(const MakeTier& make, float top1Gap = 0.12f) {
    const GoldenCase c = gemmaGoldenCases(top1Gap).front();
    const Golden golden = readGoldenCase(c);
    auto l = loadRing(make);
    expectMeetsGolden(*l.model, *l.session, c, golden);
}

// Prefill in 4-token steps through the rings = one token per step with no ring (64-token steps
// keep 71 rows: more than the prompt).
inline void expectRingPrefillEqualsStepByStep(const MakeTier& make, float tolerance) {
    const std::vector<int32_t> prompt = readGoldenCase(gemmaGoldenCases().front()).prompt;
    auto ring = loadRing(make);
    auto flat = loadRing(make, 64);
    const auto fed = ring.session->feed(prompt);
    const std::vector<float> batched(fed.begin(), fed.end());
    std::span<const float> stepped;
    for (int32_t t : prompt) stepped = flat.session->step(t);
    EXPECT_LT(maxAbsDiff(batched, stepped), tolerance);
}

// A chat turn that rewinds: close enough to the end, the ring still holds the keys and the
// prefix is reused; further back, the session recomputes from position 0. Either way the
// logits are those of a fresh session.
inline void expectRingRewindsOnlyWhereItHoldsTheKeys(const MakeTier& make, float tolerance) {
    const std::vector<int32_t> prompt = readGoldenCase(gemmaGoldenCases().front()).prompt;  // 36 tokens
    auto l = loadRing(make);
    l.session->feed(prompt);
    auto turn = [&](size_t keep, int32_t expectReused) {
        std::vector<int32_t> next(prompt.begin(), prompt.begin() + static_cast<std::ptrdiff_t>(keep));
        next.insert(next.end(), {7, 8, 9});
        EXPECT_EQ(l.session->feedReusingPrefix(next), expectReused) << "keeping " << keep;
        auto fresh = loadRing(make);
        EXPECT_LT(maxAbsDiff(l.session->logits(), fresh.session->feed(next)), tolerance) << "keeping " << keep;
    };
    // Rings of 11 rows after 36 positions hold [25, 36): position 33 needs keys 26..32.
    turn(33, 33);
    // After that turn (36 positions again) position 10 needs keys 3..9: long overwritten.
    turn(10, 0);
}

}  // namespace zinc::test
