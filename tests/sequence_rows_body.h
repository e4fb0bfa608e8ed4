#pragma once
// Continuous batching's one test body (Tier::evaluateRows), run over every tier that batches
// sequences: tests/cpu, tests/vulkan and tests/kfd_tier sequence_rows_test.cpp. Rows of several
// sequences in one step, each at its own position in its own KV slot, give every sequence what
// it gets alone on a one-slot tier of the same kind; how close "the same" is, is the tier's
// (SequenceRowsTier::expectSame: bit for bit on the cpu and PM4 tiers, the goldens' tolerance
// and the same greedy ids on the vulkan tier, whose prompts alone take the tiled matmul).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/model_config.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "runtime/tier.h"

namespace zinc::test {

using SequenceLogits = std::vector<std::vector<float>>;

// One sequence alone on a tier through runtime::Session (evaluate()'s path), its logits after
// every count of tokens fed in `wantAfter` (increasing, each at most tokens.size()).
inline SequenceLogits logitsAlone(const model::ModelConfig& config, runtime::Tier& tier, const std::vector<int32_t>& tokens,
                                  const std::vector<size_t>& wantAfter) {
    runtime::Session session(config, tier);
    SequenceLogits out;
    size_t fed = 0;
    for (size_t upTo : wantAfter) {
        auto logits = session.feed(std::span(tokens).subspan(fed, upTo - fed));
        out.emplace_back(logits.begin(), logits.end());
        fed = upTo;
    }
    return out;
}

// One sequence alone through evaluateRows on a one-slot tier: all of it in one step, every row
// wanting logits, so each count of tokens fed has its logits.
inline SequenceLogits logitsAloneThroughRows(const model::ModelConfig& config, runtime::Tier& tier,
                                             const std::vector<int32_t>& tokens, const std::vector<size_t>& wantAfter) {
    std::vector<runtime::SequenceRow> rows;
    for (size_t p = 0; p < tokens.size(); ++p) rows.push_back({0, int32_t(p), tokens[p], true});
    const size_t vocab = size_t(config.nVocab);
    std::vector<float> logits(vocab * rows.size());
    tier.evaluateRows(rows, logits);
    SequenceLogits out;
    for (size_t upTo : wantAfter) out.emplace_back(logits.begin() + long((upTo - 1) * vocab), logits.begin() + long(upTo * vocab));
    return out;
}

// What a tier's test gives the body: tiers of its kind over one model, and how a sequence's
// logits from the batched steps compare with its logits alone.
struct SequenceRowsTier {
    using Compare = std::function<void(const SequenceLogits& got, const SequenceLogits& alone, const std::string& where)>;
    std::string name;  // the tier's name, as its errors begin ("cpu", "vulkan", "kfd")
    const model::ModelConfig* config = nullptr;
    // A tier of `slots` KV slots over a context of contextLength (64 unless a body needs more).
    std::function<std::unique_ptr<runtime::Tier>(int32_t slots, int32_t contextLength)> open;
    Compare expectSame;
    // Past the length where the tier's evaluate() splits decode attention and its rows may not
    // (the PM4 tier: 128 keys), how a sequence compares with its evaluate() path alone; empty:
    // expectSame.
    Compare expectSameLong;
    // Also bit for bit what each sequence gets alone through evaluateRows (vulkan: its batched
    // plans' rows do not depend on the rows beside them, though evaluate()'s prompts differ).
    bool exactAloneThroughRows = false;
};

// Bit for bit (cpu, PM4 tiers).
inline void expectExactlyTheSame(const SequenceLogits& got, const SequenceLogits& alone, const std::string& where) {
    EXPECT_EQ(got, alone) << where;
}

// Sequence 0: a 6-token prompt then 2 decode tokens; 1: a 20-token prompt in two chunks (the
// first, of 16 rows with sequence 0's prompt: the vulkan tier's tiled matmul), the first next to
// sequence 0's prompt; 2: joins late in slot 2 with 3 tokens, its rows around sequence 0's; then
// a step that wants no logits (slot 2 runs its first token again).
inline void expectSeveralSequencesInOneStepEqualEachAlone(const SequenceRowsTier& t, const std::string& file) {
    using runtime::SequenceRow;
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
    steps[3] = {row(2, 0, s2[0], false)};

    auto batched = t.open(3, 64);
    ASSERT_EQ(batched->sequenceSlots(), 3) << file;
    const size_t vocab = size_t(t.config->nVocab);
    SequenceLogits got[3];
    for (const auto& step : steps) {
        std::vector<float> logits(vocab * step.size());
        batched->evaluateRows(step, logits);
        size_t k = 0;
        for (const SequenceRow& r : step)
            if (r.wantLogits) got[r.slot].emplace_back(logits.begin() + long(k * vocab), logits.begin() + long((k + 1) * vocab)), ++k;
    }
    batched.reset();
    auto single = t.open(1, 64);  // each sequence starts at position 0: one tier serves all three
    const std::vector<int32_t>* tokens[3] = {&s0, &s1, &s2};
    const std::vector<size_t> wantAfter[3] = {{6, 7, 8}, {20}, {3}};
    for (size_t s = 0; s < 3; ++s) {
        const std::string where = t.name + " tier, " + file + ": sequence " + std::to_string(s);
        t.expectSame(got[s], logitsAlone(*t.config, *single, *tokens[s], wantAfter[s]), where);
        if (t.exactAloneThroughRows) {
            EXPECT_EQ(got[s], logitsAloneThroughRows(*t.config, *single, *tokens[s], wantAfter[s])) << where << " through evaluateRows";
        }
    }
}

// A decode step of `count` sequences at as many different lengths (2, 4, ... tokens), the shape
// serve --parallel runs: each prompt alone in its slot but its last token (a step wanting no
// logits), then one step of a row per sequence, in reverse slot order; each row's logits are its
// sequence's alone.
inline void expectSequencesAtDifferentLengthsDecodeTogether(const SequenceRowsTier& t, const std::string& file, int32_t count) {
    using runtime::SequenceRow;
    const int32_t nVocab = t.config->nVocab;
    auto batched = t.open(count, 64);
    std::vector<std::vector<int32_t>> seqs(static_cast<size_t>(count));
    for (int32_t s = 0; s < count; ++s)
        for (int32_t p = 0; p <= 2 * s + 1; ++p) seqs[size_t(s)].push_back((37 * s + 11 * p + 1) % nVocab);
    for (int32_t s = 0; s < count; ++s) {
        std::vector<SequenceRow> prompt;
        const auto& seq = seqs[size_t(s)];
        for (int32_t p = 0; p + 1 < int32_t(seq.size()); ++p) prompt.push_back({s, p, seq[size_t(p)], false});
        std::vector<float> none;
        batched->evaluateRows(prompt, none);
    }
    std::vector<SequenceRow> step;
    for (int32_t s = count - 1; s >= 0; --s) step.push_back({s, int32_t(seqs[size_t(s)].size()) - 1, seqs[size_t(s)].back(), true});
    std::vector<float> logits(size_t(nVocab) * step.size());
    batched->evaluateRows(step, logits);
    batched.reset();
    auto single = t.open(1, 64);
    for (size_t k = 0; k < step.size(); ++k) {
        const auto& seq = seqs[size_t(step[k].slot)];
        const SequenceLogits got = {std::vector<float>(logits.begin() + long(k * size_t(nVocab)), logits.begin() + long((k + 1) * size_t(nVocab)))};
        t.expectSame(got, logitsAlone(*t.config, *single, seq, {seq.size()}),
                     t.name + " tier, " + file + ": slot " + std::to_string(step[k].slot));
    }
}

// Sequence s's prompt (s + 3 tokens) into slot s of two tiers of a kind, the last row's logits
// read back from `viaLogits` only (`viaIds` wants none); returns the prompts, and in `next` each
// prompt's argmax there.
inline std::vector<std::vector<int32_t>> promptTwoTiers(runtime::Tier& viaLogits, runtime::Tier& viaIds, int32_t nVocab,
                                                        int32_t count, std::vector<int32_t>& next) {
    std::vector<std::vector<int32_t>> prompts(static_cast<size_t>(count));
    next.assign(static_cast<size_t>(count), 0);
    for (int32_t s = 0; s < count; ++s) {
        std::vector<runtime::SequenceRow> prompt;
        for (int32_t p = 0; p <= s + 2; ++p) {
            prompt.push_back({s, p, (29 * s + 13 * p + 1) % nVocab, p == s + 2});
            prompts[size_t(s)].push_back(prompt.back().token);
        }
        std::vector<float> logits(static_cast<size_t>(nVocab));
        viaLogits.evaluateRows(prompt, logits);
        std::vector<float> none;
        prompt.back().wantLogits = false;
        viaIds.evaluateRows(prompt, none);
        next[size_t(s)] = runtime::argmax(logits);
    }
    return prompts;
}

// evaluateRowsGreedy: `count` sequences at different lengths decode `steps` steps together,
// each step's ids fed back, on two tiers of the same kind: one reads the logits back
// (evaluateRows) and takes their argmax, the other asks for the ids alone. The ids are the
// same at every step and row; a row that wants no id (the middle one, every other step) gets
// none and the ids after it move up.
inline void expectGreedyRowsAreTheirLogitsArgmax(const SequenceRowsTier& t, const std::string& file, int32_t count, int32_t steps) {
    using runtime::SequenceRow;
    const int32_t nVocab = t.config->nVocab;
    auto viaLogits = t.open(count, 64), viaIds = t.open(count, 64);
    std::vector<int32_t> next, length;
    for (const auto& prompt : promptTwoTiers(*viaLogits, *viaIds, nVocab, count, next)) length.push_back(int32_t(prompt.size()));
    int32_t distinct = 0;
    for (int32_t k = 0; k < steps; ++k) {
        std::vector<SequenceRow> step;
        for (int32_t s = 0; s < count; ++s) step.push_back({s, length[size_t(s)], next[size_t(s)], !(k % 2 == 1 && s == count / 2)});
        std::vector<float> logits(static_cast<size_t>(nVocab) * step.size());
        viaLogits->evaluateRows(step, logits);
        std::vector<int32_t> ids(step.size(), -1);
        viaIds->evaluateRowsGreedy(step, nVocab, ids);
        size_t wanted = 0;
        for (const SequenceRow& r : step) {
            ++length[size_t(r.slot)];
            if (!r.wantLogits) continue;
            const int32_t want = runtime::argmax(std::span<const float>(logits).subspan(wanted * size_t(nVocab), size_t(nVocab)));
            EXPECT_EQ(ids[wanted], want) << t.name << " tier, " << file << ": step " << k << ", slot " << r.slot;
            distinct += want != next[size_t(r.slot)];
            next[size_t(r.slot)] = want;
            ++wanted;
        }
        for (size_t i = wanted; i < ids.size(); ++i) EXPECT_EQ(ids[i], -1) << t.name << " tier, " << file << ": id " << i << " past the wanted rows";
    }
    EXPECT_GT(distinct, 0) << file << ": every row repeated its token (the comparison saw one id)";
}

// evaluateRowsSampled: `count` sequences decode `steps` steps together, each row drawn by its
// own seeded chain (temperatures, top-k up to 256, top-p, min-p, a repetition penalty over 16
// ids, one greedy chain with a penalty), on two tiers of the same kind: one reads the logits
// back and samples on the host (Sampler::sample), the other asks the tier for the ids with
// copies of the same samplers. The ids and the draw counts are the same at every step; a row
// that wants no id (the middle one, every other step) gets none.
inline void expectSampledRowsAreTheirSamplersDraws(const SequenceRowsTier& t, const std::string& file, int32_t count, int32_t steps) {
    using runtime::SequenceRow;
    const int32_t nVocab = t.config->nVocab;
    auto viaLogits = t.open(count, 64), viaIds = t.open(count, 64);
    std::vector<runtime::Sampler> onHost, onTier;
    for (int32_t s = 0; s < count; ++s) {
        runtime::SamplerParams p;
        p.seed = 1000 + uint64_t(s);
        p.temperature = s == 3 ? 0.0f : 0.6f + 0.25f * float(s % 4);
        p.topK = s % 3 == 0 ? 256 : s % 3 == 1 ? 40 : 7;
        p.topP = s % 2 == 0 ? 0.9f : 1.0f;
        p.minP = s % 4 == 1 ? 0.0f : 0.05f;
        if (s % 2 == 1) {
            p.repeatPenalty = 1.3f;
            p.repeatLastN = 16;
        }
        onHost.emplace_back(p);
        onTier.emplace_back(p);
    }
    std::vector<int32_t> next;
    std::vector<std::vector<int32_t>> history = promptTwoTiers(*viaLogits, *viaIds, nVocab, count, next);
    int32_t notArgmax = 0;
    for (int32_t k = 0; k < steps; ++k) {
        std::vector<SequenceRow> step;
        std::vector<runtime::RowSampler> samplers;
        for (int32_t s = 0; s < count; ++s) {
            step.push_back({s, int32_t(history[size_t(s)].size()), next[size_t(s)], !(k % 2 == 1 && s == count / 2)});
            history[size_t(s)].push_back(next[size_t(s)]);
        }
        for (const SequenceRow& r : step)
            if (r.wantLogits) samplers.push_back({&onTier[size_t(r.slot)], history[size_t(r.slot)]});
        std::vector<float> logits(static_cast<size_t>(nVocab) * step.size());
        viaLogits->evaluateRows(step, logits);
        std::vector<int32_t> ids(step.size(), -1);
        viaIds->evaluateRowsSampled(step, nVocab, samplers, ids);
        size_t wanted = 0;
        for (const SequenceRow& r : step) {
            if (!r.wantLogits) continue;
            const std::span<const float> row = std::span<const float>(logits).subspan(wanted * size_t(nVocab), size_t(nVocab));
            const int32_t want = onHost[size_t(r.slot)].sample(row, history[size_t(r.slot)]);
            const std::string where = t.name + " tier, " + file + ": step " + std::to_string(k) + ", slot " + std::to_string(r.slot);
            EXPECT_EQ(ids[wanted], want) << where;
            EXPECT_EQ(onTier[size_t(r.slot)].draws(), onHost[size_t(r.slot)].draws()) << where;
            notArgmax += want != runtime::argmax(row);
            next[size_t(r.slot)] = want;
            ++wanted;
        }
        for (size_t i = wanted; i < ids.size(); ++i) EXPECT_EQ(ids[i], -1) << t.name << " tier, " << file << ": id " << i << " past the wanted rows";
    }
    EXPECT_GT(notArgmax, 0) << file << ": every draw was the argmax (the chains' sampling was not exercised)";
}

// One decode row two ways: alone in its step (every row in a slot of its own: the vulkan tier's
// split attention rotates and stores its key, FUSED) and beside another sequence's two prompt
// rows (rows sharing a slot: qk_rope.comp does that first). The same logits, bit for bit, at
// each of `lengths` keys (below and past the exact-attention length): serve's outputs do not
// depend on what runs beside a request.
inline void expectADecodeRowIsTheSameBesideAPromptChunk(const SequenceRowsTier& t, const std::string& file,
                                                        const std::vector<int32_t>& lengths) {
    using runtime::SequenceRow;
    const int32_t nVocab = t.config->nVocab;
    for (int32_t length : lengths) {
        auto alone = t.open(2, 64), beside = t.open(2, 64);
        std::vector<SequenceRow> prompt;
        for (int32_t p = 0; p + 1 < length; ++p) prompt.push_back({0, p, (7 * p + 3) % nVocab, false});
        std::vector<float> none;
        alone->evaluateRows(prompt, none);
        beside->evaluateRows(prompt, none);
        const SequenceRow decode{0, length - 1, 42 % nVocab, true};
        std::vector<float> got(static_cast<size_t>(nVocab)), want(static_cast<size_t>(nVocab));
        const std::vector<SequenceRow> one = {decode};
        alone->evaluateRows(one, want);
        const std::vector<SequenceRow> three = {{1, 0, 5 % nVocab, false}, decode, {1, 1, 9 % nVocab, false}};
        beside->evaluateRows(three, got);
        EXPECT_EQ(got, want) << t.name << " tier, " << file << ": a decode row at " << length << " keys";
    }
}

// A long row beside a short one (vulkan: past kExactAttentionMax keys its rows split attention in
// fp32 partials beside rows computed exactly): a `longLength`-token sequence and a 5-token one
// decode two steps together; each row's logits equal, bit for bit, the sequence's own through
// evaluateRows alone (the same steps on one slot: a row's work does not depend on its batch),
// and its evaluate() path alone as the tier compares (expectSameLong).
inline void expectALongRowBesideAShortOneEqualsItselfAlone(const SequenceRowsTier& t, const std::string& file, int32_t longLength,
                                                          int32_t contextLength) {
    using runtime::SequenceRow;
    const int32_t nVocab = t.config->nVocab;
    std::vector<int32_t> longSeq(static_cast<size_t>(longLength + 2)), shortSeq = {1, 40, 41, 42, 43, 44, 45};
    for (size_t i = 0; i < longSeq.size(); ++i) longSeq[i] = static_cast<int32_t>((i * 37 + 11) % 500) % (nVocab - 1) + 1;
    // The prompt in steps of 64 rows (or the tier's most) on slot `slot` (rows past `upTo` left
    // out), wanting nothing.
    auto prompt = [&](runtime::Tier& tier, int32_t slot, const std::vector<int32_t>& seq, int32_t upTo) {
        const int32_t chunk = std::min(64, tier.maxBatch());
        for (int32_t p0 = 0; p0 < upTo; p0 += chunk) {
            std::vector<SequenceRow> rows;
            for (int32_t p = p0; p < std::min(p0 + chunk, upTo); ++p) rows.push_back({slot, p, seq[size_t(p)], false});
            std::vector<float> none;
            tier.evaluateRows(rows, none);
        }
    };
    auto batched = t.open(2, contextLength);
    prompt(*batched, 0, longSeq, longLength);
    prompt(*batched, 1, shortSeq, 5);
    SequenceLogits got[2];
    for (int32_t k = 0; k < 2; ++k) {
        const std::vector<SequenceRow> step = {{1, 5 + k, shortSeq[size_t(5 + k)], true},
                                               {0, longLength + k, longSeq[size_t(longLength + k)], true}};
        std::vector<float> logits(size_t(nVocab) * 2);
        batched->evaluateRows(step, logits);
        got[1].emplace_back(logits.begin(), logits.begin() + nVocab);
        got[0].emplace_back(logits.begin() + nVocab, logits.end());
    }
    batched.reset();
    auto single = t.open(1, contextLength);
    const std::string where = t.name + " tier, " + file + ": the ";
    const SequenceRowsTier::Compare& expectLong = t.expectSameLong ? t.expectSameLong : t.expectSame;
    expectLong(got[0], logitsAlone(*t.config, *single, longSeq, {size_t(longLength + 1), size_t(longLength + 2)}),
               where + std::to_string(longLength) + "-token sequence");
    t.expectSame(got[1], logitsAlone(*t.config, *single, shortSeq, {6, 7}), where + "5-token sequence");
    auto aloneSteps = [&](const std::vector<int32_t>& seq, int32_t promptLength) {
        prompt(*single, 0, seq, promptLength);
        SequenceLogits out;
        for (int32_t p = promptLength; p < int32_t(seq.size()); ++p) {
            const SequenceRow row[] = {{0, p, seq[size_t(p)], true}};
            std::vector<float> logits(static_cast<size_t>(nVocab));
            single->evaluateRows(row, logits);
            out.push_back(std::move(logits));
        }
        return out;
    };
    EXPECT_EQ(got[0], aloneSteps(longSeq, longLength)) << where << "long sequence through evaluateRows";
    EXPECT_EQ(got[1], aloneSteps(shortSeq, 5)) << where << "short sequence through evaluateRows";
}

// A row naming a slot the tier does not hold is an error naming the row and the slot; a slot's
// rows out of position order are refused.
inline void expectRowsOutsideTheSlotsAreAnError(const SequenceRowsTier& t) {
    auto tier = t.open(2, 64);
    std::vector<float> logits(size_t(t.config->nVocab));
    const runtime::SequenceRow rows[] = {{2, 0, 1, true}};
    try {
        tier->evaluateRows(rows, logits);
        ADD_FAILURE() << "slot 2 of 2 was accepted";
    } catch (const runtime::TierError& e) {
        EXPECT_STREQ(e.what(), (t.name + " tier: row 0 names sequence slot 2; the tier holds 2 (0..1)").c_str());
    }
    const runtime::SequenceRow backwards[] = {{1, 3, 1, false}, {1, 2, 1, true}};
    EXPECT_THROW(tier->evaluateRows(backwards, logits), runtime::TierError);
}

// Hybrids (qwen35): every tier keeps their recurrent state per slot and runs a step's rows token
// by token (the cpu tier's rows, the vulkan tier's batched plans, the PM4 tier's plans over
// rows), so that a row's logits are bit for bit the same however the rows around it fall.
// A slot's state cannot be rewound or skipped: the error names the slot and where it stands; a
// refused step moves no slot on; a slot starting again at position 0 starts from a cleared
// state (the same logits as the first time).
inline void expectAHybridSlotGoesOnOnlyFromWhereItsStateEnds(const SequenceRowsTier& t) {
    auto tier = t.open(2, 64);
    std::vector<float> none, first(size_t(t.config->nVocab)), again(first.size());
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
    expectError(rewind, t.name + " tier: the recurrent (DeltaNet) state of sequence slot 1 holds positions 0..1; it cannot "
                                 "resume at position 1 (rewinding a hybrid model needs a state snapshot)");
    const runtime::SequenceRow skip[] = {{1, 2, 7, false}, {1, 4, 8, false}};
    expectError(skip, t.name + " tier: sequence slot 1 goes from position 2 to 4 in one step; a hybrid model's recurrent state "
                               "takes every position in turn");
    const runtime::SequenceRow onwards[] = {{0, 2, 3, false}, {1, 2, 7, false}};
    EXPECT_NO_THROW(tier->evaluateRows(onwards, none));
    const runtime::SequenceRow restart[] = {{0, 3, 4, false}, {1, 0, 5, false}, {1, 1, 6, true}};
    tier->evaluateRows(restart, again);
    EXPECT_EQ(again, first) << t.name << " tier: slot 1 started again";
}

// A slot's state snapshot (Tier::saveSlotSnapshot, what serve takes where a prompt ends): after
// the slot has gone on past it, restoring it and running a prompt that shares only the
// snapshot's tokens gives what a fresh tier gives that prompt; the other slot's rows beside it
// are untouched by it.
inline void expectAHybridSlotGoesOnFromItsSnapshot(const SequenceRowsTier& t) {
    const size_t vocab = size_t(t.config->nVocab);
    const std::vector<int32_t> first = {1, 40, 41, 42, 43, 44}, second = {1, 40, 41, 42, 43, 90, 91, 92};
    auto tier = t.open(2, 64);
    std::vector<float> none, got(vocab), alone(vocab);
    std::vector<runtime::SequenceRow> step;
    for (int32_t p = 0; p < 5; ++p) step.push_back({0, p, first[size_t(p)], false});
    step.push_back({1, 0, 7, false});
    tier->evaluateRows(step, none);
    ASSERT_TRUE(tier->saveSlotSnapshot(0)) << t.name;
    const runtime::SequenceRow past[] = {{0, 5, first[5], false}, {1, 1, 8, false}};
    tier->evaluateRows(past, none);
    const runtime::SequenceRow generated[] = {{1, 2, 9, false}, {0, 6, 300, false}, {0, 7, 301, false}};
    tier->evaluateRows(generated, none);
    tier->restoreSlotSnapshot(0);
    step.clear();
    for (int32_t p = 5; p < 8; ++p) step.push_back({0, p, second[size_t(p)], p == 7});
    step.insert(step.begin() + 1, {1, 3, 10, false});
    tier->evaluateRows(step, got);
    auto fresh = t.open(1, 64);
    step.clear();
    for (int32_t p = 0; p < 8; ++p) step.push_back({0, p, second[size_t(p)], p == 7});
    fresh->evaluateRows(step, alone);
    EXPECT_EQ(got, alone) << t.name << " tier: slot 0 from its snapshot";
    EXPECT_THROW(fresh->restoreSlotSnapshot(0), runtime::TierError);  // it took none
}

}  // namespace zinc::test
