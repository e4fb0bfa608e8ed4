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

// With a recurrent state per slot (hybrids) a cache is reused whole, where the state stands, or
// up to the slot's snapshot: a prompt's last token runs in a step of its own, after which the
// slot is due a snapshot. A prompt that would rewind the state elsewhere starts its slot at 0.
TEST(SequenceSlots, WithRecurrentStateACacheIsReusedWholeOrUpToItsSnapshot) {
    SequenceSlots slots(2, 64, true);
    const std::vector<int32_t> a = {1, 2, 3, 4}, b = {1, 9};
    ASSERT_EQ(slots.claim(a), 0);
    ASSERT_EQ(slots.claim(b), 1);
    auto step = slots.nextStep(16, 16);
    EXPECT_EQ(step, (std::vector<SequenceRow>{{0, 0, 1, false}, {0, 1, 2, false}, {0, 2, 3, false}, {1, 0, 1, false}}));
    slots.ran(step);
    EXPECT_EQ(slots.snapshotsDue(), (std::vector<int32_t>{0, 1}));
    slots.snapshotSaved(0);  // slot 1's tier kept none
    step = slots.nextStep(16, 16);
    EXPECT_EQ(step, (std::vector<SequenceRow>{{0, 3, 4, true}, {1, 1, 9, true}}));
    slots.ran(step);
    EXPECT_EQ(slots.snapshotsDue(), (std::vector<int32_t>{}));
    slots.append(0, 50);  // a generated token runs: the cache is {1, 2, 3, 4, 50}
    slots.ran(slots.nextStep(16, 16));
    slots.release(0);
    slots.release(1);
    // A reply re-rendered otherwise: only the snapshot's {1, 2, 3} is shared whole.
    const std::vector<int32_t> c = {1, 2, 3, 4, 60, 61};
    ASSERT_EQ(slots.claim(c), 0);
    EXPECT_EQ(slots.reusedTokens(0), 3);
    EXPECT_TRUE(slots.resumesFromSnapshot(0));
    EXPECT_EQ(slots.nextStep(16, 16).front(), (SequenceRow{0, 3, 4, false}));
    slots.release(0);
    // Slot 1's cache {1, 9} is d's prefix: the state goes on from its end.
    const std::vector<int32_t> d = {1, 9, 7};
    ASSERT_EQ(slots.claim(d), 1);
    EXPECT_EQ(slots.reusedTokens(1), 2);
    EXPECT_FALSE(slots.resumesFromSnapshot(1));
    // The same prompt again would rewind past both: slot 0 starts again at 0.
    ASSERT_EQ(slots.claim(std::vector<int32_t>{1, 2}), 0);
    EXPECT_EQ(slots.reusedTokens(0), 0);
    EXPECT_FALSE(slots.resumesFromSnapshot(0));
}

TEST(SequenceSlots, APromptThatFillsTheContextIsRefused) {
    SequenceSlots slots(1, 4);
    EXPECT_THROW(slots.claim(std::vector<int32_t>{1, 2, 3, 4}), runtime::TierError);
}

}  // namespace
}  // namespace zinc
