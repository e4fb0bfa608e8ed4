// Continuous batching on the vulkan tier (Tier::evaluateRows through the batched plans): rows of
// several sequences in one step, each at its own position in its own KV slot, give every
// sequence what it gets alone on the same tier: the same greedy id after every wanted row and
// logits within the goldens' tolerance (tests/tier_conformance.h) of its evaluate() path (whose
// prompts take the tiled matmul), and bit for bit the logits it gets alone through
// evaluateRows (a batched plan's rows do not depend on the rows beside them: serve's outputs do
// not depend on the load).
#include <gtest/gtest.h>

#include "runtime/sampler.h"
#include "tests/sequence_alone.h"
#include "tests/tier_conformance.h"
#include "tests/vulkan/vulkan_fixture.h"

namespace zinc {
namespace {

using runtime::SequenceRow;

std::unique_ptr<runtime::Tier> openTier(const test::Loaded& l, int32_t slots, int32_t contextLength = 64) {
    runtime::TierOptions options;
    options.contextLength = contextLength;
    options.maxBatch = 64;
    options.sequences = slots;
    return vulkan::makeVulkanTier(l.graph, options, 0);
}

// Each sequence alone on a one-slot vulkan tier (one tier for all: each sequence starts at
// position 0): its logits after every count of tokens fed in `wantAfter`.
std::vector<std::vector<float>> alone(const test::Loaded& l, runtime::Tier& single, const std::vector<int32_t>& tokens,
                                      const std::vector<size_t>& wantAfter) {
    return test::logitsAlone(l.model->config(), single, tokens, wantAfter);
}

// Each sequence alone through evaluateRows on a one-slot tier: all of it in one step (every row
// wanting logits), so each count of tokens fed has its logits.
std::vector<std::vector<float>> aloneRows(const test::Loaded& l, runtime::Tier& single, const std::vector<int32_t>& tokens,
                                          const std::vector<size_t>& wantAfter) {
    std::vector<SequenceRow> rows;
    for (size_t p = 0; p < tokens.size(); ++p) rows.push_back({0, int32_t(p), tokens[p], true});
    const size_t vocab = size_t(l.model->config().nVocab);
    std::vector<float> logits(vocab * rows.size());
    single.evaluateRows(rows, logits);
    std::vector<std::vector<float>> out;
    for (size_t upTo : wantAfter) out.emplace_back(logits.begin() + long((upTo - 1) * vocab), logits.begin() + long(upTo * vocab));
    return out;
}

void expectSame(const std::vector<std::vector<float>>& got, const std::vector<std::vector<float>>& want,
                const std::string& file, const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << file << " " << what;
    for (size_t i = 0; i < got.size(); ++i) {
        const std::string where = file + ": " + what + ", wanted row " + std::to_string(i);
        EXPECT_EQ(runtime::argmax(got[i]), runtime::argmax(want[i])) << where;
        test::expectNearCpu(got[i], want[i], test::toleranceFor(file), where);
    }
}

class VulkanSequenceRows : public testing::TestWithParam<const char*> {};

TEST_P(VulkanSequenceRows, SeveralSequencesInOneStepEqualEachAlone) {
    ZINC_REQUIRE_VULKAN();
    const std::string file = GetParam();
    auto l = test::load(file, false);  // the model and graph; the cpu tier is not used
    // Sequence 0: a 6-token prompt then 2 decode tokens; 1: a 20-token prompt in two chunks (the
    // first, of 16 rows with sequence 0's prompt, takes the tiled matmul), the first next to
    // sequence 0's prompt; 2: joins late in slot 2 with 3 tokens, its rows around sequence 0's.
    const std::vector<int32_t> s0 = {1, 17, 200, 33, 400, 5, 90, 91};
    const std::vector<int32_t> s1 = {1, 8, 9, 250, 251, 60, 61, 62, 63, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80};
    const std::vector<int32_t> s2 = {1, 300, 12};
    auto row = [](int32_t slot, int32_t pos, int32_t token, bool want) { return SequenceRow{slot, pos, token, want}; };
    std::vector<std::vector<SequenceRow>> steps(4);
    for (int32_t p = 0; p < 6; ++p) steps[0].push_back(row(0, p, s0[size_t(p)], p == 5));
    for (int32_t p = 0; p < 10; ++p) steps[0].push_back(row(1, p, s1[size_t(p)], false));
    steps[1] = {row(0, 6, s0[6], true)};
    for (int32_t p = 10; p < 20; ++p) steps[1].push_back(row(1, p, s1[size_t(p)], p == 19));
    steps[2] = {row(2, 0, s2[0], false), row(0, 7, s0[7], true), row(2, 1, s2[1], false), row(2, 2, s2[2], true)};
    steps[3] = {row(2, 0, s2[0], false)};  // a step that wants no logits: slot 2 runs its first token again

    auto batched = openTier(l, 3);
    ASSERT_EQ(batched->sequenceSlots(), 3) << file;
    const size_t vocab = static_cast<size_t>(l.model->config().nVocab);
    std::vector<std::vector<float>> got[3];
    for (const auto& step : steps) {
        std::vector<float> logits(vocab * step.size());
        batched->evaluateRows(step, logits);
        size_t k = 0;
        for (const SequenceRow& r : step)
            if (r.wantLogits) got[r.slot].emplace_back(logits.begin() + long(k * vocab), logits.begin() + long((k + 1) * vocab)), ++k;
    }
    batched.reset();
    auto single = openTier(l, 1);
    expectSame(got[0], alone(l, *single, s0, {6, 7, 8}), file, "sequence 0");
    expectSame(got[1], alone(l, *single, s1, {20}), file, "sequence 1");
    expectSame(got[2], alone(l, *single, s2, {3}), file, "sequence 2");
    EXPECT_EQ(got[0], aloneRows(l, *single, s0, {6, 7, 8})) << file;
    EXPECT_EQ(got[1], aloneRows(l, *single, s1, {20})) << file;
    EXPECT_EQ(got[2], aloneRows(l, *single, s2, {3})) << file;
}

INSTANTIATE_TEST_SUITE_P(Models, VulkanSequenceRows,
                         testing::Values("qwen3-tiny.gguf", "qwen3moe-tiny.gguf", "stories260K.gguf", "gemma3-tiny.gguf"),
                         test::modelParamName);

// A decode step of 8 sequences at 8 different lengths, the shape serve --parallel 8 runs: each
// row's greedy id equals the sequence's own next id alone.
TEST(VulkanSequenceRowsDecode, EightSequencesAtDifferentLengthsDecodeTogether) {
    ZINC_REQUIRE_VULKAN();
    auto l = test::load("qwen3-tiny.gguf", false);
    const int32_t nVocab = l.model->config().nVocab;
    auto batched = openTier(l, 8);
    std::vector<std::vector<int32_t>> seqs(8);
    for (int32_t s = 0; s < 8; ++s)
        for (int32_t p = 0; p <= 2 * s + 1; ++p) seqs[size_t(s)].push_back((37 * s + 11 * p + 1) % nVocab);
    // Each prompt alone in its slot (all but its last token), then one step of 8 rows.
    for (int32_t s = 0; s < 8; ++s) {
        std::vector<SequenceRow> prompt;
        const auto& seq = seqs[size_t(s)];
        for (int32_t p = 0; p + 1 < int32_t(seq.size()); ++p) prompt.push_back({s, p, seq[size_t(p)], false});
        std::vector<float> none;
        batched->evaluateRows(prompt, none);
    }
    std::vector<SequenceRow> step;
    for (int32_t s = 7; s >= 0; --s) step.push_back({s, int32_t(seqs[size_t(s)].size()) - 1, seqs[size_t(s)].back(), true});
    std::vector<float> logits(size_t(nVocab) * 8);
    batched->evaluateRows(step, logits);
    batched.reset();
    auto single = openTier(l, 1);
    for (size_t k = 0; k < 8; ++k) {
        const auto& seq = seqs[size_t(step[k].slot)];
        const auto want = alone(l, *single, seq, {seq.size()});
        expectSame({std::vector<float>(logits.begin() + long(k * size_t(nVocab)), logits.begin() + long((k + 1) * size_t(nVocab)))},
                   want, "qwen3-tiny.gguf", "slot " + std::to_string(step[k].slot));
    }
}

// Rows past kExactAttentionMax keys split their attention (fp32 partials) beside short rows
// computed exactly: a 260-token sequence and a 5-token one decode two steps together; each
// row's logits equal, bit for bit, the sequence's own through evaluateRows alone (same splits
// whatever the batch), and its greedy ids and logits (within tolerance) its evaluate() path.
TEST(VulkanSequenceRowsDecode, ARowPastTheExactLengthSplitsAsItDoesAlone) {
    ZINC_REQUIRE_VULKAN();
    auto l = test::load("stories260K.gguf", false);
    const int32_t nVocab = l.model->config().nVocab;
    std::vector<int32_t> longSeq(262), shortSeq = {1, 40, 41, 42, 43, 44, 45};
    for (size_t i = 0; i < longSeq.size(); ++i) longSeq[i] = static_cast<int32_t>((i * 37 + 11) % 500) + 1;
    auto batched = openTier(l, 2, 272);
    for (int32_t p0 = 0; p0 < 260; p0 += 64) {  // the long prompt, 64 rows a step, then the short one
        std::vector<SequenceRow> rows;
        for (int32_t p = p0; p < std::min(p0 + 64, 260); ++p) rows.push_back({0, p, longSeq[size_t(p)], false});
        std::vector<float> none;
        batched->evaluateRows(rows, none);
    }
    std::vector<SequenceRow> prompt;
    for (int32_t p = 0; p < 5; ++p) prompt.push_back({1, p, shortSeq[size_t(p)], false});
    std::vector<float> none;
    batched->evaluateRows(prompt, none);
    std::vector<std::vector<float>> got[2];
    for (int32_t k = 0; k < 2; ++k) {
        const std::vector<SequenceRow> step = {{1, 5 + k, shortSeq[size_t(5 + k)], true}, {0, 260 + k, longSeq[size_t(260 + k)], true}};
        std::vector<float> logits(size_t(nVocab) * 2);
        batched->evaluateRows(step, logits);
        got[1].emplace_back(logits.begin(), logits.begin() + nVocab);
        got[0].emplace_back(logits.begin() + nVocab, logits.end());
    }
    batched.reset();
    auto single = openTier(l, 1, 272);
    expectSame(got[0], alone(l, *single, longSeq, {261, 262}), "stories260K.gguf", "the 260-token sequence");
    expectSame(got[1], alone(l, *single, shortSeq, {6, 7}), "stories260K.gguf", "the 5-token sequence");
    // Alone through rows: the same steps on one slot (the prompt, then one row a step).
    auto aloneSteps = [&](const std::vector<int32_t>& seq, int32_t promptLength) {
        std::vector<std::vector<float>> out;
        for (int32_t p0 = 0; p0 < promptLength; p0 += 64) {
            std::vector<SequenceRow> rows;
            for (int32_t p = p0; p < std::min(p0 + 64, promptLength); ++p) rows.push_back({0, p, seq[size_t(p)], false});
            std::vector<float> unused;
            single->evaluateRows(rows, unused);
        }
        for (int32_t p = promptLength; p < int32_t(seq.size()); ++p) {
            const SequenceRow row[] = {{0, p, seq[size_t(p)], true}};
            std::vector<float> logits(static_cast<size_t>(nVocab));
            single->evaluateRows(row, logits);
            out.push_back(std::move(logits));
        }
        return out;
    };
    EXPECT_EQ(got[0], aloneSteps(longSeq, 260));
    EXPECT_EQ(got[1], aloneSteps(shortSeq, 5));
}

TEST(VulkanSequenceRowsErrors, ARecurrentModelRefusesSeveralSlots) {
    ZINC_REQUIRE_VULKAN();
    auto l = test::load("qwen35moe-tiny.gguf", false);
    try {
        openTier(l, 2);
        FAIL() << "a hybrid model took two sequence slots";
    } catch (const runtime::TierError& e) {
        EXPECT_NE(std::string(e.what()).find("vulkan tier: 2 sequence slots asked for, but this model keeps recurrent state"),
                  std::string::npos)
            << e.what();
    }
}

TEST(VulkanSequenceRowsErrors, ARowOutsideTheSlotsIsAnError) {
    ZINC_REQUIRE_VULKAN();
    auto l = test::load("stories260K.gguf", false);
    auto tier = openTier(l, 2);
    std::vector<float> logits(512);
    const SequenceRow rows[] = {{2, 0, 1, true}};
    try {
        tier->evaluateRows(rows, logits);
        FAIL() << "slot 2 of 2 was accepted";
    } catch (const runtime::TierError& e) {
        EXPECT_STREQ(e.what(), "vulkan tier: row 0 names sequence slot 2; the tier holds 2 (0..1)");
    }
}

}  // namespace
}  // namespace zinc
