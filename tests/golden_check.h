#pragma once
// The one test body every tier runs against ../shared/reference/*.golden, with the tolerances
// of its README: teacher-forced top-1 equal where the top-1/top-2 gap is > 0.05, every listed
// logit within absolute + relative x |value| (a couple of outliers allowed at MoE routing
// near-ties), and where asked the greedy continuation identical.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "model/model.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "tests/golden.h"
#include "tests/test_paths.h"

namespace zinc::test {

struct GoldenTolerance {
    float absolute;
    float relative;
    // Positions whose listed logits may all miss the tolerance: a near-tied MoE router choice
    // that flips between engines moves one position's logits by ~0.3 (reference README). The
    // top-1 check still applies there.
    int allowedOutlierPositions;
    // Top-1 must match where the golden's top-1/top-2 gap exceeds this.
    float top1Gap = 0.05f;
};

struct GoldenCase {
    std::string golden;  // file name in ../shared/reference
    GoldenTolerance tolerance;
    bool greedyMustMatch;
};

inline std::vector<GoldenCase> goldenCases() {
    return {GoldenCase{"stories260K.golden", {1e-3f, 0.0f, 0}, true},
            GoldenCase{"llama-2-tiny-random.golden", {0.1f, 0.01f, 0}, false},
            GoldenCase{"qwen3-tiny.golden", {0.1f, 0.01f, 0}, false},
            GoldenCase{"qwen3moe-tiny.golden", {0.1f, 0.01f, 1}, false},
            GoldenCase{"llama3-tiny.golden", {0.1f, 0.01f, 0}, false},
            GoldenCase{"qwen2-tiny.golden", {0.1f, 0.01f, 0}, false}};
}

// gemma3 (sqrt(d) input scale, stored 1+w norms, post norms, GeGLU, sliding-window layers
// with their own rope base; a 36-token prompt past the window of 8). The README holds it to the
// dense tolerance without having calibrated it; the fp64 pass of tests/cpu/fp64_forward.h does
// (tests/cpu/fp64_calibration_test.cpp, which also reproduces the README's 0.073 on qwen3-tiny):
// exact arithmetic itself misses this golden by up to 0.132 + 1 % and flips a top-1 at a gap of
// 0.0915 (0.153 with the reference's 8-bit activations and F16 KV emulated: the x8-x14 post norms
// amplify rounding). So the dense 0.1 + 1 % / 0.05 cannot be met here by anything; the measured
// need, with a margin, is 0.15 + 1 % and top-1 past 0.12. The cpu tier is also held to the exact
// pass directly (within 0.2, the same top-1 wherever exact's gap > 0.05; measured 0.180, none):
// it is as close to exact as the reference is (0.190).
// The vulkan tier (lavapipe) lands elsewhere in the same noise: logits at most 0.136 off, one
// top-1 flip at a gap of 0.141 (pos 28), traced with `zinc-rt ab --validate` to q's F16
// rounding flipping on 1-ulp differences of the float ops before it, which the post norms
// carry to the logits. It passes top1Gap = 0.15: the logit tolerance, since a flip needs two
// logits' errors to add up past the gap.
inline std::vector<GoldenCase> gemmaGoldenCases(float top1Gap = 0.12f) {
    return {GoldenCase{"gemma3-tiny.golden", {0.15f, 0.01f, 0, top1Gap}, false}};
}

// The requantized qwen3-tiny files, one per family of weight types (Q3_K, Q2_K, IQ4_XS /
// IQ4_NL, the legacy 32-weight blocks, BF16): the dense-model tolerances.
inline std::vector<GoldenCase> weightTypeGoldenCases() {
    return {GoldenCase{"qwen3-tiny-q3_k_m.golden", {0.1f, 0.01f, 0}, false},
            GoldenCase{"qwen3-tiny-q2_k.golden", {0.1f, 0.01f, 0}, false},
            GoldenCase{"qwen3-tiny-iq4_xs.golden", {0.1f, 0.01f, 0}, false},
            GoldenCase{"qwen3-tiny-q4_1.golden", {0.1f, 0.01f, 0}, false},
            GoldenCase{"qwen3-tiny-bf16.golden", {0.1f, 0.01f, 0}, false}};
}

// The qwen35moe hybrid (gated DeltaNet), run by the tiers that have its ops. The reference
// README allows single spikes up to ~0.45 at its MoE routing near-ties.
inline GoldenCase hybridGoldenCase() { return GoldenCase{"qwen35moe-tiny.golden", {0.1f, 0.01f, 2}, false}; }

// Largest |a[i] - b[i]| over two logit vectors of one size.
inline float maxAbsDiff(std::span<const float> a, std::span<const float> b) {
    float m = 0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
    return m;
}

// Two runs of one model that may round differently (a chunked against a token-by-token
// prefill): every logit of `a` within the golden's tolerance of `b`, and the same top-1.
inline void expectWithinGoldenTolerance(std::span<const float> a, std::span<const float> b, const GoldenTolerance& t) {
    ASSERT_EQ(a.size(), b.size());
    size_t misses = 0, first = 0;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::fabs(a[i] - b[i]) > t.absolute + t.relative * std::fabs(b[i]) && misses++ == 0) first = i;
    EXPECT_EQ(misses, 0u) << "first at id " << first << ": " << a[first] << " against " << b[first];
    EXPECT_EQ(runtime::argmax(a), runtime::argmax(b));
}

