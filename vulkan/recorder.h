#pragma once
// Appends dispatches to a command buffer that is recorded once and submitted many times.
// Every dispatch is followed by a compute->compute memory barrier (the graph is a chain),
// recorded before the next command, so that the one caller who knows (GraphRecorder) can drop
// it with overlapNext() where the next dispatch neither reads what the last one wrote nor
// writes what it read or wrote: the two then run side by side.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vulkan/vk_pipeline.h"

namespace zinc::vk {

class Recorder {
public:
    Recorder(VkCommandBuffer cmd, VkPipelineLayout layout) : cmd_(cmd), layout_(layout) {}

    template <typename PushConstants>
    void dispatch(VkPipeline pipeline, const PushConstants& pc, uint32_t x, uint32_t y = 1, uint32_t z = 1) {
        static_assert(sizeof(PushConstants) <= kPushConstantBytes, "push constants exceed the layout");
        beginDispatch();
        if (pipeline != bound_) {
            vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
            bound_ = pipeline;
        }
        vkCmdPushConstants(cmd_, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants), &pc);
        vkCmdDispatch(cmd_, x, y, z);
        finishDispatch();
    }

    // The same, with the workgroup counts read from `args` (a VkDispatchIndirectCommand written
    // by an earlier dispatch of the plan, made visible with indirectArgsBarrier()).
    template <typename PushConstants>
    void dispatchIndirect(VkPipeline pipeline, const PushConstants& pc, VkBuffer args, VkDeviceSize offset) {
        static_assert(sizeof(PushConstants) <= kPushConstantBytes, "push constants exceed the layout");
        beginDispatch();
        if (pipeline != bound_) {
            vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
            bound_ = pipeline;
        }
        vkCmdPushConstants(cmd_, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants), &pc);
        vkCmdDispatchIndirect(cmd_, args, offset);
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
    const std::string& label() const { return label_; }

    void barrier(VkPipelineStageFlags src, VkAccessFlags srcAccess, VkPipelineStageFlags dst, VkAccessFlags dstAccess) {
        flushBarrier();
        emitBarrier(src, srcAccess, dst, dstAccess);
    }
    // The next dispatch may overlap the last one (no barrier between them). Timed plans keep
    // every barrier, so each dispatch's time stays its own.
    void overlapNext() {
        if (!queries_ && pending_) {
            pending_ = false;
            ++overlapped_;
        }
    }
    uint32_t overlapped() const { return overlapped_; }
    // Without the barrier after each dispatch (bench --kernels: back-to-back calls of one
    // kernel, which a plan never records).
    void setBarriers(bool on) { barriers_ = on; }

    void copy(VkBuffer src, VkDeviceSize srcOffset, VkBuffer dst, VkDeviceSize dstOffset, VkDeviceSize bytes) {
        flushBarrier();
        VkBufferCopy region{srcOffset, dstOffset, bytes};
        vkCmdCopyBuffer(cmd_, src, dst, 1, &region);
    }

    VkCommandBuffer cmd() const { return cmd_; }
    uint32_t dispatches() const { return dispatches_; }

private:
    void emitBarrier(VkPipelineStageFlags src, VkAccessFlags srcAccess, VkPipelineStageFlags dst, VkAccessFlags dstAccess) {
        VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, srcAccess, dstAccess};
        vkCmdPipelineBarrier(cmd_, src, dst, 0, 1, &b, 0, nullptr, 0, nullptr);
    }
    // The barrier after the last dispatch, before any later command (a plan ends with an
    // explicit barrier to the host or transfer, which records it first).
    void flushBarrier() {
        if (!pending_) return;
        pending_ = false;
        emitBarrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    }
    void beginDispatch() { flushBarrier(); }
    void finishDispatch() {
        pending_ = barriers_;
        ++dispatches_;
        if (queries_) {  // the end of dispatch n lands in query n + 1 (query 0: the plan's start)
            flushBarrier();
            vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries_, dispatches_);
            labels_->push_back(label_);
        }
    }

    VkCommandBuffer cmd_;
    VkPipelineLayout layout_;
    VkPipeline bound_ = VK_NULL_HANDLE;
    uint32_t dispatches_ = 0, overlapped_ = 0;
    bool pending_ = false;  // a dispatch recorded since the last compute->compute barrier
    bool barriers_ = true;
    VkQueryPool queries_ = VK_NULL_HANDLE;
    std::vector<std::string>* labels_ = nullptr;
    std::string label_;
};

// While alive, the recorder's dispatches carry "label (part)": a timed plan (--gpu-timestamps)
// shows the dispatches of one graph op apart (attention's qk_rope and split, a matmul's f16
// dequant).
class SubLabel {
public:
    SubLabel(Recorder& rec, std::string_view part) : rec_(rec), saved_(rec.label()) {
        rec.setLabel(saved_ + " (" + std::string(part) + ")");
    }
    ~SubLabel() { rec_.setLabel(saved_); }
    SubLabel(const SubLabel&) = delete;
    SubLabel& operator=(const SubLabel&) = delete;

private:
    Recorder& rec_;
    std::string saved_;
};

// Workgroups needed for n items of `per` each.
inline uint32_t groupsFor(uint64_t n, uint32_t per) { return static_cast<uint32_t>((n + per - 1) / per); }

}  // namespace zinc::vk
