#include "vulkan/tier_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <set>

#include "model/rope_scaling.h"
#include "vulkan/op_matmul_f16.h"
#include "vulkan/ops.h"
#include "vulkan/sampler_state.h"
#include "vulkan/token_state.h"

namespace zinc::vulkan {

using namespace zinc::vk;

TierMemory::TierMemory(const Device& device, Queue& queue, const graph::Graph& graph, const graph::MemoryPlan& plan,
                       const graph::KvLayout& kv, int32_t contextLength, int32_t maxBatch, int32_t sequences,
                       int32_t deltaChunk,
                       std::chrono::milliseconds timeout)
    : device_(device),
      graph_(graph),
      plan_(plan),
      kv_(kv),
      contextLength_(contextLength),
      maxBatch_(maxBatch),
      sequences_(std::max(1, sequences)),
      deltaChunk_(deltaChunk) {
    allocate();
    uploadRopeTable(queue, timeout);
}

void TierMemory::allocate() {
    const auto& c = *graph_.config;
    arena_ = DeviceBuffer(device_, plan_.arenaBytes, MemoryKind::DeviceLocal, "activation arena");
    // F16 rows laid out by graph::KvLayout (a ring on sliding-window layers), once per sequence
    // slot. The shaders index the halves of one cache with 32-bit words.
    const uint64_t halves = static_cast<uint64_t>(sequences_) * static_cast<uint64_t>(std::max<int64_t>(kv_.rows, 1)) *
                            static_cast<uint64_t>(c.kvDim());
    if (halves / 2 > UINT32_MAX)
        throw runtime::TierError(fmt::format("vulkan tier: a KV cache of {} sequence slots x {} rows x {} halves is past the "
                                             "shaders' 32-bit indexing; lower --ctx or --parallel", sequences_, kv_.rows, c.kvDim()));
    const uint64_t cacheBytes = uint64_t{2} * halves;
    kCache_ = DeviceBuffer(device_, cacheBytes, MemoryKind::DeviceLocal, "K cache");
    vCache_ = DeviceBuffer(device_, cacheBytes, MemoryKind::DeviceLocal, "V cache");
    const size_t ropeBytes = sizeof(float) * static_cast<size_t>(contextLength_) * static_cast<size_t>(c.ropeDim);
    ropeTable_ = DeviceBuffer(device_, ropeBytes, MemoryKind::DeviceLocal, "rope table");
    if (c.slidingWindow > 0) ropeTableSwa_ = DeviceBuffer(device_, ropeBytes, MemoryKind::DeviceLocal, "sliding layers' rope table");
    stateDevice_ = DeviceBuffer(device_, tokenStateBytes(maxBatch_), MemoryKind::DeviceLocal, "token state");
    stateHost_ = DeviceBuffer(device_, tokenStateBytes(maxBatch_), MemoryKind::HostVisible, "token state upload");
    // A block a sequence slot: a step of several sequences wants at most a row of each.
    samplerBlocks_ = std::max(1, std::min(sequences_, maxBatch_));
    const size_t samplerBytes = kSamplerStateBytes * static_cast<size_t>(samplerBlocks_);
    samplerDevice_ = DeviceBuffer(device_, samplerBytes, MemoryKind::DeviceLocal, "sampler state");
    samplerHost_ = DeviceBuffer(device_, samplerBytes, MemoryKind::HostVisible, "sampler state upload");
    std::memset(samplerHost_.mapped(), 0, samplerBytes);
    for (int32_t i = 0; i < samplerBlocks_; ++i)
        *reinterpret_cast<SamplerStateHeader*>(static_cast<char*>(samplerHost_.mapped()) + kSamplerStateBytes * static_cast<size_t>(i)) =
            SamplerStateHeader{};
    sampleScratch_ = DeviceBuffer(device_, sampleScratchBytes(c.nVocab, samplerBlocks_), MemoryKind::DeviceLocal, "sampler candidates");
    ring_ = DeviceBuffer(device_, sizeof(int32_t) * kRingCapacity, MemoryKind::HostVisible, "token id ring");
    logitsHost_ = DeviceBuffer(device_, sizeof(float) * static_cast<size_t>(c.nVocab), MemoryKind::HostVisible, "logits");
    logitsHostRows_ = 1;
    // Quantized activations: one slot per format in use, sized for the widest input.
    const int64_t maxK = std::max({int64_t{c.nEmbd}, int64_t{c.qDim()}, int64_t{c.nFf}, int64_t{c.nFfExpert},
                                   int64_t{c.hybrid.valueDim()}, int64_t{c.hybrid.sharedFf}});
    const size_t slotRows = static_cast<size_t>(maxBatch_) * static_cast<size_t>(std::max(1, c.nExpertUsed));
    std::set<ActFormat> modes;
    for (const auto& op : graph_.ops)
        for (const model::WeightRef* w : op.weights())
            if (w && w != op.bias && (op.kind == graph::OpKind::MatMul || op.kind == graph::OpKind::MoeRoute || op.kind == graph::OpKind::MoeFfn))
                modes.insert(MatVecOp::formatFor(w->type));
    for (ActFormat m : modes) {
        auto& slot = actSlots_[static_cast<size_t>(m)];
        slot = DeviceBuffer(device_, sizeof(float) * static_cast<size_t>(maxK) * slotRows, MemoryKind::DeviceLocal,
                            "quantized activations");
        layout_.actSlots[static_cast<size_t>(m)] = slot.address();
        if (c.hybrid.sharedFf > 0) {
            auto& lane = laneSlots_[static_cast<size_t>(m)];
            lane = DeviceBuffer(device_, sizeof(float) * static_cast<size_t>(maxK), MemoryKind::DeviceLocal,
                                "the shared expert's quantized activations");
            layout_.laneSlots[static_cast<size_t>(m)] = lane.address();
        }
    }
    if (c.isMoe()) {
        const size_t batch = static_cast<size_t>(maxBatch_), used = static_cast<size_t>(c.nExpertUsed);
        routerLogits_ = DeviceBuffer(device_, 4 * batch * static_cast<size_t>(c.nExpert), MemoryKind::DeviceLocal, "router logits");
        gateSlots_ = DeviceBuffer(device_, 4 * batch * used * static_cast<size_t>(c.nFfExpert), MemoryKind::DeviceLocal, "expert gate");
        upSlots_ = DeviceBuffer(device_, 4 * batch * used * static_cast<size_t>(c.nFfExpert), MemoryKind::DeviceLocal, "expert up");
        downSlots_ = DeviceBuffer(device_, 4 * batch * used * static_cast<size_t>(c.nEmbd), MemoryKind::DeviceLocal, "expert down");
        layout_.routerLogits = routerLogits_.address();
        routerDone_ = DeviceBuffer(device_, 4 * batch, MemoryKind::DeviceLocal, "router rows done");
        layout_.routerDone = routerDone_.address();
        layout_.gateSlots = gateSlots_.address();
        layout_.upSlots = upSlots_.address();
        layout_.downSlots = downSlots_.address();
        expertActs_ = DeviceBuffer(device_, 4 * batch * used * static_cast<size_t>(c.nFfExpert), MemoryKind::DeviceLocal,
                                   "expert rows quantized");
        layout_.expertActs = expertActs_.address();
        const auto pairs = static_cast<uint32_t>(batch * used);
        layout_.moeOrderAt = 1 + 3 * MoeOp::maxTiles(pairs, static_cast<uint32_t>(c.nExpert));
        moeGroups_ = DeviceBuffer(device_, sizeof(int32_t) * (layout_.moeOrderAt + pairs), MemoryKind::DeviceLocal,
                                  "MoE expert groups");
        layout_.moeGroups = moeGroups_.address();
    }
    // Chained matvecs' sites (GraphRecorder; the chain modules need the Vulkan memory model): a
    // decode token quantizes a few inputs a layer.
    if (device_.caps().vulkanMemoryModel) {
        layout_.chainSites = 8 * static_cast<uint32_t>(c.nLayer) + 16;
        chainSites_ = DeviceBuffer(device_, uint64_t{kChainSiteBytes} * layout_.chainSites, MemoryKind::DeviceLocal,
                                   "chained matvec sites");
        layout_.chainBuffer = chainSites_.handle();
        layout_.chainAddress = chainSites_.address();
    }
    // The chunked delta rule's scratch (hybrid prefill), when the device has the shared memory
    // delta_chunk_prep.comp takes; without it a batch runs the recurrence.
    const uint32_t chunk = std::min(static_cast<uint32_t>(std::max(deltaChunk_, 0)), HybridOp::kMaxDeltaChunk);
    if (c.hybrid.enabled() && chunk > 0 && maxBatch_ > 1 && device_.caps().sharedMemoryBytes >= HybridOp::kDeltaChunkSharedBytes) {
        const uint64_t chunks = (static_cast<uint64_t>(maxBatch_) + chunk - 1) / chunk;
        deltaChunks_ = DeviceBuffer(device_, sizeof(float) * static_cast<uint64_t>(c.hybrid.valueHeads) * chunks *
                                                 HybridOp::deltaChunkSlotFloats(static_cast<uint32_t>(c.hybrid.headDim), chunk),
                                    MemoryKind::DeviceLocal, "delta rule chunks");
        layout_.deltaChunks = deltaChunks_.address();
        layout_.deltaChunk = chunk;
    }
    // The two-pass matrix-core matmul's f16 weights, for the largest matmul of a prefill (capped:
    // larger ones run in chunks of rows). Not counted in the weight store's memory check: where
    // it cannot be allocated the tiled matmuls run matmul.comp, and describe() says so.
    const auto& caps = device_.caps();
    if (caps.coopmatDequant && (caps.cooperativeMatrix || caps.cooperativeMatrixEmulated) &&
        maxBatch_ >= static_cast<int32_t>(MatVecOp::kTiledMinTokens)) {
        const uint64_t bytes = F16MatMul::scratchBytesFor(graph_);
        try {
            if (bytes > caps.maxAllocationBytes)
                throw runtime::TierError(fmt::format("past the device's allocation limit of {} bytes", caps.maxAllocationBytes));
            if (bytes > 0) f16Weights_ = DeviceBuffer(device_, bytes, MemoryKind::DeviceLocal, "f16 weight scratch");
            layout_.f16Weights = f16Weights_.address();
            layout_.f16WeightBytes = f16Weights_.bytes();
        } catch (const runtime::TierError& e) {
            f16WeightsMissing_ = fmt::format("the f16 weight scratch of {:.1f} MiB could not be allocated ({})",
                                             static_cast<double>(bytes) / (1 << 20), e.what());
        }
    }
    // ZINC_VK_ATTN_SPLITS (A/B runs) replaces kMaxAttentionSplits, up to the 128 partials
    // attention.comp merges (its kMaxSplits), and holds a one-token step to it too
    // (AttentionOp::splitPolicy).
    const char* splitsEnv = std::getenv("ZINC_VK_ATTN_SPLITS");
    const uint32_t maxSplits = splitsEnv && *splitsEnv ? std::clamp<uint32_t>(std::strtoul(splitsEnv, nullptr, 10), 1, 128) : kMaxAttentionSplits;
    layout_.attnSplits = std::min(static_cast<uint32_t>((contextLength_ + 63) / 64),  // attention_split.comp's chunk
                                  maxSplits);
    layout_.attnBatchSplits = std::min(layout_.attnSplits, kMaxBatchAttentionSplits);
    layout_.attnStepSplits = std::max(layout_.attnSplits, std::min(static_cast<uint32_t>((contextLength_ + 63) / 64), kMaxResidentSplits));
    const char* exactEnv = std::getenv("ZINC_VK_ATTN_EXACT");
    layout_.attnExactMax = exactEnv && *exactEnv ? static_cast<uint32_t>(std::strtoul(exactEnv, nullptr, 10)) : kExactAttentionMax;
    if (static_cast<uint32_t>(contextLength_) > layout_.attnExactMax) {
        // 16 bytes of dispatch counts (attention_args.comp), the split site at kSplitSiteOffset
        // (chained split attention, plan_context.h), then the partials: one token's attnStepSplits
        // per head, or a whole batch's attnBatchSplits (rows of several sequences, attnSplits
        // each, up to as many).
        const size_t perHead = std::max<size_t>(layout_.attnStepSplits, static_cast<size_t>(maxBatch_) * layout_.attnBatchSplits);
        layout_.attnPartialSlots = perHead;
        const uint32_t head = kSplitSiteOffset + kChainSiteBytes;
        static_assert(kSplitSiteOffset + kChainSiteBytes == 128 + 128 * 65, "split_policy.glsl kPolicyArgsBack");
        attnPartials_ = DeviceBuffer(device_, head + sizeof(float) * static_cast<size_t>(c.nHead) * perHead *
                                                         static_cast<size_t>(c.headDim + 2),
                                     MemoryKind::DeviceLocal, "attention partials");
        layout_.attnArgs = attnPartials_.handle();
        layout_.attnArgsAddress = attnPartials_.address();
        layout_.attnPartials = attnPartials_.address() + head;
    }
    layout_.arena = arena_.address();
    layout_.plan = &plan_;
    layout_.kCache = kCache_.address();
    layout_.vCache = vCache_.address();
    layout_.kv = &kv_;
    layout_.ropeTable = ropeTable_.address();
    layout_.ropeTableSwa = c.slidingWindow > 0 ? ropeTableSwa_.address() : ropeTable_.address();
    layout_.state = stateDevice_.address();
    layout_.sampler = samplerDevice_.address();
    layout_.samplerBlocks = static_cast<uint32_t>(samplerBlocks_);
    layout_.sampleScratch = sampleScratch_.address();
    layout_.ring = ring_.address();
    layout_.ringCapacity = kRingCapacity;
}

// ggml's rope angles, as the cpu tier computes them (model/rope_scaling.h: rope_freqs,
// linear / yarn scaling), cos and sin in float on the host (GPU sin/cos of large angles are too
// coarse for the goldens).
void TierMemory::uploadRopeTable(Queue& queue, std::chrono::milliseconds timeout) {
    const auto& c = *graph_.config;
    const auto* factors = reinterpret_cast<const float*>(graph_.weights->ropeFreqs.data);
    uploadRopeTable(queue, timeout, ropeTable_, c.rope(), factors);
    // Sliding-window layers turn by their own unscaled base, without rope_freqs (as the cpu tier).
    if (c.slidingWindow > 0) uploadRopeTable(queue, timeout, ropeTableSwa_, c.ropeSwa(), nullptr);
}

void TierMemory::uploadRopeTable(Queue& queue, std::chrono::milliseconds timeout, const DeviceBuffer& target,
                                 const model::RopeParams& p, const float* factors) {
    const size_t half = static_cast<size_t>(graph_.config->ropeDim / 2);
    DeviceBuffer staging(device_, target.bytes(), MemoryKind::HostVisible, "rope table upload");
    auto* table = static_cast<float*>(staging.mapped());
    std::vector<float> cs(half), sn(half);
    for (int32_t pos = 0; pos < contextLength_; ++pos) {
        model::ropeCosSin(p, factors, pos, cs.data(), sn.data());
        for (size_t i = 0; i < half; ++i) {
            table[2 * (static_cast<size_t>(pos) * half + i)] = cs[i];
            table[2 * (static_cast<size_t>(pos) * half + i) + 1] = sn[i];
        }
    }
    queue.runOnce([&](VkCommandBuffer cmd) {
        const VkBufferCopy region{0, 0, target.bytes()};
        vkCmdCopyBuffer(cmd, staging.handle(), target.handle(), 1, &region);
    }, timeout, "rope table upload");
}

void TierMemory::writeState(int32_t startPos, std::span<const int32_t> tokens) {
    auto* header = static_cast<TokenStateHeader*>(stateHost_.mapped());
    *header = TokenStateHeader{};
    header->position = startPos;
    header->nTokens = static_cast<int32_t>(tokens.size());
    header->kvLength = startPos + static_cast<int32_t>(tokens.size());
    std::memcpy(reinterpret_cast<int32_t*>(header + 1), tokens.data(), tokens.size_bytes());
}

void TierMemory::writeRows(std::span<const runtime::SequenceRow> rows) {
    auto* header = static_cast<TokenStateHeader*>(stateHost_.mapped());
    *header = TokenStateHeader{};
    header->position = rows.front().position;
    header->nTokens = static_cast<int32_t>(rows.size());
    header->kvLength = rows.front().position + 1;
    header->rowsAt = tokenStateRowsAt(maxBatch_);
    header->rowsStride = maxBatch_;
    auto* ints = reinterpret_cast<int32_t*>(header);
    int32_t* positions = ints + header->rowsAt;
    int32_t* slotBases = positions + maxBatch_;
    int32_t* wanted = slotBases + maxBatch_;
    int32_t k = 0;
    for (size_t t = 0; t < rows.size(); ++t) {
        ints[8 + t] = rows[t].token;
        positions[t] = rows[t].position;
        slotBases[t] = static_cast<int32_t>(static_cast<int64_t>(rows[t].slot) * kv_.rows);
        if (rows[t].wantLogits) wanted[k++] = static_cast<int32_t>(t);
    }
}

void TierMemory::writeSamplerState(const runtime::SamplerParams& p, uint64_t drawBase, std::span<const int32_t> history) {
    writeSamplerBlock(samplerHost_.mapped(), p, drawBase, history);
}

void TierMemory::writeSamplerRows(std::span<const runtime::RowSampler> samplers) {
    if (samplers.size() > static_cast<size_t>(samplerBlocks_))
        throw runtime::TierError(fmt::format("vulkan tier: {} rows to sample, {} sampler blocks", samplers.size(), samplerBlocks_));
    for (size_t i = 0; i < samplers.size(); ++i) {
        const runtime::Sampler& s = *samplers[i].sampler;
        writeSamplerBlock(static_cast<char*>(samplerHost_.mapped()) + kSamplerStateBytes * i, s.params(), s.draws(),
                          samplers[i].history);
    }
}

void TierMemory::recordStateUpload(Recorder& rec, bool clearRecurrent) const {
    rec.copy(stateHost_.handle(), 0, stateDevice_.handle(), 0, stateHost_.bytes());
    rec.copy(samplerHost_.handle(), 0, samplerDevice_.handle(), 0, samplerHost_.bytes());
    vkCmdFillBuffer(rec.cmd(), sampleScratch_.handle(), 0, kSampleCountersBytes * static_cast<size_t>(samplerBlocks_),
                    0);  // sample.comp's slices finished, a counter a row
    if (routerDone_.handle() != VK_NULL_HANDLE)  // moe_topk.comp's counts start at 0 (its last workgroup resets them)
        vkCmdFillBuffer(rec.cmd(), routerDone_.handle(), 0, routerDone_.bytes(), 0);
    if (clearRecurrent && hasRecurrentState())  // evaluate()'s sequence: slot 0's copy
        vkCmdFillBuffer(rec.cmd(), arena_.handle(), plan_.stateBegin, plan_.stateStride, 0);
    rec.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
}

bool TierMemory::ensureLogitsRows(int32_t rows) {
    if (rows <= logitsHostRows_) return false;
    logitsHost_ = DeviceBuffer(device_, sizeof(float) * static_cast<size_t>(graph_.config->nVocab) * static_cast<size_t>(maxBatch_),
                               MemoryKind::HostVisible, "logits");
    logitsHostRows_ = maxBatch_;
    return true;
}

}  // namespace zinc::vulkan