// Greedy decoding on from two sessions' last logits: the same n tokens.
inline void expectSameGreedyTokens(runtime::Session& a, runtime::Session& b, int n) {
    std::vector<int32_t> idsA, idsB;
    for (int i = 0; i < n; ++i) {
        idsA.push_back(runtime::argmax(a.logits()));
        idsB.push_back(runtime::argmax(b.logits()));
        a.step(idsA.back());
        b.step(idsB.back());
    }
    EXPECT_EQ(idsA, idsB);
}

// A copy of logits a session will overwrite on its next step.
inline std::vector<float> copyOf(std::span<const float> logits) { return {logits.begin(), logits.end()}; }

inline std::string goldenCaseName(const testing::TestParamInfo<GoldenCase>& info) {
    std::string name = info.param.golden.substr(0, info.param.golden.find('.'));
    for (auto& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return name;
}

inline Golden readGoldenCase(const GoldenCase& c) { return readGolden(sharedPath("reference/" + c.golden)); }

// Feeds the golden prompt one token per step into a fresh session and checks every position.
inline void expectMeetsGolden(const model::Model& model, runtime::Session& session, const GoldenCase& c,
                              const Golden& golden) {
    if (golden.hasText && model.hasTokenizer()) {
        EXPECT_EQ(model.tokenizer().encode(golden.text, true, true), golden.prompt) << "text: " << golden.text;
    }
    ASSERT_EQ(golden.positions.size(), golden.prompt.size());
    int outlierPositions = 0;
    for (const auto& p : golden.positions) {
        auto logits = session.step(p.token);
        const auto& top = p.top;
        if (top.size() >= 2 && top[0].second - top[1].second > c.tolerance.top1Gap) {
            EXPECT_EQ(runtime::argmax(logits), top[0].first) << "top-1 differs at pos " << p.pos;
        }
        std::string misses;
        for (const auto& [id, want] : top) {
            const float got = logits[static_cast<size_t>(id)];
            if (std::fabs(got - want) > c.tolerance.absolute + c.tolerance.relative * std::fabs(want))
                misses += " id " + std::to_string(id) + ": got " + std::to_string(got) + ", reference " +
                          std::to_string(want) + ";";
        }
        if (!misses.empty()) {
            ++outlierPositions;
            EXPECT_LE(outlierPositions, c.tolerance.allowedOutlierPositions) << "pos " << p.pos << ":" << misses;
        }
    }
    if (!c.greedyMustMatch) return;
    std::vector<int32_t> greedy;
    for (size_t i = 0; i < golden.greedy.size(); ++i) {
        greedy.push_back(runtime::argmax(session.logits()));
        if (i + 1 < golden.greedy.size()) session.step(greedy.back());
    }
    EXPECT_EQ(greedy, golden.greedy);
}

}  // namespace zinc::test
