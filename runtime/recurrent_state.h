#pragma once
// Where a hybrid model's recurrent state stands (graph::Buffer::persistent: conv windows,
// DeltaNet matrices), for a tier that keeps one: it holds the sequence up to position(), cannot
// be rewound, and a state snapshot (Tier::saveStateSnapshot) puts it back at the snapshot's
// position. The tier moves the bytes; this keeps the positions and the one error text.
#include <fmt/format.h>

#include <cstdint>
#include <string>

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

    void saved() { snapshot_ = position_; }
    bool hasSnapshot() const { return snapshot_ >= 0; }
    int32_t snapshotPosition() const { return snapshot_; }
    void restored() { position_ = snapshot_; }

private:
    int32_t position_ = 0;
    int32_t snapshot_ = -1;  // -1: no snapshot taken
};

}  // namespace zinc::runtime
