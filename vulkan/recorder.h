#pragma once
// Appends dispatches to a command buffer that is recorded once and submitted many times.
// Every dispatch is followed by a compute->compute memory barrier: the graph is a chain.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>
#include <vector>

#include "vulkan/vk_pipeline.h"

namespace zinc::vk {

class Recorder {
public:
    Recorder(VkCommandBuffer cmd, VkPipelineLayout layout) : cmd_(cmd), layout_(layout) {}

    template <typename PushConstants>
    void dispatch(VkPipeline pipeline, const PushConstants& pc, uint32_t x, uint32_t y = 1, uint32_t z = 1) {
        static_assert(sizeof(PushConstants) <= kPushConstantBytes, "push constants exceed the layout");
        if (pipeline != bound_) {
            vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
            bound_ = pipeline;
        }
        vkCmdPushConstants(cmd_, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants), &pc);
        vkCmdDispatch(cmd_, x, y, z);
        if (barriers_)
            barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        finishDispatch();
    }
    // Without the barrier after each dispatch (bench --kernels: back-to-back calls of one
    // kernel, which a plan never records).
    void setBarriers(bool on) { barriers_ = on; }

    // The same, with the workgroup counts read from `args` (a VkDispatchIndirectCommand written
    // by an earlier dispatch of the plan, made visible with indirectArgsBarrier()).
    template <typename PushConstants>
    void dispatchIndirect(VkPipeline pipeline, const PushConstants& pc, VkBuffer args, VkDeviceSize offset) {
        static_assert(sizeof(PushConstants) <= kPushConstantBytes, "push constants exceed the layout");
        if (pipeline != bound_) {
            vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
            bound_ = pipeline;
        }
        vkCmdPushConstants(cmd_, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants), &pc);
        vkCmdDispatchIndirect(cmd_, args, offset);
        barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        finishDispatch();
    }
    void indirectArgsBarrier() {
        barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT,
                VK_ACCESS_INDIRECT_COMMAND_READ_BIT);
    }

    // Per-dispatch timestamps (profiling): every dispatch is tagged with the current label.
    void timeDispatches(VkQueryPool pool, std::vector<std::string>* labels) {
        queries_ = pool;
        labels_ = labels;
    }
    void setLabel(std::string label) { label_ = std::move(label); }

    void barrier(VkPipelineStageFlags src, VkAccessFlags srcAccess, VkPipelineStageFlags dst, VkAccessFlags dstAccess) {
        VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, srcAccess, dstAccess};
        vkCmdPipelineBarrier(cmd_, src, dst, 0, 1, &b, 0, nullptr, 0, nullptr);
    }

    void copy(VkBuffer src, VkDeviceSize srcOffset, VkBuffer dst, VkDeviceSize dstOffset, VkDeviceSize bytes) {
        VkBufferCopy region{srcOffset, dstOffset, bytes};
        vkCmdCopyBuffer(cmd_, src, dst, 1, &region);
    }

    VkCommandBuffer cmd() const { return cmd_; }
    uint32_t dispatches() const { return dispatches_; }

private:
    void finishDispatch() {
        ++dispatches_;
        if (queries_) {  // the end of dispatch n lands in query n + 1 (query 0: the plan's start)
            vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries_, dispatches_);
            labels_->push_back(label_);
        }
    }

    VkCommandBuffer cmd_;
    VkPipelineLayout layout_;
    VkPipeline bound_ = VK_NULL_HANDLE;
    bool barriers_ = true;
    uint32_t dispatches_ = 0;
    VkQueryPool queries_ = VK_NULL_HANDLE;
    std::vector<std::string>* labels_ = nullptr;
    std::string label_;
};

// Workgroups needed for n items of `per` each.
inline uint32_t groupsFor(uint64_t n, uint32_t per) { return static_cast<uint32_t>((n + per - 1) / per); }

}  // namespace zinc::vk
