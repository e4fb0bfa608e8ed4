#pragma once
// What a failed submission or wait of the PM4 tier was, from the door's error and the queue's
// state: the words the tier's error starts with, and what recovering takes (tiers.md "When the
// GPU fails").
#include <optional>
#include <string_view>

#include "kfd/device/device.h"

namespace zinc::kfd {

struct GpuFailure {
    const char* kind = "GPU hang";  // "GPU fault", "GPU hang", "GPU reset", "bad fence"
    bool replan = false;            // a fault or a reset: the plans are recorded anew
    bool vramLost = false;          // a reset lost VRAM: weights and KV cache are gone
    bool cpPositionMeans = true;    // where the CP is names the failing op (not after a bad fence)
};

// Reads the door's reports: the queue state's fault (the simulated GPU), KFD's memory and
// hardware-exception events, amdgpu's CTX QUERY_STATE2 (the CS route), the submitter's bad fence.
GpuFailure classifyGpuFailure(std::string_view error, const std::optional<QueueState>& state);

}  // namespace zinc::kfd
