#pragma once
// Command buffers and submissions on the device's one queue, ordered by a timeline
// semaphore: submission n signals value n. Every wait is bounded; a timeout or a lost device
// throws a VkError that says which submission it was waiting for. Nothing a submission may
// still use is freed, though: after a timeout its command buffer stays in the pool, and
// teardown drains the queue first (drain), as vkFreeCommandBuffers and vkDestroy* require.
#include <vulkan/vulkan.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "vulkan/vk_device.h"

namespace zinc::vk {

// A timeline semaphore value a submission waits for before it starts.
struct SemaphoreWait {
    VkSemaphore semaphore = VK_NULL_HANDLE;
    uint64_t value = 0;
};

class Queue {
public:
    explicit Queue(const Device& device);
    ~Queue();
    Queue(const Queue&) = delete;
    Queue& operator=(const Queue&) = delete;

    VkCommandBuffer allocate();
    void free(VkCommandBuffer cmd);
    // Submits the command buffers in order; returns the timeline value that signals when
    // they are done. `waitFor` (tests: a semaphore value nobody signals) holds them back.
    uint64_t submit(std::span<const VkCommandBuffer> cmds, SemaphoreWait waitFor = {});
    // Waits until `value` signals; throws VkError (VK_TIMEOUT, VK_ERROR_DEVICE_LOST, ...)
    // naming `what`, the queue and its timeline (completed / submitted) after `timeout`.
    void wait(uint64_t value, std::chrono::milliseconds timeout, const std::string& what);
    uint64_t completed() const;
    uint64_t submitted() const { return next_ - 1; }
    // Before what the submissions use is freed: waits for all of them. Past `patience` it says
    // on stderr what it waits for (`what`) and keeps waiting: a hung GPU ends its submissions
    // with the driver's reset (VK_ERROR_DEVICE_LOST), a slow CPU device (lavapipe under the
    // sanitizers) when it is done. Never throws.
    void drain(std::chrono::milliseconds patience, const std::string& what) noexcept;
    // Records with `fill`, submits and waits (uploads, one-off copies).
    template <typename Fill>
    void runOnce(Fill&& fill, std::chrono::milliseconds timeout, const std::string& what) {
        VkCommandBuffer cmd = begin();
        fill(cmd);
        endSubmitWait(cmd, timeout, what);
    }

private:
    VkCommandBuffer begin();
    void endSubmitWait(VkCommandBuffer cmd, std::chrono::milliseconds timeout, const std::string& what);
    // `result`, after marking the device lost where it says so (Device::markLost).
    VkResult noted(VkResult result) const;
    const Device& device_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkSemaphore timeline_ = VK_NULL_HANDLE;
    uint64_t next_ = 1;
};

// Begins/ends a command buffer that may be submitted many times.
void beginReusable(VkCommandBuffer cmd);
void end(VkCommandBuffer cmd);

}  // namespace zinc::vk
