#pragma once
// Everything the kfd tier keeps in GPU memory, allocated once: the weights (uploaded once, in
// their GGUF block layout), the activation arena of graph::planMemory, the F16 KV cache, the
// token-state block, quantized-activation and MoE scratch. Addresses only: what a recorded
// plan needs to write kernargs. VRAM is CPU-visible (kfd::MemoryKind::Vram), so uploads are
// plain stores through the CPU mapping — unless the device's BAR is smaller than what would
// need to be visible: then weights and KV cache live in VRAM outside it, and the weights go
// through a GTT staging buffer and DMA_DATA (staged_upload.h).
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/kv_layout.h"
#include "graph/lower.h"
#include "kfd/device/device.h"

namespace zinc::kfd {

// Frees its memory with the device that gave it; movable, not copyable.
class DeviceMemory {
public:
    DeviceMemory() = default;
    // Throws runtime::TierError naming `what` when the device refuses.
    DeviceMemory(Device& device, uint64_t bytes, MemoryKind kind, const std::string& what, AllocOptions options = {});
    ~DeviceMemory();
    DeviceMemory(DeviceMemory&& other) noexcept;
    DeviceMemory& operator=(DeviceMemory&& other) noexcept;
    DeviceMemory(const DeviceMemory&) = delete;
    DeviceMemory& operator=(const DeviceMemory&) = delete;

    const Memory& memory() const { return memory_; }
    uint64_t gpu(uint64_t offset = 0) const { return memory_.gpuVa + offset; }
    template <class T> T* cpu(uint64_t offset = 0) const { return memory_.as<T>(offset); }
    uint64_t size() const { return memory_.size; }
    explicit operator bool() const { return memory_.size != 0; }

private:
    void release();
    Device* device_ = nullptr;
    Memory memory_;
};

// Activation formats quantized weights multiply against (graph/lower.h; kernels/cl/quantize.cl
// writes F16, BF16, Q8_0, Q8_1 and Q8_K).
using graph::ActFormat;
using graph::kActFormats;
// The format for a weight type, or throws TierError naming the weight for types without a
// matvec kernel.
ActFormat actFormatFor(const model::WeightRef& w);
// Bytes of one activation row of k values in a format.
uint64_t actRowBytes(ActFormat format, int64_t k);

// The token-state block (kernels::TokenStateLayout at offset 0), the token ids embed reads and,
// for a step over rows of several sequences (continuous batching), the rows block the host
// writes with them: per row {position, first KV row of its slot} (the kernels' `rows`), then the
// wanted rows in order (gather_rows' list): 3 x maxBatch ints at most.
struct TokenStateBlock {
    static constexpr uint64_t kStateOffset = 0;    // position, nTokens, kvLength
    static constexpr uint64_t kTokensOffset = 64;  // int32 tokens[maxBatch]; argmax writes tokens[0]
    static constexpr uint64_t rowsOffset(int32_t maxBatch) { return (kTokensOffset + 4 * uint64_t(maxBatch) + 63) / 64 * 64; }
    static constexpr uint64_t bytes(int32_t maxBatch) { return rowsOffset(maxBatch) + 12 * uint64_t(maxBatch); }
};

class TierMemory {
public:
    // Checks first that weights, KV cache and activations fit the device's VRAM (or
    // `limitBytes` when smaller and not 0): a TierError says how much is needed and available.
    // `sequences`: KV slots (continuous batching), each a copy of the KV layout and of a
    // hybrid's recurrent state.
    TierMemory(Device& device, const graph::Graph& graph, int32_t contextLength, int32_t maxBatch, uint64_t limitBytes = 0,
               int32_t sequences = 1);

    uint64_t weight(const model::WeightRef& w) const;  // device address of its first byte
    uint64_t weightBytes() const { return weights_.size(); }
    // "" when uploads were plain stores; else how they were staged (for the tier's line).
    const std::string& stagingNote() const { return stagingNote_; }

