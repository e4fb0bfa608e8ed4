#pragma once
// Submits the vulkan tier's recorded plans on its queue: the token-state upload first when the
// host wrote new state, waits bounded by the tier's timeout that name what they wait for, and
// the timestamp queries of timed plans (query 0 the plan's start, 1..n the end of each timed
// dispatch, n + 1 the plan's end).
#include <vulkan/vulkan.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "vulkan/tier_memory.h"
#include "vulkan/vk_device.h"
#include "vulkan/vk_queue.h"

namespace zinc::vulkan {

class Submitter {
public:
    static constexpr uint32_t kMaxQueries = 8192;  // per-dispatch timestamps of one plan

    // `timestamps`: create the query pool (when the device can time dispatches).
    Submitter(const vk::Device& device, vk::Queue& queue, const TierMemory& memory, bool timestamps,
              std::chrono::milliseconds timeout);
    // Waits (bounded) for what is still in flight: the buffers must outlive it.
    ~Submitter();
    Submitter(const Submitter&) = delete;
    Submitter& operator=(const Submitter&) = delete;

    // Submits `plan`, after the token-state upload when `withState`; returns its timeline value.
    uint64_t submit(VkCommandBuffer plan, bool withState);
    void wait(uint64_t value, const std::string& what);

    bool timestamps() const { return queryPool_ != VK_NULL_HANDLE; }
    // Records the reset and start query at a plan's beginning / the end query at its end.
    void recordTimingStart(VkCommandBuffer cmd) const;
    void recordTimingEnd(VkCommandBuffer cmd, size_t timedDispatches) const;
    VkQueryPool queryPool() const { return queryPool_; }
    // Reads the last timed plan's queries: adds each dispatch's seconds to `opSeconds` by
    // label and returns the plan's seconds; nothing (-1) when the results are not ready.
    double readTimestamps(const std::vector<std::string>& labels, std::map<std::string, double>& opSeconds) const;

private:
    const vk::Device& device_;
    vk::Queue& queue_;
    std::chrono::milliseconds timeout_;
    VkCommandBuffer loadState_ = VK_NULL_HANDLE;
    VkQueryPool queryPool_ = VK_NULL_HANDLE;
};

}  // namespace zinc::vulkan
