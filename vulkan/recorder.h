#pragma once
// Appends dispatches to a command buffer that is recorded once and submitted many times.
// Every dispatch is followed by a compute->compute memory barrier (the graph is a chain),
// recorded before the next command, so that the one caller who knows (GraphRecorder) can drop
// it with overlapNext() where the next dispatch neither reads what the last one wrote nor
// writes what it read or wrote: the two then run side by side. Two whole chains that share
// nothing can be recorded as lanes and run side by side step by step (beginLane / endLanes).
#include <vulkan/vulkan.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <stdexcept>
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
        if (lane_ >= 0) return capture({pipeline, bytesOf(pc), sizeof(PushConstants), x, y, z, VK_NULL_HANDLE, 0, 0});
        beginDispatch();
        bind(pipeline);
        vkCmdPushConstants(cmd_, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants), &pc);
        vkCmdDispatch(cmd_, x, y, z);
        finishDispatch();
    }

    // The same, with the workgroup counts read from `args` (a VkDispatchIndirectCommand written
    // by an earlier dispatch of the plan, made visible with indirectArgsBarrier()).
    template <typename PushConstants>
    void dispatchIndirect(VkPipeline pipeline, const PushConstants& pc, VkBuffer args, VkDeviceSize offset) {
        static_assert(sizeof(PushConstants) <= kPushConstantBytes, "push constants exceed the layout");
        if (lane_ >= 0) return capture({pipeline, bytesOf(pc), sizeof(PushConstants), 0, 0, 0, args, offset, 0});
        beginDispatch();
        bind(pipeline);
        vkCmdPushConstants(cmd_, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants), &pc);
        vkCmdDispatchIndirect(cmd_, args, offset);
        finishDispatch();
    }

    // Lanes: two chains of dispatches that read and write nothing of each other's (the caller
    // knows: GraphRecorder's shared expert beside the routed experts), each recorded whole, lane
    // 0 then lane 1, with its own barriers (overlapNext works within a lane). endLanes() emits
    // them step by step: step k holds each lane's k-th group (its dispatches between two of its
    // own barriers), side by side, one barrier between steps, so the pair costs the longer
    // chain's barriers, not both chains'. Dispatches only: a barrier or copy inside a lane is a
    // logic error. Timed plans record lanes as they come (each dispatch timed alone).
    void beginLane(uint32_t lane) {
        if (queries_) return;
        lane_ = static_cast<int32_t>(lane);
        laneGroup_ = 0;
        lanePending_ = false;
    }
    void endLanes() {
        if (lane_ < 0) return;
        lane_ = -1;
        size_t steps = 0;
        for (const auto& lane : lanes_)
            if (!lane.empty()) steps = std::max<size_t>(steps, lane.back().group + 1);
        for (uint32_t step = 0; step < steps; ++step) {
            bool first = true;
            for (const auto& lane : lanes_)
                for (const Captured& d : lane) {
                    if (d.group != step) continue;
                    if (first) flushBarrier();
                    else ++overlapped_;
                    first = false;
                    bind(d.pipeline);
                    vkCmdPushConstants(cmd_, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, d.pcBytes, d.pc.data());
                    if (d.args != VK_NULL_HANDLE) vkCmdDispatchIndirect(cmd_, d.args, d.offset);
                    else vkCmdDispatch(cmd_, d.x, d.y, d.z);
                }
            pending_ = barriers_;
        }
        for (auto& lane : lanes_) lane.clear();
    }
    // Also for shaders that read what the arguments' dispatch wrote beside them.
    void indirectArgsBarrier() {
        barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                VK_ACCESS_INDIRECT_COMMAND_READ_BIT | VK_ACCESS_SHADER_READ_BIT);
    }

    // Per-dispatch timestamps (profiling): every dispatch is tagged with the current label.
    void timeDispatches(VkQueryPool pool, std::vector<std::string>* labels) {
        queries_ = pool;
        labels_ = labels;
    }
    void setLabel(std::string label) { label_ = std::move(label); }
    const std::string& label() const { return label_; }

    void barrier(VkPipelineStageFlags src, VkAccessFlags srcAccess, VkPipelineStageFlags dst, VkAccessFlags dstAccess) {
        notInLane("a barrier");
        flushBarrier();
        emitBarrier(src, srcAccess, dst, dstAccess);
    }
    // The next dispatch may overlap the last one (no barrier between them). Timed plans keep
    // every barrier, so each dispatch's time stays its own.
    void overlapNext() {
        if (lane_ >= 0) {
            lanePending_ = false;
            return;
        }
        if (!queries_ && pending_) {
            pending_ = false;
            ++overlapped_;
        }
    }
    uint32_t overlapped() const { return overlapped_; }
    // Without the barrier after each dispatch (bench --kernels: back-to-back calls of one
    // kernel, which a plan never records).
    void setBarriers(bool on) { barriers_ = on; }

    void fill(VkBuffer dst, VkDeviceSize offset, VkDeviceSize bytes, uint32_t value) {
        notInLane("a fill");
        flushBarrier();
        vkCmdFillBuffer(cmd_, dst, offset, bytes, value);
    }
    // Barriers recorded so far: a dispatch recorded with none since an earlier one may run
    // beside it (GraphRecorder's chained matvecs wait on their producer while this is unchanged).
    uint32_t barriersEmitted() const { return barriersEmitted_; }

    void copy(VkBuffer src, VkDeviceSize srcOffset, VkBuffer dst, VkDeviceSize dstOffset, VkDeviceSize bytes) {
        notInLane("a copy");
        flushBarrier();
        VkBufferCopy region{srcOffset, dstOffset, bytes};
        vkCmdCopyBuffer(cmd_, src, dst, 1, &region);
    }

    VkCommandBuffer cmd() const { return cmd_; }
    uint32_t dispatches() const { return dispatches_; }