    // Buffer `id` of token `token` in the arena.
    uint64_t at(graph::BufferId id, int32_t token) const;
    const graph::MemoryPlan& plan() const { return plan_; }
    uint64_t arenaGpu() const { return arena_.gpu(); }
    // Hybrid models' recurrent state (the graph's persistent buffers: conv windows, DeltaNet
    // state matrices), a contiguous range of the arena a sequence slot (slot 0's is evaluate()'s),
    // updated in place by the kernels.
    uint64_t recurrentState(int32_t slot) const { return arena_.gpu(plan_.stateBegin + uint64_t(slot) * plan_.stateStride); }
    uint64_t recurrentStateBytes() const { return plan_.stateStride; }  // one slot's
    const uint8_t* arenaCpu() const { return arena_.cpu<uint8_t>(); }

    // Layer `layer`'s first K / V row in slot 0; its rows: kvLayout().layer(layer).slots. Slot s
    // holds the same layout kvLayout().rows x s rows further on (slotFirstRow).
    uint64_t kCache(int32_t layer) const { return kv_.gpu(uint64_t(kvLayout_.layer(layer).firstRow) * kvRowBytes_); }
    uint64_t vCache(int32_t layer) const { return kv_.gpu(kvBytes_ + uint64_t(kvLayout_.layer(layer).firstRow) * kvRowBytes_); }
    const graph::KvLayout& kvLayout() const { return kvLayout_; }
    uint64_t kvCacheBytes() const { return 2 * kvBytes_; }
    int32_t sequences() const { return sequences_; }
    int32_t slotFirstRow(int32_t slot) const { return slot * kvLayout_.rows; }

    uint64_t state() const { return state_.gpu(TokenStateBlock::kStateOffset); }
    uint64_t tokens() const { return state_.gpu(TokenStateBlock::kTokensOffset); }
    uint64_t rows() const { return state_.gpu(TokenStateBlock::rowsOffset(maxBatch_)); }

    uint64_t actSlot(ActFormat f) const { return actSlots_[size_t(f)].gpu(); }
    uint64_t routerLogits() const { return routerLogits_.gpu(); }
    uint64_t gateSlots() const { return gateSlots_.gpu(); }
    uint64_t upSlots() const { return upSlots_.gpu(); }
    uint64_t downSlots() const { return downSlots_.gpu(); }
    // The experts' rows quantized for their down projections (a row a token and expert slot),
    // apart from the activation slots, so the FFN input's quantized copy outlives the MoE op
    // (qwen35moe's shared expert reads it after).
    uint64_t expertRowsAct() const { return expertRowsAct_.gpu(); }
    // Decode attention's split count for a layer of `slots` rows, at most attentionSplits()
    // (the partials buffer holds attentionPartialRows() rows' worth: one token's, or one row of
    // each sequence slot), and where the partial results go.
    int32_t attentionSplits() const { return attentionSplits_; }
    int32_t attentionPartialRows() const { return attentionPartialRows_; }
    uint64_t attentionPartials() const { return attentionPartials_ ? attentionPartials_.gpu() : 0; }

private:
    void uploadWeights(Device& device, const graph::Graph& graph, bool staged);

    const graph::Graph* graph_;
    graph::MemoryPlan plan_;
    DeviceMemory weights_, arena_, kv_, state_;
    std::array<DeviceMemory, kActFormats> actSlots_;
    DeviceMemory routerLogits_, gateSlots_, upSlots_, downSlots_, expertRowsAct_, attentionPartials_;
    int32_t attentionSplits_ = 1;
    int32_t attentionPartialRows_ = 1;
    std::map<const model::WeightRef*, uint64_t> weightAt_;
    graph::KvLayout kvLayout_;
    uint64_t kvRowBytes_ = 0, kvBytes_ = 0;  // kvBytes_: the K (or V) cache of every slot
    int32_t sequences_ = 1, maxBatch_ = 1;
    std::string stagingNote_;
};

}  // namespace zinc::kfd
