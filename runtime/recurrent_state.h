#pragma once
// Where a hybrid model's recurrent state stands (graph::Buffer::persistent: conv windows,
// DeltaNet matrices), for a tier that keeps one: it holds the sequence up to position(), cannot
// be rewound, and a state snapshot (Tier::saveStateSnapshot) puts it back at the snapshot's
// position. The tier moves the bytes; this keeps the positions and the one error text.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/tier.h"

namespace zinc::runtime {

class RecurrentStatePosition {
public:
    // A step that feeds `fed` tokens from `startPos`: position 0 starts a new sequence (the tier
    // clears the state: returns true); anywhere but where the state ends throws TierError.
    bool advance(const std::string& tier, int32_t startPos, int32_t fed) {
        if (startPos != 0 && startPos != position_)
            throw TierError(fmt::format("{} tier: the recurrent (DeltaNet) state holds positions 0..{}; it cannot resume at "
                                        "position {} (rewinding a hybrid model needs a state snapshot)",
                                        tier, position_ - 1, startPos));
        position_ = startPos + fed;
        return startPos == 0;
    }
    // The step fed a different number of tokens than advance() was told (a generation that ended early).
    void setEnd(int32_t position) { position_ = position; }
    int32_t position() const { return position_; }

    // A slot snapshot's position (the cpu tier's; the GPU tiers keep it with their copy).
    void saved() { snapshot_ = position_; }
    void restored() { position_ = snapshot_; }

private:
    int32_t position_ = 0;
    int32_t snapshot_ = -1;  // -1: no snapshot taken
};

// A tier that keeps a recurrent state per sequence slot (graph::MemoryPlan::stateCopies): where
// each slot's state stands. Slot 0 is also the state of evaluate()'s one sequence.
class RecurrentSlotPositions {
public:
    explicit RecurrentSlotPositions(int32_t slots) : slots_(static_cast<size_t>(slots > 1 ? slots : 1)) {}
    RecurrentStatePosition& slot(int32_t s) { return slots_.at(static_cast<size_t>(s)); }

    // A step of rows (Tier::evaluateRows, slots already checked): each slot's rows go on from
    // where its state ends, or start it again at position 0, one position after the other.
    // Checks every row before it moves any slot on (a refused step changes nothing) and returns
    // the slots whose state the tier clears first, in increasing order.
    std::vector<int32_t> advanceRows(const std::string& tier, std::span<const SequenceRow> rows) {
        std::vector<int32_t> next(slots_.size(), -1), cleared;
        for (const SequenceRow& r : rows) {
            int32_t& at = next[static_cast<size_t>(r.slot)];
            if (at < 0) {
                const int32_t end = slot(r.slot).position();
                if (r.position == 0) {
                    cleared.push_back(r.slot);
                } else if (r.position != end) {
                    throw TierError(fmt::format("{} tier: the recurrent (DeltaNet) state of sequence slot {} holds positions "
                                                "0..{}; it cannot resume at position {} (rewinding a hybrid model needs a "
                                                "state snapshot)", tier, r.slot, end - 1, r.position));
                }
            } else if (r.position != at) {
                throw TierError(fmt::format("{} tier: sequence slot {} goes from position {} to {} in one step; a hybrid "
                                            "model's recurrent state takes every position in turn", tier, r.slot, at - 1,
                                            r.position));
            }
            at = r.position + 1;
        }
        for (size_t s = 0; s < next.size(); ++s)
            if (next[s] >= 0) slots_[s].setEnd(next[s]);
        std::sort(cleared.begin(), cleared.end());
        return cleared;
    }

private:
    std::vector<RecurrentStatePosition> slots_;
};

}  // namespace zinc::runtime
