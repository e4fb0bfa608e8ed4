#pragma once
// Test bodies the GPU tiers share on the qwen35moe hybrid (recurrent state on the device),
// each against the same tier from scratch: the tier's own state handling, not its numerics.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/session.h"
#include "runtime/tier.h"
#include "tests/golden_check.h"

namespace zinc::test {

// Three chat turns: each answer is stepped, then the next prompt carries other tokens for it
// and a new question. Each turn restores the snapshot taken before the previous prompt's last
// token, reuses the rest, and gives the logits of `fresh` (reset each turn) within `tolerance`.
inline void expectChatTurnsResumeFromSnapshots(runtime::Session& chat, runtime::Session& fresh, float tolerance) {
    std::vector<int32_t> prompt = {71, 335, 291, 265, 292};
    int32_t shared = 0;
    for (int turn = 0; turn < 3; ++turn) {
        EXPECT_EQ(chat.feedReusingPrefix(prompt), shared) << "turn " << turn;
        shared = static_cast<int32_t>(prompt.size()) - 1;
        fresh.reset();
        EXPECT_LT(maxAbsDiff(chat.logits(), fresh.feed(prompt)), tolerance) << "turn " << turn;
        for (int32_t t : {5, 6, 7}) chat.step(t);
        for (int32_t t : {9, 10, 11, 12 + turn}) prompt.push_back(t);
    }
}

// Greedy ids chosen on the GPU (argmax fed back on the device, no logits read back) against the
// cpu tier's, after a reset: the state of the sequence before must not leak into the new one.
inline void expectGreedyAfterANewSequenceEqualsCpu(runtime::Session& gpuSession, runtime::Tier& gpu, runtime::Session& cpuSession,
                                                   runtime::Tier& cpu, int32_t vocab, int32_t n) {
    const std::vector<int32_t> prompt = {71, 335, 291, 265, 292, 310};
    const std::span<const int32_t> head = std::span(prompt).first(prompt.size() - 1);
    gpuSession.feed(std::vector<int32_t>{5, 6, 7, 8});
    gpuSession.reset();
    gpuSession.feed(head);
    cpuSession.feed(head);
    const auto at = static_cast<int32_t>(head.size());
    EXPECT_EQ(gpu.generateGreedy(prompt.back(), at, n, vocab), cpu.generateGreedy(prompt.back(), at, n, vocab));
}

}  // namespace zinc::test
