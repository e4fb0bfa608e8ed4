// Continuous batching on the cpu tier (Tier::evaluateRows): the body every tier runs
// (tests/sequence_rows_body.h), held bit for bit (each row's arithmetic does not depend on its
// neighbours).
#include <gtest/gtest.h>

#include "tests/cpu_tier_fixture.h"
#include "tests/sequence_rows_body.h"

namespace zinc {
namespace {

// The model of `file` and cpu tiers of a given slot count and context over it. `deltaChunk` 0:
// a hybrid's delta rule runs token by token however a step's rows fall (its chunked form is
// equal only within rounding), so a sequence's rows give its bits alone.
struct CpuRows {
    explicit CpuRows(const std::string& file, int32_t deltaChunk = 64) : opened(test::openCpuTier(file, 64, 1)) {
        tier.name = "cpu";
        tier.config = &opened.model->config();
        tier.open = [this, deltaChunk](int32_t slots, int32_t contextLength) {
            runtime::TierOptions options;
            options.threads = 2;
            options.contextLength = contextLength;
            options.sequences = slots;
            options.deltaChunk = deltaChunk;
            return cpu::makeCpuTier(opened.graph, options);
        };
        tier.expectSame = test::expectExactlyTheSame;
    }
    CpuRows(const CpuRows&) = delete;  // tier.open holds `this`
    CpuRows& operator=(const CpuRows&) = delete;
    test::OpenedCpuTier opened;
    test::SequenceRowsTier tier;
};

TEST(CpuSequenceRows, SeveralSequencesInOneStepEqualEachAlone) {
    // qwen3-tiny-q3_k_m holds Q4_K, Q5_K and Q6_K matrices: its steps of 16, 11 and 4 rows run
    // the multi-token K-quant kernels (8-token groups and a tail).
    for (const char* file : {"qwen3-tiny.gguf", "qwen3moe-tiny.gguf", "stories260K.gguf", "gemma3-tiny.gguf",
                             "qwen3-tiny-q3_k_m.gguf"}) {
        CpuRows rows(file);
        test::expectSeveralSequencesInOneStepEqualEachAlone(rows.tier, file);
    }
}

TEST(CpuSequenceRows, EightSequencesAtDifferentLengthsDecodeTogether) {
    CpuRows rows("qwen3-tiny.gguf");
    test::expectSequencesAtDifferentLengthsDecodeTogether(rows.tier, "qwen3-tiny.gguf", 8);
}

TEST(CpuSequenceRows, GreedyRowsAreTheirLogitsArgmax) {
    test::expectGreedyRowsAreTheirLogitsArgmax(CpuRows("stories260K.gguf").tier, "stories260K.gguf", 8, 6);
}

TEST(CpuSequenceRows, ADecodeRowIsTheSameBesideAPromptChunk) {
    test::expectADecodeRowIsTheSameBesideAPromptChunk(CpuRows("qwen3-tiny.gguf").tier, "qwen3-tiny.gguf", {10, 40});
}

TEST(CpuSequenceRows, SampledRowsAreTheirSamplersDraws) {
    test::expectSampledRowsAreTheirSamplersDraws(CpuRows("stories260K.gguf").tier, "stories260K.gguf", 8, 6);
}

TEST(CpuSequenceRows, ALongRowBesideAShortOneEqualsItselfAlone) {
    test::expectALongRowBesideAShortOneEqualsItselfAlone(CpuRows("stories260K.gguf").tier, "stories260K.gguf", 260, 272);
}

TEST(CpuSequenceRows, ARowOutsideTheSlotsIsAnError) { test::expectRowsOutsideTheSlotsAreAnError(CpuRows("stories260K.gguf").tier); }

// A hybrid (qwen35moe) keeps its conv windows and DeltaNet matrices per slot: rows of several
// sequences in one step, a slot's rows split around another's, a slot starting again at 0.
TEST(CpuSequenceRows, HybridSequencesInOneStepEqualEachAlone) {
    CpuRows rows("qwen35moe-tiny.gguf", 0);
    test::expectSeveralSequencesInOneStepEqualEachAlone(rows.tier, "qwen35moe-tiny.gguf");
    test::expectSequencesAtDifferentLengthsDecodeTogether(rows.tier, "qwen35moe-tiny.gguf", 8);
}

// A slot's state cannot be rewound or skipped: the error names the slot and where it stands;
// a refused step moves no slot on; a slot starting again at position 0 starts from a cleared
// state (the same logits as the first time).
TEST(CpuSequenceRows, AHybridSlotGoesOnOnlyFromWhereItsStateEnds) {
    CpuRows rows("qwen35moe-tiny.gguf", 0);
    auto tier = rows.tier.open(2, 64);
    std::vector<float> none, first(size_t(rows.tier.config->nVocab)), again(first.size());
    const runtime::SequenceRow prompt[] = {{0, 0, 1, false}, {1, 0, 5, false}, {0, 1, 2, false}, {1, 1, 6, true}};
    tier->evaluateRows(prompt, first);
    auto expectError = [&](std::span<const runtime::SequenceRow> step, const std::string& what) {
        try {
            tier->evaluateRows(step, none);
            ADD_FAILURE() << "accepted: " << what;
        } catch (const runtime::TierError& e) {
            EXPECT_EQ(std::string(e.what()), what);
        }
    };
    const runtime::SequenceRow rewind[] = {{0, 2, 3, false}, {1, 1, 6, false}};
    expectError(rewind, "cpu tier: the recurrent (DeltaNet) state of sequence slot 1 holds positions 0..1; it cannot resume at "
                        "position 1 (rewinding a hybrid model needs a state snapshot)");
    const runtime::SequenceRow skip[] = {{1, 2, 7, false}, {1, 4, 8, false}};
    expectError(skip, "cpu tier: sequence slot 1 goes from position 2 to 4 in one step; a hybrid model's recurrent state "
                      "takes every position in turn");
    const runtime::SequenceRow onwards[] = {{0, 2, 3, false}, {1, 2, 7, false}};
    EXPECT_NO_THROW(tier->evaluateRows(onwards, none));
    const runtime::SequenceRow restart[] = {{0, 3, 4, false}, {1, 0, 5, false}, {1, 1, 6, true}};
    tier->evaluateRows(restart, again);
    EXPECT_EQ(again, first);
}

// A slot's state snapshot (Tier::saveSlotSnapshot, what serve takes where a prompt ends): after
// the slot has gone on past it, restoring it and running a prompt that shares only the
// snapshot's tokens gives what a fresh tier gives that prompt; the other slot's rows beside it
// are untouched by it.
TEST(CpuSequenceRows, AHybridSlotGoesOnFromItsSnapshot) {
    CpuRows rows("qwen35moe-tiny.gguf", 0);
    const size_t vocab = size_t(rows.tier.config->nVocab);
    const std::vector<int32_t> first = {1, 40, 41, 42, 43, 44}, second = {1, 40, 41, 42, 43, 90, 91, 92};
    auto tier = rows.tier.open(2, 64);
    std::vector<float> none, got(vocab), alone(vocab);
    std::vector<runtime::SequenceRow> step;
    for (int32_t p = 0; p < 5; ++p) step.push_back({0, p, first[size_t(p)], false});
    step.push_back({1, 0, 7, false});
    tier->evaluateRows(step, none);
    ASSERT_TRUE(tier->saveSlotSnapshot(0));
    const runtime::SequenceRow past[] = {{0, 5, first[5], false}, {1, 1, 8, false}, };
    tier->evaluateRows(past, none);
    const runtime::SequenceRow generated[] = {{1, 2, 9, false}, {0, 6, 300, false}, {0, 7, 301, false}};
    tier->evaluateRows(generated, none);
    tier->restoreSlotSnapshot(0);
    step.clear();
    for (int32_t p = 5; p < 8; ++p) step.push_back({0, p, second[size_t(p)], p == 7});
    step.insert(step.begin() + 1, {1, 3, 10, false});
    tier->evaluateRows(step, got);
    auto fresh = rows.tier.open(1, 64);
    step.clear();
    for (int32_t p = 0; p < 8; ++p) step.push_back({0, p, second[size_t(p)], p == 7});
    fresh->evaluateRows(step, alone);
    EXPECT_EQ(got, alone);
    EXPECT_THROW(fresh->restoreSlotSnapshot(0), runtime::TierError);  // it took none
}

}  // namespace
}  // namespace zinc
