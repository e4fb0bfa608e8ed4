// Tier::evaluateRows' default: a tier that batches no sequences still takes the rows one
// sequence's step makes (a prefill chunk or one decode token), so the server's batching loop
// runs on every tier with --parallel 1.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "runtime/sampler.h"
#include "runtime/tier.h"

namespace zinc::runtime {

bool rowsInOwnSlots(std::span<const SequenceRow> rows) {
    std::vector<int32_t> slots;
    slots.reserve(rows.size());
    for (const SequenceRow& r : rows) slots.push_back(r.slot);
    std::sort(slots.begin(), slots.end());
    return std::adjacent_find(slots.begin(), slots.end()) == slots.end();
}

void Tier::evaluateRows(std::span<const SequenceRow> rows, std::span<float> logits) {
    // A prefill chunk that wants no logits still gets the last row's, in `logits`.
    bool oneRun = !rows.empty();
    for (size_t i = 0; oneRun && i < rows.size(); ++i)
        oneRun = rows[i].slot == 0 && rows[i].position == rows[0].position + static_cast<int32_t>(i) &&
                 (!rows[i].wantLogits || i + 1 == rows.size());
    if (!oneRun)
        throw TierError(fmt::format("{} tier: runs one sequence per step (consecutive positions of slot 0, logits of the last "
                                    "row) here; rows of several sequences need several KV slots (TierOptions::sequences, tiers.md)", name()));
    std::vector<int32_t> tokens;
    tokens.reserve(rows.size());
    for (const SequenceRow& r : rows) tokens.push_back(r.token);
    evaluate(tokens, rows[0].position, LogitsWanted::Last, logits);
}

void Tier::evaluateRowsGreedy(std::span<const SequenceRow> rows, int32_t nVocab, std::span<int32_t> ids) {
    const auto vocab = static_cast<size_t>(nVocab);
    const size_t wanted = wantedRows(rows);
    if (ids.size() < wanted)
        throw TierError(fmt::format("{} tier: {} rows want an id, {} ids given", name(), wanted, ids.size()));
    std::vector<float> logits(vocab * std::max<size_t>(wanted, 1));
    evaluateRows(rows, logits);
    for (size_t i = 0; i < wanted; ++i) ids[i] = argmax(std::span<const float>(logits).subspan(i * vocab, vocab));
}

void Tier::evaluateRowsSampled(std::span<const SequenceRow> rows, int32_t nVocab, std::span<const RowSampler> samplers,
                               std::span<int32_t> ids) {
    const auto vocab = static_cast<size_t>(nVocab);
    const size_t wanted = wantedRows(rows);
    if (ids.size() < wanted || samplers.size() < wanted)
        throw TierError(fmt::format("{} tier: {} rows want an id, {} ids and {} samplers given", name(), wanted, ids.size(),
                                    samplers.size()));
    std::vector<float> logits(vocab * std::max<size_t>(wanted, 1));
    evaluateRows(rows, logits);
    for (size_t i = 0; i < wanted; ++i)
        ids[i] = samplers[i].sampler->sample(std::span<const float>(logits).subspan(i * vocab, vocab), samplers[i].history);
}

}  // namespace zinc::runtime
