// Continuous batching on the cpu tier (Tier::evaluateRows): the body every tier runs
// (tests/sequence_rows_body.h), held bit for bit (each row's arithmetic does not depend on its
// neighbours).
#include <gtest/gtest.h>

#include "tests/cpu_tier_fixture.h"
#include "tests/sequence_rows_body.h"
#include "tests/tier_conformance.h"

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

// With the default delta chunk evaluate() runs a prompt's delta rule in chunks and rows never do
// (their bits must not depend on how a step cuts a prompt): rows equal their evaluate() path
// within rounding, and bit for bit their sequence alone through evaluateRows.
TEST(CpuSequenceRows, HybridRowsDoNotDependOnTheRowsBesideThem) {
    CpuRows rows("qwen35moe-tiny.gguf");
    rows.tier.expectSame = [](const test::SequenceLogits& got, const test::SequenceLogits& want, const std::string& where) {
        ASSERT_EQ(got.size(), want.size()) << where;
        for (size_t i = 0; i < got.size(); ++i)
            test::expectNearCpu(got[i], want[i], test::toleranceFor("qwen35moe-tiny.gguf"), where + ", wanted row " + std::to_string(i));
    };
    rows.tier.exactAloneThroughRows = true;
    test::expectSeveralSequencesInOneStepEqualEachAlone(rows.tier, "qwen35moe-tiny.gguf");
}

// A hybrid slot's state goes on only from where it ends, and from its snapshot.
TEST(CpuSequenceRows, AHybridSlotGoesOnOnlyFromWhereItsStateEnds) {
    test::expectAHybridSlotGoesOnOnlyFromWhereItsStateEnds(CpuRows("qwen35moe-tiny.gguf", 0).tier);
}

TEST(CpuSequenceRows, AHybridSlotGoesOnFromItsSnapshot) {
    test::expectAHybridSlotGoesOnFromItsSnapshot(CpuRows("qwen35moe-tiny.gguf", 0).tier);
}

}  // namespace
}  // namespace zinc
