#pragma once
// Continuous batching's bookkeeping, the same for every tier: which KV slot each sequence
// holds, the tokens whose K/V each slot has cached, the tokens each still has to run, and the
// rows of the next step (Tier::evaluateRows). A sequence joins or leaves between steps. Every
// decoding sequence gets one row per step; a newcomer's prompt goes in chunks within a per-step
// prefill budget, so its prefill never stalls the others' streams for long.
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/tier.h"

namespace zinc::runtime {

class SequenceSlots {
public:
    // `recurrentState`: the model keeps a recurrent state per slot (hybrids), which holds the
    // slot's whole cache and cannot be rewound. A slot's cache is then reused whole, or up to
    // the slot's state snapshot (Tier::saveSlotSnapshot), taken where its last prompt ended:
    // the next turn of a conversation repeats that prompt, not always the tokens generated after
    // it (a chat template re-renders the reply).
    SequenceSlots(int32_t slots, int32_t contextLength, bool recurrentState = false);

    int32_t slots() const { return static_cast<int32_t>(slots_.size()); }
    int32_t busyCount() const;
    bool busy(int32_t slot) const { return at(slot).busy; }

    // Takes a free slot for `prompt` (1..contextLength - 1 tokens): the one whose cache shares
    // the longest prefix with it, which is kept (the last prompt token always runs again, for
    // fresh logits). With recurrent state a prefix counts only if it is the slot's whole cache
    // or its snapshot's, and shorter than the prompt (the state goes on from there); else the
    // slot starts again at position 0. Returns the slot, or -1 when every slot is busy.
    int32_t claim(std::span<const int32_t> prompt);
    // Prompt tokens the slot's claim found already cached.
    int32_t reusedTokens(int32_t slot) const { return at(slot).reused; }
    // The claim goes on from the slot's snapshot: the tier restores it (Tier::restoreSlotSnapshot).
    bool resumesFromSnapshot(int32_t slot) const { return at(slot).fromSnapshot; }
    // Recurrent state: the slots whose prompt has run up to its last token in the step just run
    // (ran()): the tier saves each one's state now, then snapshotSaved(slot).
    std::vector<int32_t> snapshotsDue() const;
    void snapshotSaved(int32_t slot);
    // The sequence left: the slot is free; its cache stays for a later prompt's prefix.
    void release(int32_t slot);
    // Forgets a slot's cache (after a step that failed part-way).
    void forget(int32_t slot);
    // A sampled token to run in the next step.
    void append(int32_t slot, int32_t token);

    // The next step: every busy slot with one token left to run (decode) gives a row first;
    // then prompt chunks, oldest claim first, while rows stay within maxRows and prompt rows
    // within prefillBudget. A slot's last pending token wants logits. Empty: nothing to run.
    // With recurrent state a prompt's last token runs in a step after the rest of it, so the
    // state can be saved where the prompt ends (snapshotsDue).
    std::vector<SequenceRow> nextStep(int32_t maxRows, int32_t prefillBudget) const;
    // The step ran: its rows' tokens join their slots' caches.
    void ran(std::span<const SequenceRow> rows);

    // Every token run in the slot so far (a sampler's repetition history).
    const std::vector<int32_t>& cached(int32_t slot) const { return at(slot).cached; }
    // The last n tokens of what cached() will be once the slot's pending tokens have run: what
    // a sampler of the step that runs the last one looks back on (its penalty window).
    std::vector<int32_t> historyTail(int32_t slot, size_t n) const;
    // Context positions still free in the slot after what it has to run.
    int32_t room(int32_t slot) const;

private:
    struct Slot {
        bool busy = false;
        std::vector<int32_t> cached;   // K/V in the slot's region, positions 0..
        std::vector<int32_t> pending;  // to run next, from position cached.size()
        int32_t reused = 0;
        uint64_t claimedAt = 0;
        int32_t snapshotAt = -1;  // recurrent state: cached tokens the slot's state snapshot holds
        bool fromSnapshot = false;
        bool snapshotDue = false;
    };
    static size_t resumable(const Slot& s, size_t shared, size_t promptSize);
    const Slot& at(int32_t slot) const { return slots_.at(static_cast<size_t>(slot)); }
    Slot& at(int32_t slot) { return slots_.at(static_cast<size_t>(slot)); }

    std::vector<Slot> slots_;
    int32_t contextLength_;
    bool recurrentState_;
    uint64_t claims_ = 0;
};

}  // namespace zinc::runtime
