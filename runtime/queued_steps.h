#pragma once
// Tokens generated on a GPU with several submissions in flight: the kernel at the end of step
// i writes the id step i + 1 starts from, so the host only queues, waits and reads ids. The
// loop and its accounting are the same for every GPU tier; what a step is, is the tier's.
#include <cstdint>
#include <functional>
#include <vector>

#include "runtime/tier.h"

namespace zinc::runtime {

struct QueuedSteps {
    std::function<uint64_t(int32_t step)> submit;  // queues step `step`, returns its fence value
    std::function<void(int32_t step, uint64_t value)> wait;  // blocks until `value` is reached
    // Reads the id step `step` picked; `newest`: no later step is in flight (its timestamps
    // are still there to read).
    std::function<int32_t(int32_t step, uint64_t value, bool newest)> collect;
};

// Runs n steps, at most `ahead` (at least 1) in flight; returns the n ids. Adds n decode
// tokens and submissions and the host time outside the waits to `stats`.
std::vector<int32_t> runQueuedSteps(int32_t n, int32_t ahead, const QueuedSteps& steps, TierStats& stats);

}  // namespace zinc::runtime
