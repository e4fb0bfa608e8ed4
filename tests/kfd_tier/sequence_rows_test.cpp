// Continuous batching on the PM4 tier (Tier::evaluateRows through its plans over rows of several
// sequences) on the simulated GPU: the body every tier runs (tests/sequence_rows_body.h), held
// bit for bit to each sequence alone (at a context of 64 attention never splits, so a prompt
// alone and a row beside others take the same kernels; kernels/README.md). Kept small: the ISA
// interpreter runs every row.
#include <gtest/gtest.h>

#include "tests/kfd_tier/kfd_tier_fixture.h"
#include "tests/sequence_rows_body.h"

namespace zinc {
namespace {

// The model of `file` and PM4 tiers (kfd, doorbell) of a given slot count and context over it on the
// simulated GPU: 16-row steps.
struct KfdRows {
    explicit KfdRows(const std::string& file, kfd::SubmitRoute route = kfd::SubmitRoute::Doorbell)
        : model(model::Model::load(test::sharedPath("models/" + file))),
          graph(graph::buildDecodeGraph(model->config(), model->weights())) {
        tier.name = "kfd";
        tier.config = &model->config();
        tier.open = [this, route](int32_t slots, int32_t contextLength) {
            runtime::TierOptions options;
            options.contextLength = contextLength;
            options.maxBatch = 16;
            options.sequences = slots;
            kfd::Pm4TierOptions o;
            o.route = route;
            return kfd::makePm4Tier(graph, options, route == kfd::SubmitRoute::Cs ? test::simDrmDevice() : test::simDevice(), o);
        };
        tier.expectSame = test::expectExactlyTheSame;
    }
    KfdRows(const KfdRows&) = delete;  // tier.open holds `this`
    KfdRows& operator=(const KfdRows&) = delete;
    std::unique_ptr<model::Model> model;
    graph::Graph graph;
    test::SequenceRowsTier tier;
};

TEST(KfdSequenceRows, SeveralSequencesInOneStepEqualEachAlone) {
    for (const char* file : {"qwen3-tiny.gguf", "stories260K.gguf"})
        test::expectSeveralSequencesInOneStepEqualEachAlone(KfdRows(file).tier, file);
}

TEST(KfdSequenceRows, EightSequencesAtDifferentLengthsDecodeTogether) {
    test::expectSequencesAtDifferentLengthsDecodeTogether(KfdRows("stories260K.gguf").tier, "stories260K.gguf", 8);
}

TEST(KfdSequenceRows, ARowOutsideTheSlotsIsAnError) { test::expectRowsOutsideTheSlotsAreAnError(KfdRows("stories260K.gguf").tier); }

TEST(KfdSequenceRows, ARecurrentModelRefusesSeveralSlots) { test::expectSeveralSlotsRefused(KfdRows("qwen35moe-tiny.gguf").tier); }

}  // namespace
}  // namespace zinc
