#pragma once
// The host side of a PM4 queue, over any kfd::Device: copy packets into the ring at wptr
// (wrapping), never past the CP's rptr, then publish wptr and ring the doorbell. And the two
// waits a runtime needs, both bounded and both reporting the queue's state when they give up.
#include <cstdint>
#include <span>

#include "kfd/device/device.h"

namespace zinc::kfd {

class QueueWriter {
public:
    QueueWriter(Device& device, const Queue& queue);

    const Queue& queue() const { return queue_; }
    uint64_t wptr() const { return wptr_; }  // dwords written so far (published or not)
    // Dwords that can be written before wptr would catch up with the CP's rptr. One dword stays
    // free: rptr is a ring offset, so a completely full ring would read as empty.
    uint32_t space() const;
    // Copies `dwords` at wptr without publishing them. Fails (nothing written) when they do not
    // fit: the caller waits for the CP (waitForSpace) or submits less.
    Status write(std::span<const uint32_t> dwords);
    // Publishes everything written and rings the doorbell.
    void submit();
    Status submit(std::span<const uint32_t> dwords);
    // Waits until `dwords` fit, or the timeout passes (an error with the queue state).
    Status waitForSpace(uint32_t dwords, uint32_t timeoutMs);
    // Waits until the CP has consumed everything submitted (rptr == wptr in the ring).
    Status waitIdle(uint32_t timeoutMs);

private:
    Device& device_;
    Queue queue_;
    uint64_t wptr_;
};

// A fence: a 64-bit value a RELEASE_MEM writes, plus the event its interrupt signals.
struct Fence {
    const volatile uint64_t* value = nullptr;  // CPU view of the fence word
    uint64_t gpuAddress = 0;
    const Event* event = nullptr;              // may be null: then the fence word is polled
};

// Waits until *fence.value >= target. Bounded: on timeout the error names the fence address,
// what it holds and what was awaited, then the queue's state (rptr, wptr, last packet).
Status waitFence(Device& device, const Queue& queue, const Fence& fence, uint64_t target, uint32_t timeoutMs);

}  // namespace zinc::kfd
