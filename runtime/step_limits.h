#pragma once
// What every tier derives from its options the same way: the context length, how many tokens
// one step takes (bounded by the activation budget) and the checks a request passes before a
// step runs. One copy here, so the tiers agree on limits and on the words of their errors.
#include <cstdint>
#include <span>
#include <string>

#include "graph/graph.h"
#include "graph/kv_layout.h"
#include "runtime/tier.h"

namespace zinc::runtime {

class StepLimits {
public:
    // `batchCap`: the most tokens the tier's kernels take in one step, on top of
    // options.maxBatch and the activation budget. Throws TierError (naming `tier`) when the
    // model declares no context length and options give none.
    StepLimits(std::string tier, const graph::Graph& graph, const TierOptions& options, int32_t batchCap = INT32_MAX);

    const std::string& tier() const { return tier_; }
    int32_t contextLength() const { return contextLength_; }
    int32_t maxBatch() const { return maxBatch_; }
    // The activation arena for maxBatch() tokens: every graph buffer, one row per token, and a
    // hybrid's persistent recurrent state once per sequence slot (options.sequences), so rows of
    // several sequences share a step.
    const graph::MemoryPlan& plan() const { return plan_; }
    // Each layer's K/V rows for this context and step size (sliding-window layers: a ring).
    const graph::KvLayout& kv() const { return kv_; }

    // evaluate(): 1..maxBatch() known token ids inside the context, a logits buffer that
    // holds what `which` asks for.
    void checkStep(std::span<const int32_t> tokens, int32_t startPos, LogitsWanted which, size_t logitsSize) const;
    // evaluateRows(): 1..maxBatch() rows, each in a slot below `slots`, inside the context, with a
    // known token id, a slot's rows in increasing positions; a logits buffer for the wanted rows.
    void checkRows(std::span<const SequenceRow> rows, int32_t slots, size_t logitsSize) const;
    // The KV slots a tier holds when `slots` are asked for (TierOptions::sequences): at least 1.
    static int32_t sequenceSlots(int32_t slots) { return slots > 1 ? slots : 1; }
    // generateGreedy()/generateSampled(): firstToken at startPos and n - 1 more after it.
    void checkGeneration(int32_t firstToken, int32_t startPos, int32_t n, int32_t nVocab) const;

    // For the tier line: "activations 61.4 MiB for 94-token steps (budget 64 MiB)".
    std::string describe() const;

private:
    std::string tier_;
    int32_t nVocab_;
    int32_t contextLength_;
    int32_t maxBatch_;
    uint64_t budget_;
    graph::MemoryPlan plan_;
    graph::KvLayout kv_;
};

// The tokens of one step whose activations (the arena less the persistent recurrent state) fit
// `budgetBytes` (at least 1, at most `limit`).
int32_t stepTokensWithin(const graph::Graph& graph, uint64_t budgetBytes, int32_t limit);

}  // namespace zinc::runtime