private:
    // A dispatch held in a lane until endLanes(): indirect where args is set.
    struct Captured {
        VkPipeline pipeline;
        std::array<uint8_t, kPushConstantBytes> pc;
        uint32_t pcBytes, x, y, z;
        VkBuffer args;
        VkDeviceSize offset;
        uint32_t group;  // the lane's barrier-separated group it belongs to
    };
    template <typename PushConstants>
    static std::array<uint8_t, kPushConstantBytes> bytesOf(const PushConstants& pc) {
        std::array<uint8_t, kPushConstantBytes> b{};
        std::memcpy(b.data(), &pc, sizeof(PushConstants));
        return b;
    }
    void capture(Captured d) {
        auto& lane = lanes_[static_cast<size_t>(lane_)];
        if (!lane.empty() && lanePending_) ++laneGroup_;
        d.group = laneGroup_;
        lane.push_back(d);
        lanePending_ = barriers_;
        ++dispatches_;
    }
    void notInLane(const char* what) const {
        if (lane_ >= 0) throw std::logic_error(std::string("vulkan tier: ") + what + " recorded inside a lane (Recorder::beginLane)");
    }
    void bind(VkPipeline pipeline) {
        if (pipeline == bound_) return;
        vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
        bound_ = pipeline;
    }
    void emitBarrier(VkPipelineStageFlags src, VkAccessFlags srcAccess, VkPipelineStageFlags dst, VkAccessFlags dstAccess) {
        ++barriersEmitted_;
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
    uint32_t dispatches_ = 0, overlapped_ = 0, barriersEmitted_ = 0;
    bool pending_ = false;  // a dispatch recorded since the last compute->compute barrier
    bool barriers_ = true;
    VkQueryPool queries_ = VK_NULL_HANDLE;
    std::vector<std::string>* labels_ = nullptr;
    std::string label_;
    int32_t lane_ = -1;  // the lane being recorded, -1: none
    uint32_t laneGroup_ = 0;
    bool lanePending_ = false;
    std::array<std::vector<Captured>, 2> lanes_;
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
