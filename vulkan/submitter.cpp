#include "vulkan/submitter.h"

#include "vulkan/recorder.h"
#include "vulkan/vk_error.h"

namespace zinc::vulkan {

using namespace zinc::vk;

Submitter::Submitter(const Device& device, Queue& queue, const TierMemory& memory, bool timestamps,
                     std::chrono::milliseconds timeout)
    : device_(device), queue_(queue), timeout_(timeout) {
    for (const bool clear : {false, true}) {
        if (clear && !memory.hasRecurrentState()) break;
        VkCommandBuffer& cmd = clear ? loadStateClearing_ : loadState_;
        cmd = queue_.allocate();
        beginReusable(cmd);
        Recorder rec(cmd, VK_NULL_HANDLE);
        memory.recordStateUpload(rec, clear);
        end(cmd);
    }
    if (timestamps) {
        VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        info.queryType = VK_QUERY_TYPE_TIMESTAMP;
        info.queryCount = kMaxQueries;
        check(vkCreateQueryPool(device_.handle(), &info, nullptr, &queryPool_), "vkCreateQueryPool");
    }
}

Submitter::~Submitter() {
    // Destroyed before the plans, the memory and the pipelines (vulkan_tier.cpp): they may not go
    // while a submission (one whose wait timed out, say) still runs on them.
    queue_.drain(std::chrono::seconds(10), "vulkan tier shutdown");
    if (queryPool_) vkDestroyQueryPool(device_.handle(), queryPool_, nullptr);
}

uint64_t Submitter::submit(VkCommandBuffer plan, bool withState, bool clearRecurrent) {
    if (!withState) return queue_.submit(std::span<const VkCommandBuffer>(&plan, 1));
    const VkCommandBuffer cmds[] = {clearRecurrent && loadStateClearing_ ? loadStateClearing_ : loadState_, plan};
    return queue_.submit(cmds);
}

void Submitter::wait(uint64_t value, const std::string& what) { queue_.wait(value, timeout_, what); }

void Submitter::recordTimingStart(VkCommandBuffer cmd) const {
    vkCmdResetQueryPool(cmd, queryPool_, 0, kMaxQueries);
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queryPool_, 0);
}

void Submitter::recordTimingEnd(VkCommandBuffer cmd, size_t timedDispatches) const {
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queryPool_, static_cast<uint32_t>(timedDispatches) + 1);
}

double Submitter::readTimestamps(const std::vector<std::string>& labels, std::map<std::string, double>& opSeconds) const {
    const auto n = static_cast<uint32_t>(labels.size()) + 2;
    std::vector<uint64_t> t(n);
    const VkResult r = vkGetQueryPoolResults(device_.handle(), queryPool_, 0, n, n * sizeof(uint64_t), t.data(),
                                             sizeof(uint64_t), VK_QUERY_RESULT_64_BIT);
    if (r != VK_SUCCESS) return -1;  // VK_NOT_READY: not timed this time
    const double ns = device_.caps().timestampPeriodNs * 1e-9;
    for (size_t i = 0; i < labels.size(); ++i) opSeconds[labels[i]] += static_cast<double>(t[i + 1] - t[i]) * ns;
    return static_cast<double>(t[n - 1] - t[0]) * ns;
}

}  // namespace zinc::vulkan
