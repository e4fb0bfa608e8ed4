#pragma once
// The vulkan tier's device memory besides the weights: the activation arena (the step
// limits' plan), the F16 KV cache, the rope table, the token and sampler state (a host copy
// the host writes, a device copy the kernels read), the ring of generated ids, the logits read
// back, the quantized-activation slots and the MoE / split-attention scratch; and the
// DeviceLayout of their addresses that the plans are recorded against.
#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "graph/graph.h"
#include "graph/kv_layout.h"
#include "runtime/sampler.h"
#include "runtime/tier.h"
#include "vulkan/plan_context.h"
#include "vulkan/vk_buffer.h"
#include "vulkan/vk_device.h"
#include "vulkan/vk_queue.h"

namespace zinc::vulkan {

class TierMemory {
public:
    static constexpr uint32_t kRingCapacity = 4096;  // generated ids kept before the ring wraps

    // Allocates everything and uploads the rope table (waits up to `timeout`).
    TierMemory(const vk::Device& device, vk::Queue& queue, const graph::Graph& graph, const graph::MemoryPlan& plan,
               const graph::KvLayout& kv, int32_t contextLength, int32_t maxBatch, int32_t sequences,
               int32_t deltaChunk,
               std::chrono::milliseconds timeout);

    const vk::DeviceLayout& layout() const { return layout_; }
    const graph::MemoryPlan& plan() const { return plan_; }
    const vk::DeviceBuffer& arena() const { return arena_; }
    uint64_t kvCacheBytes() const { return kCache_.bytes() + vCache_.bytes(); }
    // The two-pass matrix-core matmul's f16 weight scratch (DeviceCaps::coopmatDequant): its
    // bytes, and why it is missing where it was wanted but could not be allocated (empty else).
    uint64_t f16WeightBytes() const { return f16Weights_.bytes(); }
    const std::string& f16WeightsMissing() const { return f16WeightsMissing_; }

    // Host side of the token state: the position and ids of the next step.
    void writeState(int32_t startPos, std::span<const int32_t> tokens);
    // The same for a step over rows of several sequences (vulkan/token_state.h): each row's
    // id, position and slot, and the rows whose logits are wanted.
    void writeRows(std::span<const runtime::SequenceRow> rows);
    int32_t sequences() const { return sequences_; }
    // The sampling chain's parameters and the last fed ids (sample.comp's penalty window).
    void writeSamplerState(const runtime::SamplerParams& p, uint64_t drawBase, std::span<const int32_t> history);
    // The same for each wanted row of a step of several sequences, sampler block i for row i:
    // its sampler's chain and next draw index, the end of its history. At most samplerBlocks().
    void writeSamplerRows(std::span<const runtime::RowSampler> samplers);
    int32_t samplerBlocks() const { return samplerBlocks_; }
    // Records the copies of both host states to their device copies, then a barrier before
    // the kernels read them. `clearRecurrent`: also zero slot 0's copy of the plan's persistent
    // (recurrent-state) buffers, for evaluate()'s sequence of a hybrid model starting at position 0
    // (rows of several sequences clear their slots' copies in the shaders).
    void recordStateUpload(vk::Recorder& rec, bool clearRecurrent = false) const;
    bool hasRecurrentState() const { return plan_.stateEnd > plan_.stateBegin; }

    // Makes the logits read-back hold `rows` rows; true when the buffer was replaced (plans
    // that copy into the old one must be recorded again).
    bool ensureLogitsRows(int32_t rows);
    const vk::DeviceBuffer& logitsHost() const { return logitsHost_; }
    int32_t generatedId(int32_t step) const {
        return static_cast<const int32_t*>(ring_.mapped())[static_cast<uint32_t>(step) % kRingCapacity];
    }

private:
    void allocate();
    void uploadRopeTable(vk::Queue& queue, std::chrono::milliseconds timeout);
    void uploadRopeTable(vk::Queue& queue, std::chrono::milliseconds timeout, const vk::DeviceBuffer& target,
                         const model::RopeParams& p, const float* factors);

    const vk::Device& device_;
    const graph::Graph& graph_;
    graph::MemoryPlan plan_;
    graph::KvLayout kv_;
    int32_t contextLength_;
    int32_t maxBatch_;
    int32_t sequences_;  // KV slots: each a copy of kv_'s rows
    int32_t deltaChunk_;
    vk::DeviceBuffer arena_, kCache_, vCache_, ropeTable_, ropeTableSwa_, stateDevice_, stateHost_, samplerDevice_, samplerHost_, sampleScratch_, ring_, logitsHost_;
    int32_t logitsHostRows_ = 0;
    int32_t samplerBlocks_ = 1;
    std::array<vk::DeviceBuffer, graph::kActFormats> actSlots_, laneSlots_;
    vk::DeviceBuffer routerLogits_, routerDone_, expertActs_, gateSlots_, upSlots_, downSlots_, attnPartials_, moeGroups_, deltaChunks_;
    vk::DeviceBuffer f16Weights_, chainSites_;
    std::string f16WeightsMissing_;
    vk::DeviceLayout layout_;
};

}  // namespace zinc::vulkan
