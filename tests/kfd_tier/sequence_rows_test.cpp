// Continuous batching on the PM4 tier (Tier::evaluateRows through its plans over rows of several
// sequences) on the simulated GPU: the body every tier runs (tests/sequence_rows_body.h), held
// bit for bit to each sequence alone (at a context of 64 attention never splits, so a prompt
// alone and a row beside others take the same kernels; kernels/README.md). Kept small: the ISA
// interpreter runs every row.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kfd/sim/sim_dispatch.h"
#include "runtime/sampler.h"
#include "tests/kfd_tier/kfd_tier_fixture.h"
#include "tests/sequence_rows_body.h"

namespace zinc {
namespace {

// The model of `file` and PM4 tiers of a given slot count over it on the simulated GPU, through
// one of its doors (kfd queue, umq user queue, CS ioctl) and code objects (`gfx`): 16-row steps.
struct KfdRows {
    explicit KfdRows(const std::string& file, test::Door door = test::Door::Kfd, const std::string& gfx = test::defaultSimGfx())
        : model(model::Model::load(test::sharedPath("models/" + file))),
          graph(graph::buildDecodeGraph(model->config(), model->weights())) {
        tier.name = door == test::Door::Umq ? "umq" : "kfd";
        tier.config = &model->config();
        tier.open = [this, door, gfx](int32_t slots, int32_t contextLength) {
            runtime::TierOptions options;
            options.contextLength = contextLength;
            options.maxBatch = 16;
            options.sequences = slots;
            kfd::Pm4TierOptions o;
            o.route = door == test::Door::Cs ? kfd::SubmitRoute::Cs : kfd::SubmitRoute::Doorbell;
            o.tierName = tier.name;
            return kfd::makePm4Tier(graph, options, door == test::Door::Kfd ? test::simDevice(gfx) : test::simDrmDevice(gfx), o);
        };
        tier.expectSame = test::expectExactlyTheSame;
        // Past 128 keys a decode row splits its attention as a decode token alone does
        // (attention_combine, f32), but a prompt chunk of one row splits too where evaluate()
        // fed that position inside a batch (one F16 chain, as the cpu tier): the bound of
        // KfdAttentionSplit between the two on stories260K (2e-2; observed ~4e-4, 3.3e-3 while
        // rows never split) and the same greedy id.
        tier.expectSameLong = [](const test::SequenceLogits& got, const test::SequenceLogits& want, const std::string& where) {
            ASSERT_EQ(got.size(), want.size()) << where;
            for (size_t i = 0; i < got.size(); ++i) {
                float worst = 0;
                for (size_t v = 0; v < got[i].size(); ++v) worst = std::max(worst, std::fabs(got[i][v] - want[i][v]));
                EXPECT_LE(worst, 2e-2f) << where << ", wanted row " << i;
                EXPECT_EQ(runtime::argmax(got[i]), runtime::argmax(want[i])) << where << ", wanted row " << i;
            }
        };
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

// A row past one block of 128 keys (attention's second block, on its slot's rows) beside a short
// one: bit for bit itself alone through evaluateRows, near its evaluate() path (whose decode
// splits). About 400 rows at up to 131 positions: 44 s in the ISA interpreter, 7 s on PoCL, so it
// runs in meson's kfd_tier_pocl (the kernels' OpenCL C; the machine code takes the rows block in
// the tests above).
TEST(KfdSequenceRows, GreedyRowsAreTheirLogitsArgmax) {
    test::expectGreedyRowsAreTheirLogitsArgmax(KfdRows("stories260K.gguf").tier, "stories260K.gguf", 4, 4);
}

TEST(KfdSequenceRows, ALongRowBesideAShortOneEqualsItselfAlone) {
    if (kfd::simExecFromEnvironment() != kfd::SimExec::Pocl) GTEST_SKIP() << "runs with ZINC_SIM_EXEC=pocl (meson test kfd_tier_pocl)";
    test::expectALongRowBesideAShortOneEqualsItselfAlone(KfdRows("stories260K.gguf").tier, "stories260K.gguf", 129, 144);
}

// The rows block travels in the submission's head: through the umq door's ring and in the CS
// job's head IB too.
TEST(KfdSequenceRows, TheUmqAndCsDoorsCarryTheRows) {
    test::expectSequencesAtDifferentLengthsDecodeTogether(KfdRows("stories260K.gguf", test::Door::Umq).tier, "stories260K.gguf", 3);
    test::expectSequencesAtDifferentLengthsDecodeTogether(KfdRows("stories260K.gguf", test::Door::Cs).tier, "stories260K.gguf", 3);
}

TEST(KfdSequenceRows, ARowOutsideTheSlotsIsAnError) { test::expectRowsOutsideTheSlotsAreAnError(KfdRows("stories260K.gguf").tier); }

// A hybrid (qwen35moe) keeps its conv windows and DeltaNet matrices per slot (ssm_conv and
// delta_net find each row's slot in the rows block): rows bit for bit each sequence alone, each
// slot from where its state ends or from its snapshot, through every door.
TEST(KfdSequenceRowsHybrid, SeveralSequencesInOneStepEqualEachAlone) {
    test::expectSeveralSequencesInOneStepEqualEachAlone(KfdRows("qwen35moe-tiny.gguf").tier, "qwen35moe-tiny.gguf");
}

// The decode step's rows are each in a slot of their own: ssm_conv and delta_net step them side
// by side, a workgroup row each (KfdPlan.DecodeRowsInSlotsOfTheirOwnStepTheRecurrentOpsSideBySide),
// on RDNA3's and RDNA4's machine code (and on PoCL: meson's kfd_tier_pocl).
TEST(KfdSequenceRowsHybrid, FourSequencesAtDifferentLengthsDecodeTogether) {
    for (const test::Door door : {test::Door::Kfd, test::Door::Umq, test::Door::Cs})
        test::expectSequencesAtDifferentLengthsDecodeTogether(KfdRows("qwen35moe-tiny.gguf", door).tier, "qwen35moe-tiny.gguf", 4);
    test::expectSequencesAtDifferentLengthsDecodeTogether(KfdRows("qwen35moe-tiny.gguf", test::Door::Kfd, "gfx1201").tier,
                                                          "qwen35moe-tiny.gguf", 4);
}

TEST(KfdSequenceRowsHybrid, AHybridSlotGoesOnOnlyFromWhereItsStateEnds) {
    test::expectAHybridSlotGoesOnOnlyFromWhereItsStateEnds(KfdRows("qwen35moe-tiny.gguf").tier);
}

TEST(KfdSequenceRowsHybrid, AHybridSlotGoesOnFromItsSnapshot) {
    test::expectAHybridSlotGoesOnFromItsSnapshot(KfdRows("qwen35moe-tiny.gguf").tier);
}

}  // namespace
}  // namespace zinc
