// Continuous batching's bookkeeping (runtime/sequence_slots.h): which rows the next step takes.
#include <gtest/gtest.h>

#include "runtime/sequence_slots.h"

namespace zinc {
namespace {

using runtime::SequenceRow;
using runtime::SequenceSlots;

TEST(SequenceSlots, DecodeRowsFirstThenPromptChunksWithinTheBudget) {
    SequenceSlots slots(3, 64);
    const std::vector<int32_t> a = {1, 2, 3}, b = {7, 8, 9, 10, 11};
    ASSERT_EQ(slots.claim(a), 0);
    auto step = slots.nextStep(16, 8);
    ASSERT_EQ(step, (std::vector<SequenceRow>{{0, 0, 1, false}, {0, 1, 2, false}, {0, 2, 3, true}}));
    slots.ran(step);
    slots.append(0, 40);
    ASSERT_EQ(slots.claim(b), 1);
    // Slot 0 decodes; slot 1's prompt gets 3 rows of the 3-token budget, its last row no logits.
    step = slots.nextStep(16, 3);
    ASSERT_EQ(step, (std::vector<SequenceRow>{{0, 3, 40, true}, {1, 0, 7, false}, {1, 1, 8, false}, {1, 2, 9, false}}));
    slots.ran(step);
    slots.append(0, 41);
    step = slots.nextStep(16, 3);
    ASSERT_EQ(step, (std::vector<SequenceRow>{{0, 4, 41, true}, {1, 3, 10, false}, {1, 4, 11, true}}));
    slots.ran(step);
    EXPECT_EQ(slots.cached(0), (std::vector<int32_t>{1, 2, 3, 40, 41}));
    EXPECT_EQ(slots.room(1), 64 - 5);
    // maxRows bounds the step: decode rows first.
    slots.append(0, 42);
    slots.append(1, 50);
    EXPECT_EQ(slots.nextStep(1, 3), (std::vector<SequenceRow>{{0, 5, 42, true}}));
}

// A sampler's penalty window before the step runs: the last n of the cached tokens and the
// pending ones, across both, and all of them where n is larger.
TEST(SequenceSlots, HistoryTailEndsWithThePendingTokens) {
    SequenceSlots slots(1, 64);
    const std::vector<int32_t> a = {1, 2, 3, 4};
    ASSERT_EQ(slots.claim(a), 0);
    EXPECT_EQ(slots.historyTail(0, 2), (std::vector<int32_t>{3, 4}));  // all pending
    slots.ran(slots.nextStep(2, 2));                                     // 1 and 2 cached, 3 and 4 pending
    EXPECT_EQ(slots.historyTail(0, 3), (std::vector<int32_t>{2, 3, 4}));
    EXPECT_EQ(slots.historyTail(0, 0), (std::vector<int32_t>{}));
    EXPECT_EQ(slots.historyTail(0, SIZE_MAX), (std::vector<int32_t>{1, 2, 3, 4}));
}

TEST(SequenceSlots, ANewPromptTakesTheFreeSlotSharingItsLongestPrefix) {
    SequenceSlots slots(2, 64);
    const std::vector<int32_t> a = {1, 2, 3, 4}, b = {1, 9};
    ASSERT_EQ(slots.claim(a), 0);
    ASSERT_EQ(slots.claim(b), 1);
    slots.ran(slots.nextStep(16, 16));
    EXPECT_EQ(slots.claim(std::vector<int32_t>{5}), -1);  // both busy
    slots.release(0);
    slots.release(1);
    const std::vector<int32_t> c = {1, 2, 3, 4, 5, 6};
    ASSERT_EQ(slots.claim(c), 0);
    EXPECT_EQ(slots.reusedTokens(0), 4);
    EXPECT_EQ(slots.nextStep(16, 16), (std::vector<SequenceRow>{{0, 4, 5, false}, {0, 5, 6, true}}));
    // The same prompt again: its last token runs again for fresh logits.
    slots.release(0);
    ASSERT_EQ(slots.claim(a), 0);
    EXPECT_EQ(slots.reusedTokens(0), 3);
    EXPECT_EQ(slots.nextStep(16, 16), (std::vector<SequenceRow>{{0, 3, 4, true}}));
    slots.forget(0);
    ASSERT_EQ(slots.claim(a), 1);  // slot 1 shares {1}; slot 0 forgot everything
    EXPECT_EQ(slots.reusedTokens(1), 1);
}

TEST(SequenceSlots, APromptThatFillsTheContextIsRefused) {
    SequenceSlots slots(1, 4);
    EXPECT_THROW(slots.claim(std::vector<int32_t>{1, 2, 3, 4}), runtime::TierError);
}

}  // namespace
}  // namespace zinc
