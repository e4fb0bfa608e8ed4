// The PM4 tier on the qwen35moe hybrid (gated DeltaNet layers, gated full attention, shared
// expert; kernels/cl/deltanet.cl) on the simulated GPU: the golden on gfx1100 and gfx1201, through
// the cs door and from the command line; the recurrent state on the device — batched
// prefill against one token per step, greedy on the GPU against the cpu tier after a new
// sequence, resuming elsewhere refused, chat turns from device snapshots.
#include <gtest/gtest.h>

#include "runtime/sampler.h"
#include "tests/golden_check.h"
#include "tests/hybrid_checks.h"
#include "tests/kfd_tier/kfd_tier_fixture.h"
#include "tests/kfd_tier/score_golden.h"

namespace zinc {
namespace {

constexpr const char* kModel = "qwen35moe-tiny.gguf";

using test::maxAbsDiff;

// RDNA4's machine code (gfx1201); gfx1100 meets the golden in the two tests below (the cs door in
// process, the doorbell from the command line), so each target runs it once.
TEST(KfdHybrid, MeetsTheGoldenOnTheSimulatedGfx1201) {
    const auto golden = test::readGoldenCase(test::hybridGoldenCase());
    auto l = test::load(kModel, true, 128, "gfx1201");
    test::expectMeetsGolden(*l.model, *l.session, test::hybridGoldenCase(), golden);
}

// The kernel's ring (amdgpu CS ioctl) instead of a queue of ours: the same IBs, the same golden.
// (The umq door rings a doorbell as the kfd door does, on the amdgpu device; not repeated here to
// keep CI short: `zinc-rt --tier=umq --sim score` meets the golden too.)
TEST(KfdHybrid, MeetsTheGoldenThroughTheCsDoor) {
    const auto golden = test::readGoldenCase(test::hybridGoldenCase());
    auto l = test::loadOnDoor(kModel, test::Door::Cs, 128);
    test::expectMeetsGolden(*l.model, *l.session, test::hybridGoldenCase(), golden);
}

// `zinc-rt --tier=kfd --sim score` meets the golden, and its greedy continuation is the golden's
// (which the cpu tier's equals too, 32 of 32: tests/cpu CpuHybrid).
TEST(KfdHybrid, ScoreFromTheCommandLineMeetsTheGoldenWithItsGreedyIds) {
    const auto golden = test::readGoldenCase(test::hybridGoldenCase());
    const std::string kfd = test::expectScoreMeetsGolden(test::hybridGoldenCase(), "--tier=kfd --sim");
    std::string want = "\ngreedy";
    for (int32_t id : golden.greedy) want += " " + std::to_string(id);
    EXPECT_NE(kfd.find(want + "\n"), std::string::npos) << kfd;
}

// The batch goes through the conv window and the delta rule token by token inside the kernels
// (here in two batches, so the state crosses a batch boundary): the logits equal those of one
// token per step, and decoding goes on alike.
TEST(KfdHybrid, BatchedPrefillEqualsStepByStep) {
    auto batched = test::load(kModel, true, 128), stepped = test::load(kModel, true, 128);
    const std::vector<int32_t> prompt = {71, 335, 291, 265, 292, 310, 261, 283, 119, 368, 834, 267};
    batched.session->feed(std::span(prompt).first(7));
    const auto a = test::copyOf(batched.session->feed(std::span(prompt).subspan(7)));
    std::span<const float> b;
    for (int32_t t : prompt) b = stepped.session->step(t);
    EXPECT_LT(maxAbsDiff(a, b), 1e-4f);
    EXPECT_LT(maxAbsDiff(batched.session->step(7), stepped.session->step(7)), 1e-4f);
}

// Greedy on the GPU against the cpu tier after a reset: the kernels clear the state of the
// sequence before at position 0.
TEST(KfdHybrid, GreedyOnTheGpuEqualsCpuAfterANewSequence) {
    auto gpu = test::load(kModel, true, 128), cpu = test::load(kModel, false, 128);
    test::expectGreedyAfterANewSequenceEqualsCpu(*gpu.session, *gpu.tier, *cpu.session, *cpu.tier, gpu.model->config().nVocab, 8);
}

// Sampled generation on the GPU (the chain at temperature 0: the argmax ids) in calls that go on
// from the last id as chat makes them, one submission per call or the persistent loop: the ids
// are the cpu tier's greedy ones, and the state ends where the fed tokens end, so the next
// evaluate goes on from there with the cpu tier's logits (within the golden's 0.1).
TEST(KfdHybrid, SampledGenerationEndsTheStateWhereItsTokensEnd) {
    auto cpu = test::load(kModel, false, 128);
    const int32_t vocab = cpu.model->config().nVocab, total = 8, perCall = 4;
    const std::vector<int32_t> prompt = {71, 335, 291, 265};
    const int32_t last = int32_t(prompt.size()) - 1;
    cpu.session->feed(std::span(prompt).first(size_t(last)));
    const std::vector<int32_t> want = cpu.tier->generateGreedy(prompt.back(), last, total, vocab);
    std::vector<float> wantLogits(static_cast<size_t>(vocab)), logits(static_cast<size_t>(vocab));
    cpu.tier->evaluate(std::span(want).last(1), last + total, runtime::LogitsWanted::Last, wantLogits);
    for (const bool loop : {false, true}) {
        SCOPED_TRACE(loop ? "--loop" : "one submission per call");
        auto model = model::Model::load(test::sharedPath(std::string("models/") + kModel));
        const graph::Graph graph = graph::buildDecodeGraph(model->config(), model->weights());
        runtime::TierOptions options;
        options.contextLength = 128;
        options.maxBatch = 16;
        kfd::Pm4TierOptions o;
        o.loop = loop;
        auto gpu = kfd::makePm4Tier(graph, options, test::simDevice(), o);
        gpu->evaluate(std::span(prompt).first(size_t(last)), 0, runtime::LogitsWanted::Last, logits);
        runtime::Sampler sampler(runtime::SamplerParams{.temperature = 0.0f});
        std::vector<int32_t> history = prompt, got;
        while (int32_t(got.size()) < total) {
            const auto ids = gpu->generateSampled(history.back(), int32_t(history.size()) - 1, perCall, sampler, history, vocab);
            ASSERT_EQ(int32_t(ids.size()), perCall);
            got.insert(got.end(), ids.begin(), ids.end());
            history.insert(history.end(), ids.begin(), ids.end());
        }
        EXPECT_EQ(got, want);
        gpu->evaluate(std::span(got).last(1), last + total, runtime::LogitsWanted::Last, logits);
        EXPECT_LT(maxAbsDiff(logits, wantLogits), 0.1f);
    }
}

TEST(KfdHybrid, ResumingInsideTheHistoryIsRefused) {
    auto l = test::load(kModel, true, 128);
    std::vector<float> logits(size_t(l.model->config().nVocab));
    const std::vector<int32_t> prompt = {71, 335, 291, 265};
    l.tier->evaluate(prompt, 0, runtime::LogitsWanted::Last, logits);
    const int32_t token = 9;
    try {
        l.tier->evaluate(std::span<const int32_t>(&token, 1), 2, runtime::LogitsWanted::Last, logits);
        FAIL() << "resumed at position 2 with a state at position 4";
    } catch (const runtime::TierError& e) {
        EXPECT_STREQ(e.what(), "kfd tier: the recurrent (DeltaNet) state holds positions 0..3; it cannot resume at "
                               "position 2 (rewinding a hybrid model needs a state snapshot)");
    }
}

// Chat turns: each restores the snapshot copied on the device (copy_words) before the previous
// prompt's last token, reuses the rest, and gives the logits of recomputing from scratch.
TEST(KfdHybrid, ChatTurnsResumeFromDeviceSnapshots) {
    auto chat = test::load(kModel, true, 128), fresh = test::load(kModel, true, 128);
    test::expectChatTurnsResumeFromSnapshots(*chat.session, *fresh.session, 1e-4f);
}

}  // namespace
}  // namespace zinc
