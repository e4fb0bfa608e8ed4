// Continuous batching on the cpu tier (Tier::evaluateRows): rows of several sequences in one
// step, each at its own position in its own KV slot, give every sequence the logits it gets
// alone, bit for bit (each row's arithmetic does not depend on its neighbours).
#include <gtest/gtest.h>

#include "tests/cpu_tier_fixture.h"
#include "tests/sequence_alone.h"

namespace zinc {
namespace {

using runtime::SequenceRow;

using Opened = test::OpenedCpuTier;

Opened open(const std::string& file, int32_t slots) { return test::openCpuTier(file, 64, slots); }

// Each sequence alone: its logits after every token in `wantAfter` (count of tokens fed).
std::vector<std::vector<float>> alone(const std::string& file, const std::vector<int32_t>& tokens,
                                      const std::vector<size_t>& wantAfter) {
    Opened o = open(file, 1);
    return test::logitsAlone(o.model->config(), *o.tier, tokens, wantAfter);
}

TEST(CpuSequenceRows, SeveralSequencesInOneStepEqualEachAlone) {
    // qwen3-tiny-q3_k_m holds Q4_K, Q5_K and Q6_K matrices: its steps of 10, 6 and 4 rows
    // run the multi-token K-quant kernels (an 8-token group and a tail).
    for (const char* file : {"qwen3-tiny.gguf", "qwen3moe-tiny.gguf", "stories260K.gguf", "gemma3-tiny.gguf",
                             "qwen3-tiny-q3_k_m.gguf"}) {
        // Sequence 0: a 6-token prompt then 2 decode tokens; 1: a 9-token prompt in two chunks,
        // the first next to sequence 0's prompt; 2: joins late in slot 2 with 3 tokens.
        const std::vector<int32_t> s0 = {1, 17, 200, 33, 400, 5, 90, 91};
        const std::vector<int32_t> s1 = {1, 8, 9, 250, 251, 60, 61, 62, 63};
        const std::vector<int32_t> s2 = {1, 300, 12};
        auto row = [](int32_t slot, int32_t pos, int32_t token, bool want) { return SequenceRow{slot, pos, token, want}; };
        std::vector<std::vector<SequenceRow>> steps(3);
        for (int32_t p = 0; p < 6; ++p) steps[0].push_back(row(0, p, s0[p], p == 5));
        for (int32_t p = 0; p < 4; ++p) steps[0].push_back(row(1, p, s1[p], false));
        steps[1] = {row(0, 6, s0[6], true)};
        for (int32_t p = 4; p < 9; ++p) steps[1].push_back(row(1, p, s1[p], p == 8));
        steps[2] = {row(2, 0, s2[0], false), row(0, 7, s0[7], true), row(2, 1, s2[1], false), row(2, 2, s2[2], true)};

        Opened batched = open(file, 3);
        ASSERT_EQ(batched.tier->sequenceSlots(), 3) << file;
        const size_t vocab = static_cast<size_t>(batched.model->config().nVocab);
        std::vector<std::vector<float>> got[3];
        for (const auto& step : steps) {
            std::vector<float> logits(vocab * step.size());
            batched.tier->evaluateRows(step, logits);
            size_t k = 0;
            for (const SequenceRow& r : step)
                if (r.wantLogits) got[r.slot].emplace_back(logits.begin() + k * vocab, logits.begin() + (k + 1) * vocab), ++k;
        }
        EXPECT_EQ(got[0], alone(file, s0, {6, 7, 8})) << file;
        EXPECT_EQ(got[1], alone(file, s1, {9})) << file;
        EXPECT_EQ(got[2], alone(file, s2, {3})) << file;
    }
}

TEST(CpuSequenceRows, ARowOutsideTheSlotsIsAnError) {
    Opened o = open("stories260K.gguf", 2);
    std::vector<float> logits(512);
    const SequenceRow rows[] = {{2, 0, 1, true}};
    try {
        o.tier->evaluateRows(rows, logits);
        FAIL() << "slot 2 of 2 was accepted";
    } catch (const runtime::TierError& e) {
        EXPECT_STREQ(e.what(), "cpu tier: row 0 names sequence slot 2; the tier holds 2 (0..1)");
    }
    const SequenceRow backwards[] = {{1, 3, 1, false}, {1, 2, 1, true}};
    EXPECT_THROW(o.tier->evaluateRows(backwards, logits), runtime::TierError);
}

TEST(CpuSequenceRows, ARecurrentModelRefusesSeveralSlots) {
    try {
        open("qwen35moe-tiny.gguf", 2);
        FAIL() << "a hybrid model took two sequence slots";
    } catch (const runtime::TierError& e) {
        EXPECT_NE(std::string(e.what()).find("keeps recurrent state"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace zinc
