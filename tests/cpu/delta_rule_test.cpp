// The chunked (WY) form of the gated delta rule against the token-by-token recurrence on a
// synthetic head of the Qwen3.6 shape (d = 128): several chunks and a partial last one, a
// state that does not start at zero, decays from barely-there to strong. Measured on x86-64
// (release): outputs and state differ by at most ~1e-6 relative to their largest entry;
// held to 1e-5.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "runtime/cpu/delta_rule.h"

namespace zinc::cpu {
namespace {

struct Head {
    int32_t tokens, d;
    std::vector<float> q, k, v, g, beta, state;

    Head(int32_t tokens_, int32_t d_, uint32_t seed) : tokens(tokens_), d(d_) {
        std::mt19937 rng(seed);
        std::normal_distribution<float> normal;
        std::uniform_real_distribution<float> unit(0.0f, 1.0f);
        const auto n = static_cast<size_t>(tokens) * static_cast<size_t>(d);
        q.resize(n);
        k.resize(n);
        v.resize(n);
        for (auto* x : {&q, &k, &v})
            for (auto& e : *x) e = normal(rng);
        for (int32_t t = 0; t < tokens; ++t) {  // unit q and k, q also / √d, as the op gives them
            for (auto [x, scale] : {std::pair{&q, 1.0f / std::sqrt(static_cast<float>(d))}, std::pair{&k, 1.0f}}) {
                float* row = x->data() + static_cast<size_t>(t) * static_cast<size_t>(d);
                float sum = 0.0f;
                for (int32_t i = 0; i < d; ++i) sum += row[i] * row[i];
                for (int32_t i = 0; i < d; ++i) row[i] *= scale / std::sqrt(sum);
            }
            g.push_back(-std::pow(unit(rng), 3.0f) * 3.0f);  // decays from ~1 down to e^-3
            beta.push_back(unit(rng));
        }
        state.resize(static_cast<size_t>(d) * static_cast<size_t>(d));
        for (auto& e : state) e = 0.1f * normal(rng);
    }

    DeltaHeadRun run(std::vector<float>& out) const {
        out.assign(static_cast<size_t>(tokens) * static_cast<size_t>(d), 0.0f);
        DeltaHeadRun r;
        r.tokens = tokens;
        r.d = d;
        r.q = q.data();
        r.k = k.data();
        r.v = v.data();
        r.qStride = r.kStride = r.vStride = r.outStride = static_cast<size_t>(d);
        r.logDecay = g.data();
        r.beta = beta.data();
        r.out = out.data();
        return r;
    }
};

// max |a - b| / max |b|
float relativeDiff(const std::vector<float>& a, const std::vector<float>& b) {
    float diff = 0.0f, scale = 0.0f;
    for (size_t i = 0; i < a.size(); ++i) {
        diff = std::max(diff, std::fabs(a[i] - b[i]));
        scale = std::max(scale, std::fabs(b[i]));
    }
    return diff / scale;
}

void expectChunkedEqualsRecurrence(int32_t tokens, int32_t chunk) {
    const Head h(tokens, 128, 17u + static_cast<uint32_t>(tokens));
    std::vector<float> outRec, outChunk, scratch;
    auto stateRec = h.state, stateChunk = h.state;
    deltaRuleRecurrent(h.run(outRec), stateRec.data());
    deltaRuleChunked(h.run(outChunk), chunk, stateChunk.data(), scratch);
    const float outDiff = relativeDiff(outChunk, outRec), stateDiff = relativeDiff(stateChunk, stateRec);
    ::testing::Test::RecordProperty("output_relative_diff", std::to_string(outDiff));
    ::testing::Test::RecordProperty("state_relative_diff", std::to_string(stateDiff));
    std::printf("%d tokens, chunks of %d: output %.3g, state %.3g (relative)\n", tokens, chunk, outDiff, stateDiff);
    EXPECT_LT(outDiff, 1e-5f) << tokens << " tokens in chunks of " << chunk;
    EXPECT_LT(stateDiff, 1e-5f) << tokens << " tokens in chunks of " << chunk;
}

TEST(DeltaRule, ChunkedEqualsRecurrenceOverSeveralChunksAndAPartialOne) { expectChunkedEqualsRecurrence(150, 64); }

TEST(DeltaRule, ChunkedEqualsRecurrenceWithinOneShortChunk) { expectChunkedEqualsRecurrence(5, 64); }

TEST(DeltaRule, ChunksOfOneTokenAreTheRecurrence) { expectChunkedEqualsRecurrence(9, 1); }

}  // namespace
}  // namespace zinc::cpu
