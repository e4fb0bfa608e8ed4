// The cpu tier on the Qwen3.5 / Qwen3.6 hybrid layout (qwen35moe-tiny: 3 gated DeltaNet layers,
// 1 gated full-attention layer, shared expert) against llama.cpp's CPU backend, and the
// recurrent state's rules: batched prefill equals one token per step, a new sequence starts
// from a cleared state, and resuming elsewhere is refused.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/graph.h"
#include "model/model.h"
#include "runtime/cpu/cpu_tier.h"
#include "runtime/session.h"
#include "tests/golden_check.h"
#include "tests/test_paths.h"

namespace zinc {
namespace {

struct Hybrid {
    std::unique_ptr<model::Model> model = model::Model::load(test::sharedPath("models/qwen35moe-tiny.gguf"));
    graph::Graph graph = graph::buildDecodeGraph(model->config(), model->weights());
    std::unique_ptr<runtime::Tier> tier;
    std::unique_ptr<runtime::Session> session;

    explicit Hybrid(int32_t maxBatch = 512, int32_t deltaChunk = runtime::TierOptions{}.deltaChunk,
                    runtime::Precision precision = runtime::Precision::Ggml) {
        runtime::TierOptions options;
        options.threads = 2;
        options.contextLength = 128;
        options.maxBatch = maxBatch;
        options.deltaChunk = deltaChunk;
        options.precision = precision;
        tier = cpu::makeCpuTier(graph, options);
        session = std::make_unique<runtime::Session>(model->config(), *tier);
    }
};

std::vector<float> copy(std::span<const float> logits) { return {logits.begin(), logits.end()}; }

using test::maxAbsDiff;

TEST(CpuHybrid, ConfigReadsTheDeltaNetKeys) {
    Hybrid h;
    const auto& c = h.model->config();
    EXPECT_EQ(c.arch, model::Arch::Qwen35Moe);
    EXPECT_EQ(c.nLayer, 4);
    EXPECT_TRUE(c.hybrid.recurrent(0) && c.hybrid.recurrent(2) && !c.hybrid.recurrent(3));
    EXPECT_EQ(c.hybrid.convChannels(), 512);
    EXPECT_EQ(c.hybrid.sharedFf, 512);
    EXPECT_EQ(c.ropeDim, 32);
    EXPECT_EQ(c.headDim, 128);
}

TEST(CpuHybrid, TeacherForcedLogitsMatchReference) {
    const auto golden = test::readGoldenCase(test::hybridGoldenCase());
    Hybrid h;
    test::expectMeetsGolden(*h.model, *h.session, test::hybridGoldenCase(), golden);
}

// A 14-token prompt: chunks of 4, 4, 4 and 2 tokens with deltaChunk 4.
const std::vector<int32_t> kPrompt = {71, 335, 291, 265, 292, 310, 261, 283, 119, 368, 834, 267, 30, 41};

// The recurrence (deltaChunk 0) in batches of 5, so the state crosses batch boundaries, against
// one token per step: the same arithmetic, so equal to 1e-4.
TEST(CpuHybrid, BatchedPrefillEqualsStepByStep) {
    Hybrid batched(5, 0), stepped;
    const auto a = copy(batched.session->feed(kPrompt));
    std::span<const float> b;
    for (int32_t t : kPrompt) b = stepped.session->step(t);
    EXPECT_LT(maxAbsDiff(a, b), 1e-4f);
    // and the state carries on identically into decode
    EXPECT_LT(maxAbsDiff(batched.session->step(7), stepped.session->step(7)), 1e-4f);
}

// The chunked delta rule (chunks of 4, the last partial; batches of 5 so chunks also end at
// batch boundaries) with fp32 activations: it differs from the recurrence by float rounding
// only (measured: max |diff| 1.9e-6 over the logits), held to 1e-4.
TEST(CpuHybrid, ChunkedPrefillEqualsStepByStepInF32) {
    for (const int32_t batch : {512, 5}) {
        Hybrid chunked(batch, 4, runtime::Precision::F32), stepped(512, 4, runtime::Precision::F32);
        const auto a = copy(chunked.session->feed(kPrompt));
        std::span<const float> b;
        for (int32_t t : kPrompt) b = stepped.session->step(t);
        EXPECT_LT(maxAbsDiff(a, b), 1e-4f) << "batches of " << batch;
        EXPECT_LT(maxAbsDiff(chunked.session->step(7), stepped.session->step(7)), 1e-4f) << "batches of " << batch;
    }
}

// In the ggml precision (activations rounded to 8-bit blocks before each matmul) a rounding
// difference of 1e-7 may move an activation by one quantization step, so the chunked prefill's
// logits differ from one token per step by up to ~1e-2 (measured: 2.0e-5 here, 7.6e-3 on a
// 12-token prompt in batches of 5): held to the golden's
// tolerance (0.1 + 1 %), the same top-1, and the same 8 greedy tokens after it.
TEST(CpuHybrid, ChunkedPrefillMeetsStepByStepWithinTheGoldenTolerance) {
    Hybrid chunked(512, 4), stepped;
    chunked.session->feed(kPrompt);
    for (int32_t t : kPrompt) stepped.session->step(t);
    test::expectWithinGoldenTolerance(chunked.session->logits(), stepped.session->logits(),
                                      test::hybridGoldenCase().tolerance);
    test::expectSameGreedyTokens(*chunked.session, *stepped.session, 8);
}

TEST(CpuHybrid, NewSequenceStartsFromAClearedState) {
    Hybrid h;
    const std::vector<int32_t> prompt = {71, 335, 291, 265};
    const auto first = copy(h.session->feed(prompt));
    h.session->feed(std::vector<int32_t>{5, 6, 7});
    h.session->reset();
    EXPECT_EQ(maxAbsDiff(first, h.session->feed(prompt)), 0.0f);
}

TEST(CpuHybrid, ResumingInsideTheHistoryIsRefused) {
    Hybrid h;
    std::vector<float> logits(static_cast<size_t>(h.model->config().nVocab));
    const std::vector<int32_t> prompt = {71, 335, 291, 265};
    h.tier->evaluate(prompt, 0, runtime::LogitsWanted::Last, logits);
    const int32_t token = 9;
    try {
        h.tier->evaluate(std::span<const int32_t>(&token, 1), 2, runtime::LogitsWanted::Last, logits);
        FAIL() << "resumed at position 2 with a state at position 4";
    } catch (const runtime::TierError& e) {
        EXPECT_STREQ(e.what(), "cpu tier: the recurrent (DeltaNet) state holds positions 0..3; it cannot resume at "
                               "position 2 (rewinding a hybrid model needs a state snapshot)");
    }
}

// Prefix reuse: a prompt that extends the history reuses all of it; one that diverges before
// the snapshot (taken before the last prompt's last token) is recomputed; the same prompt again
// resumes from the snapshot. The logits always equal a fresh session's. (The recurrence, so
// that resumed and fresh runs do the same arithmetic: chunked, they cut their chunks at other
// tokens and agree as ChunkedPrefillMeetsStepByStepWithinTheGoldenTolerance says.)
TEST(CpuHybrid, PrefixReuseGoesOnFromTheHistoryOrTheSnapshot) {
    Hybrid chat(512, 0), fresh(512, 0);
    const std::vector<int32_t> turn1 = {71, 335, 291, 265};
    const std::vector<int32_t> turn2 = {71, 335, 291, 265, 292, 310, 261};
    const std::vector<int32_t> other = {71, 335, 17, 18, 19};
    EXPECT_EQ(chat.session->feedReusingPrefix(turn1), 0);
    EXPECT_EQ(chat.session->feedReusingPrefix(turn2), 4);
    EXPECT_LT(maxAbsDiff(chat.session->logits(), fresh.session->feed(turn2)), 1e-4f);
    EXPECT_EQ(chat.session->feedReusingPrefix(other), 0);
    fresh.session->reset();
    EXPECT_LT(maxAbsDiff(chat.session->logits(), fresh.session->feed(other)), 1e-4f);
    EXPECT_EQ(chat.session->feedReusingPrefix(other), 4);  // the same prompt again: its last token re-runs
    EXPECT_LT(maxAbsDiff(chat.session->logits(), fresh.session->logits()), 1e-4f);
}

// Three chat turns: each answer is generated, then the next prompt carries a re-templated
// answer (other tokens than those generated) and a new question. Each turn resumes from the
// snapshot at the previous prompt's end and gives the logits of recomputing from scratch
// (the recurrence, as above).
TEST(CpuHybrid, ThreeChatTurnsResumeFromSnapshots) {
    Hybrid chat(512, 0);
    std::vector<int32_t> prompt = {71, 335, 291, 265, 292};
    int32_t shared = 0;  // all but the last token of the previous prompt
    for (int turn = 0; turn < 3; ++turn) {
        EXPECT_EQ(chat.session->feedReusingPrefix(prompt), shared) << "turn " << turn;
        shared = static_cast<int32_t>(prompt.size()) - 1;
        Hybrid fresh(512, 0);
        EXPECT_LT(maxAbsDiff(chat.session->logits(), fresh.session->feed(prompt)), 1e-4f) << "turn " << turn;
        for (int32_t t : {5, 6, 7}) chat.session->step(t);  // the answer as generated
        for (int32_t t : {9, 10, 11, 12 + turn}) prompt.push_back(t);  // as templated, then the next question
    }
}

}  // namespace
}  // namespace zinc
