#include "runtime/step_limits.h"

#include <fmt/format.h>

#include "graph/batched_step.h"

#include <algorithm>

namespace zinc::runtime {

uint64_t activationBytes(const graph::MemoryPlan& plan) { return plan.arenaBytes - (plan.stateEnd - plan.stateBegin); }

int32_t stepTokensWithin(const graph::Graph& graph, uint64_t budgetBytes, int32_t limit) {
    // Persistent (recurrent-state) buffers have one copy whatever the step's tokens: like the KV
    // cache they are the model's memory, not the step's, and the budget leaves them out.
    uint64_t perToken = 0;
    for (const auto& b : graph.buffers)
        if (!b.persistent) perToken += static_cast<uint64_t>(b.width) * 4;
    int32_t tokens = limit;
    if (perToken > 0) tokens = static_cast<int32_t>(std::min<uint64_t>(static_cast<uint64_t>(limit), budgetBytes / perToken));
    tokens = std::max(tokens, 1);
    // Each buffer is rounded up to its alignment, so the arena can be a little over n * perToken.
    while (tokens > 1 && activationBytes(graph::planMemory(graph, tokens)) > budgetBytes) --tokens;
    return tokens;
}

StepLimits::StepLimits(std::string tier, const graph::Graph& graph, const TierOptions& options, int32_t batchCap)
    : tier_(std::move(tier)),
      nVocab_(graph.config->nVocab),
      contextLength_(options.contextLength > 0 ? options.contextLength : std::min(graph.config->nCtxTrain, 4096)),
      maxBatch_(stepTokensWithin(graph, options.activationBudget ? options.activationBudget : kHostActivationBudget,
                                 std::clamp(options.maxBatch, 1, std::max(1, batchCap)))),
      budget_(options.activationBudget ? options.activationBudget : kHostActivationBudget),
      plan_(graph::planMemory(graph, maxBatch_, sequenceSlots(options.sequences))),
      kv_(graph::planKv(*graph.config, contextLength_, maxBatch_)) {
    if (contextLength_ <= 0)
        throw TierError(fmt::format("{} tier: the model declares no context length; pass --ctx", tier_));
}

void StepLimits::checkStep(std::span<const int32_t> tokens, int32_t startPos, LogitsWanted which, size_t logitsSize) const {
    const auto n = static_cast<int64_t>(tokens.size());
    if (n == 0 || n > maxBatch_) throw TierError(fmt::format("{} tier: batch of {} tokens (limit {})", tier_, n, maxBatch_));
    if (startPos < 0 || startPos + n > contextLength_)
        throw TierError(fmt::format("{} tier: positions {}..{} exceed the context length {}", tier_, startPos, startPos + n - 1,
                                    contextLength_));
    for (int32_t id : tokens)
        if (id < 0 || id >= nVocab_)
            throw TierError(fmt::format("{} tier: token id {} is outside the vocabulary (0..{})", tier_, id, nVocab_ - 1));
    const size_t want = static_cast<size_t>(nVocab_) * (which == LogitsWanted::All ? static_cast<size_t>(n) : 1);
    if (logitsSize < want)
        throw TierError(fmt::format("{} tier: logits buffer holds {} floats, {} needed", tier_, logitsSize, want));
}

void StepLimits::checkRows(std::span<const SequenceRow> rows, int32_t slots, size_t logitsSize) const {
    const auto n = static_cast<int64_t>(rows.size());
    if (n == 0 || n > maxBatch_) throw TierError(fmt::format("{} tier: batch of {} rows (limit {})", tier_, n, maxBatch_));
    size_t wanted = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
        const SequenceRow& r = rows[i];
        if (r.slot < 0 || r.slot >= slots)
            throw TierError(fmt::format("{} tier: row {} names sequence slot {}; the tier holds {} (0..{})", tier_, i, r.slot,
                                        slots, slots - 1));
        if (r.position < 0 || r.position >= contextLength_)
            throw TierError(fmt::format("{} tier: row {} (slot {}) is at position {}, outside the context length {}", tier_, i,
                                        r.slot, r.position, contextLength_));
        if (r.token < 0 || r.token >= nVocab_)
            throw TierError(fmt::format("{} tier: token id {} is outside the vocabulary (0..{})", tier_, r.token, nVocab_ - 1));
        for (size_t j = 0; j < i; ++j)
            if (rows[j].slot == r.slot && rows[j].position >= r.position)
                throw TierError(fmt::format("{} tier: rows {} and {} of slot {} are at positions {} and {}; a slot's rows go in "
                                            "increasing positions", tier_, j, i, r.slot, rows[j].position, r.position));
        wanted += r.wantLogits ? 1 : 0;
    }
    const size_t want = static_cast<size_t>(nVocab_) * wanted;
    if (logitsSize < want)
        throw TierError(fmt::format("{} tier: logits buffer holds {} floats, {} needed", tier_, logitsSize, want));
}

void StepLimits::checkGeneration(int32_t firstToken, int32_t startPos, int32_t n, int32_t nVocab) const {
    if (nVocab != nVocab_)
        throw TierError(fmt::format("{} tier: generation for {} logits, the model has {}", tier_, nVocab, nVocab_));
    const int32_t one[] = {firstToken};
    checkStep(one, startPos, LogitsWanted::Last, static_cast<size_t>(nVocab_));
    if (static_cast<int64_t>(startPos) + n > contextLength_)
        throw TierError(fmt::format("{} tier: {} tokens from position {} exceed the context length {}", tier_, n, startPos,
                                    contextLength_));
}

std::string StepLimits::describe() const {
    constexpr double kMiB = 1 << 20;
    const uint64_t state = plan_.stateEnd - plan_.stateBegin;
    return fmt::format("activations {:.1f} MiB for {}-token steps (budget {:.0f} MiB){}", static_cast<double>(activationBytes(plan_)) / kMiB,
                       maxBatch_, static_cast<double>(budget_) / kMiB,
                       state ? fmt::format(", recurrent state {:.1f} MiB{}", static_cast<double>(state) / kMiB,
                                           plan_.stateCopies > 1 ? fmt::format(" ({} sequence slots)", plan_.stateCopies)
                                                                 : std::string())
                             : std::string());
}

}  // namespace zinc::runtime
