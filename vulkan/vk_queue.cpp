#include "vulkan/vk_queue.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "vulkan/vk_error.h"

namespace zinc::vk {

Queue::Queue(const Device& device) : device_(device) {
    VkCommandPoolCreateInfo info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    info.queueFamilyIndex = device.queueFamily();
    check(vkCreateCommandPool(device.handle(), &info, nullptr, &pool_), "vkCreateCommandPool");
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    type.initialValue = 0;
    VkSemaphoreCreateInfo sem{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    sem.pNext = &type;
    check(vkCreateSemaphore(device.handle(), &sem, nullptr, &timeline_), "vkCreateSemaphore", "timeline");
}

Queue::~Queue() {
    drain(std::chrono::seconds(10), "the queue's command pool");
    if (timeline_) vkDestroySemaphore(device_.handle(), timeline_, nullptr);
    if (pool_) vkDestroyCommandPool(device_.handle(), pool_, nullptr);
}

VkCommandBuffer Queue::allocate() {
    VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    info.commandPool = pool_;
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = 1;
    VkCommandBuffer cmd;
    check(vkAllocateCommandBuffers(device_.handle(), &info, &cmd), "vkAllocateCommandBuffers");
    return cmd;
}

void Queue::free(VkCommandBuffer cmd) { vkFreeCommandBuffers(device_.handle(), pool_, 1, &cmd); }

VkResult Queue::noted(VkResult result) const {
    if (result == VK_ERROR_DEVICE_LOST) device_.markLost();
    return result;
}

uint64_t Queue::submit(std::span<const VkCommandBuffer> cmds, SemaphoreWait waitFor) {
    const uint64_t value = next_;
    VkTimelineSemaphoreSubmitInfo timeline{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    timeline.signalSemaphoreValueCount = 1;
    timeline.pSignalSemaphoreValues = &value;
    VkSubmitInfo info{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    info.pNext = &timeline;
    const VkPipelineStageFlags waitStage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    if (waitFor.semaphore) {
        timeline.waitSemaphoreValueCount = 1;
        timeline.pWaitSemaphoreValues = &waitFor.value;
        info.waitSemaphoreCount = 1;
        info.pWaitSemaphores = &waitFor.semaphore;
        info.pWaitDstStageMask = &waitStage;
    }
    info.commandBufferCount = static_cast<uint32_t>(cmds.size());
    info.pCommandBuffers = cmds.data();
    info.signalSemaphoreCount = 1;
    info.pSignalSemaphores = &timeline_;
    check(noted(device_.submit(info)), "vkQueueSubmit", fmt::format("submission {}", value));
    ++next_;
    return value;
}

void Queue::drain(std::chrono::milliseconds patience, const std::string& what) noexcept {
    if (!timeline_ || submitted() == 0) return;
    VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    const uint64_t value = submitted();
    info.semaphoreCount = 1;
    info.pSemaphores = &timeline_;
    info.pValues = &value;
    const auto ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(patience).count());
    if (vkWaitSemaphores(device_.handle(), &info, ns) != VK_TIMEOUT) return;
    uint64_t done = 0;
    vkGetSemaphoreCounterValue(device_.handle(), timeline_, &done);
    std::fprintf(stderr, "vulkan: %s: %llu of %llu submissions still running after %lld ms on %s; waiting for them before freeing what they use\n",
                 what.c_str(), static_cast<unsigned long long>(value - done), static_cast<unsigned long long>(value),
                 static_cast<long long>(patience.count()), device_.caps().name.c_str());
    device_.waitIdle();
}

uint64_t Queue::completed() const {
    uint64_t value = 0;
    check(vkGetSemaphoreCounterValue(device_.handle(), timeline_, &value), "vkGetSemaphoreCounterValue");
    return value;
}

namespace {

// How long a wait polls the timeline before it blocks in vkWaitSemaphores. A blocked thread
// wakes tens of microseconds after the GPU finishes: on the H200 a step the host waits on (a
// batched step, a token with its logits read back) lost 0.1-0.2 ms of its ~3.2 to it (Qwen3-8B:
// one row 303 -> 312 tok/s, 8 rows 1,248 -> 1,274, a one-token step with logits 302 -> 314;
// results/vulkan-h100.md, run 207), as CUDA's default spin-wait does not. So on a discrete GPU
// the waiting thread polls for up to 20 ms (one core busy while the GPU runs a step), then
// blocks. A CPU device (lavapipe) runs the step on the host's own cores, which a poller would
// take from it: it blocks at once, as do integrated GPUs. ZINC_VK_SPIN_US=N sets the budget (0:
// always block; read once).
std::chrono::microseconds spinBudget(const std::string& deviceType) {
    static const char* env = std::getenv("ZINC_VK_SPIN_US");
    if (env && *env) return std::chrono::microseconds(std::strtol(env, nullptr, 10));
    return std::chrono::microseconds(deviceType == "discrete" ? 20000 : 0);
}

}  // namespace

void Queue::wait(uint64_t value, std::chrono::milliseconds timeout, const std::string& what) {
    if (const auto spin = spinBudget(device_.caps().type); spin.count() > 0) {
        const auto until = std::chrono::steady_clock::now() + spin;
        uint64_t reached = 0;
        while (vkGetSemaphoreCounterValue(device_.handle(), timeline_, &reached) == VK_SUCCESS) {
            if (reached >= value) return;
            if (std::chrono::steady_clock::now() >= until) break;
        }
    }
    VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    info.semaphoreCount = 1;
    info.pSemaphores = &timeline_;
    info.pValues = &value;
    const auto ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count());
    const VkResult r = noted(vkWaitSemaphores(device_.handle(), &info, ns));
    if (r == VK_TIMEOUT)
        throw VkError("vkWaitSemaphores", r,
                      fmt::format("{}: submission {} did not finish within {} ms on queue family {} of device {} ({}); "
                                  "its timeline semaphore is at {} (the last submission retired), {} submitted",
                                  what, value, timeout.count(), device_.queueFamily(), device_.caps().index,
                                  device_.caps().name, completed(), submitted()));
    check(r, "vkWaitSemaphores", fmt::format("{}: submission {}", what, value));
}

VkCommandBuffer Queue::begin() {
    VkCommandBuffer cmd = allocate();
    VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cmd, &info), "vkBeginCommandBuffer");
    return cmd;
}

void Queue::endSubmitWait(VkCommandBuffer cmd, std::chrono::milliseconds timeout, const std::string& what) {
    uint64_t value = 0;
    try {
        check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer", what);
        value = submit(std::span<const VkCommandBuffer>(&cmd, 1));
        wait(value, timeout, what);
    } catch (...) {
        // Still pending after a timeout: the pool frees it, after the queue drained.
        if (value == 0) free(cmd);
        throw;
    }
    free(cmd);
}

void beginReusable(VkCommandBuffer cmd) {
    VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    check(vkBeginCommandBuffer(cmd, &info), "vkBeginCommandBuffer");
}

void end(VkCommandBuffer cmd) { check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer"); }

}  // namespace zinc::vk
