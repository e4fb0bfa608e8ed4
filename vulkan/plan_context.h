#pragma once
// What an op sees while it records itself into a plan: the graph, where every buffer lives
// on the device, the batch size the plan is recorded for, and the quantized activations
// already in the scratch slots.
#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>

#include "graph/graph.h"
#include "graph/kv_layout.h"
#include "graph/lower.h"
#include "vulkan/recorder.h"
#include "vulkan/weight_store.h"

namespace zinc::vk {

// Activation formats (graph/lower.h): their values are quantize.comp's mode numbers.
using graph::ActFormat;

// Device addresses of everything the plans use (owned by the tier).
struct DeviceLayout {
    VkDeviceAddress arena = 0;
    const graph::MemoryPlan* plan = nullptr;
    VkDeviceAddress kCache = 0, vCache = 0;  // every layer's F16 rows, laid out by `kv`
    const graph::KvLayout* kv = nullptr;
    VkDeviceAddress ropeTable = 0;
    VkDeviceAddress ropeTableSwa = 0;  // sliding-window layers' (ropeTable when the model has none)
    VkDeviceAddress state = 0;
    VkDeviceAddress sampler = 0;  // vulkan/sampler_state.h: samplerBlocks blocks of kSamplerStateBytes
    uint32_t samplerBlocks = 1;   // chains one dispatch samples (a step's wanted rows)
    VkDeviceAddress sampleScratch = 0;  // sample.comp's slices' candidates (sampleScratchBytes of samplerBlocks)
    VkDeviceAddress ring = 0;
    uint32_t ringCapacity = 0;
    std::array<VkDeviceAddress, graph::kActFormats> actSlots{};  // quantized activations, one per mode
    // The same for one row, apart: the shared expert's own while it runs beside the routed
    // experts in a decode step (GraphRecorder's lanes); 0 where the model has no shared expert.
    std::array<VkDeviceAddress, graph::kActFormats> laneSlots{};
    VkDeviceAddress routerLogits = 0, gateSlots = 0, upSlots = 0, downSlots = 0;  // MoE
    VkDeviceAddress expertActs = 0;  // the expert rows quantized for the down experts (the FFN input's copy stays)
    VkDeviceAddress routerDone = 0;  // moe_topk.comp's rows finished per token (zeroed with each state upload)
    VkDeviceAddress moeGroups = 0;  // prefill: moe_group.comp's tiles, then the pair order at int moeOrderAt
    uint32_t moeOrderAt = 0;
    VkDeviceAddress attnPartials = 0;  // split attention: [token][head][split][headDim + 2]
    uint32_t attnSplits = 0;           // partials per head: chunks of 64 positions, at most kMaxAttentionSplits
    uint32_t attnStepSplits = 0;       // a one-token step's, at most: up to kMaxResidentSplits (AttentionOp::splitPolicy)
    uint32_t attnExactMax = 0;         // the longest KV attention.comp computes exactly (kExactAttentionMax)
    uint32_t attnBatchSplits = 0;      // the same in a prefill batch, at most kMaxBatchAttentionSplits
    uint64_t attnPartialSlots = 0;     // (token, split) partials per head that fit: a step of more is not split
    VkBuffer attnArgs = VK_NULL_HANDLE;  // the split's VkDispatchIndirectCommand (attention_args.comp)
    VkDeviceAddress attnArgsAddress = 0;
    // Hybrid prefill: the chunked delta rule's scratch (HybridOp::deltaChunkSlotFloats per value
    // head and chunk of deltaChunk tokens); 0 runs the recurrence (delta_net.comp).
    VkDeviceAddress deltaChunks = 0;
    uint32_t deltaChunk = 0;
    // Prefill on matrix cores in two passes (DeviceCaps::coopmatDequant): the f16 rows
    // dequant_f16.comp writes for matmul_f16.comp (F16MatMul::scratchBytesFor); 0: the tiled
    // matmuls run matmul.comp.
    VkDeviceAddress f16Weights = 0;
    uint64_t f16WeightBytes = 0;
    // Chained matvecs (GraphRecorder, one-token plans): chainSites sites of kChainSiteBytes,
    // zeroed at the start of each plan that uses them, one a quantize a matvec waits on.
    VkBuffer chainBuffer = VK_NULL_HANDLE;
    VkDeviceAddress chainAddress = 0;
    uint32_t chainSites = 0;
};

// A chained matvec (GraphRecorder::chainedSite) runs with no barrier after the quantize that
// writes its input: each workgroup of the quantize, its writes done, counts itself with release
// semantics on every line of a site (quantize_signal); each workgroup of the matvec issues its
// first weight loads, then polls one line until every workgroup counted and acquires
// (matvec_rows_chain). The lines are 128 bytes apart, so that many workgroups' polls spread
// over them. Both modules run on the Vulkan memory model (DeviceCaps::vulkanMemoryModel).
inline constexpr uint32_t kChainLines = 64;
inline constexpr uint32_t kChainSiteBytes = 128 * (1 + kChainLines);
// A one-token step's split attention (attention_split_chain) and its merge (attention_chain) are
// chained the same way, on one site for the whole plan in the partials' buffer, right before
// the partials (chain.glsl splitSite): the merge of the i-th chained layer waits for a count of
// i times the layer's working split workgroups. The site starts at this offset, after the
// split's dispatch counts.
inline constexpr uint32_t kSplitSiteOffset = 128;

// Attention reading up to this many keys is computed exactly as the cpu tier does (attention.comp:
// F16 accumulator, position by position, so a short chat's logits are the oracle's); past it
// attention_split.comp splits the KV length in fp32. The exact path is a serial chain as long
// as the KV: with it up to 256 keys, 8B on the H200 decoded 256.3 tok/s after a 16-token prompt
// (slower than after 512: 259-263); up to 64, 266.9; split at every length, 267.6
// (results/vulkan-h100.md, tenth session). Once the split kernel took the step's RoPE and KV
// store (nineteenth session, run 113), a 16-token prompt's decode paid the exact chain again:
// 8B 295.7 tok/s after 16 against 300.4 after 512 (0.6B 717.0 against 743.4); up to 32 keys,
// 300.8 (743.4); split at every length, 302.0 (752.1). Up to 16 keys every golden still passes
// (prompts of up to 37 tokens, so their later positions split in fp32, within the goldens'
// tolerances; split from the first key, stories260K's and gemma3-tiny's do not). ZINC_VK_ATTN_EXACT=N (TierMemory reads it
// once) sets another bound for A/B; heads whose size is not a multiple of 8 always take the
// exact path.
inline constexpr uint32_t kExactAttentionMax = 16;
// Split attention's workgroups per head (at most attention.comp's kMaxSplits): past 32 x 64
// positions each workgroup walks several chunks. 32 measured best on the H100 (8B decode at
// depth 8192: 148.9 tok/s, against 148.1 with 64 and 143.3 with 128; results/vulkan-h100.md).
inline constexpr uint32_t kMaxAttentionSplits = 32;
// A one-token step's split count past kMaxAttentionSplits, where the GPU keeps that many
// workgroups resident (attention.comp's kMaxSplits).
inline constexpr uint32_t kMaxResidentSplits = 128;
// A prefill batch's split workgroups per (token, head): the batch's tokens fill the GPU already.
inline constexpr uint32_t kMaxBatchAttentionSplits = 8;

// Which quantized copy of which buffer a slot holds, so q/k/v (or gate/up) quantize their
// shared input once. An op that writes a buffer invalidates its copies.
struct ActivationCache {
    struct Entry {
        graph::BufferId buffer = graph::kNoBuffer;
        int32_t firstRow = 0, rows = 0;
    };
    std::array<Entry, graph::kActFormats> slots{};
    void invalidate(graph::BufferId written) {
        for (auto& e : slots)
            if (e.buffer == written) e = Entry{};
    }
    void invalidateAll() { slots.fill(Entry{}); }
};

struct PlanContext {
    Recorder& rec;
    const graph::Graph& graph;
    const DeviceLayout& mem;
    const WeightStore& weights;
    ActivationCache& acts;
    int32_t nTokens = 1;  // tokens the plan is recorded for
    int32_t firstRow = 0; // rows of the current op: [firstRow, firstRow + rows)
    int32_t rows = 1;
    bool attnArgsRecorded = false;  // attention_args.comp ran earlier in this plan
    uint32_t attnSplitPolicy = 0;   // the split policy every split layer of this plan uses (0: none yet)
    // Rows of several sequences (the token state's per-row arrays). Each row's arithmetic must
    // not depend on the rows beside it, so that a request's tokens do not depend on the load:
    // no split attention, and the token-tiled matvec (each weight unit read once per 8 rows,
    // per-row sums as the one-token matvec) instead of the tiled matmul, whose sums run in
    // another order.
    bool sequenceRows = false;
    // sequenceRows, every row in a KV slot of its own (a step of decode rows): no row reads a
    // key another row of the step stores, so the split attention may rotate and store each
    // row's own (AttentionOp::fusable), as a one-token step does.
    bool rowsOwnSlots = false;
    // Chained matvecs (DeviceLayout::chainSites): the last quantize that raised a site, and
    // which site the next matvec waits on (0: none, a barrier before it).
    struct Chain {
        uint32_t next = 0;            // sites used so far in this plan
        uint32_t capacity = 0;        // sites zeroed at its start
        VkDeviceAddress site = 0;     // the last producer's site
        uint32_t groups = 0;          // its workgroups
        uint32_t dispatchesAfter = 0; // Recorder::dispatches() after it
        uint32_t barriersAt = 0;      // Recorder::barriersEmitted() after it
        VkDeviceAddress out = 0;      // the activations it wrote
        const graph::Op* producer = nullptr;  // the graph op it belongs to (GraphRecorder)
        uint32_t splitsChained = 0;   // split attentions whose merge waits on the split site
    };
    Chain* chain = nullptr;
    bool signalNext = false;  // the op being recorded raises a site (a matvec after it may chain)
    VkDeviceAddress waitSite = 0;

    // The site the dispatch about to be recorded raises (its chain module signals there), where
    // the op raises one and one is left; 0: none (the plain module).
    VkDeviceAddress takeSite() {
        if (!chain || !signalNext || chain->next >= chain->capacity) return 0;
        return mem.chainAddress + uint64_t{kChainSiteBytes} * chain->next++;
    }
    // After that dispatch (`groups` workgroups, writing the activations at `out`).
    void raised(VkDeviceAddress site, uint32_t groups, VkDeviceAddress out) {
        chain->site = site;
        chain->groups = groups;
        chain->dispatchesAfter = rec.dispatches();
        chain->barriersAt = rec.barriersEmitted();
        chain->out = out;
        chain->producer = nullptr;
    }

    uint32_t width(graph::BufferId id) const { return static_cast<uint32_t>(graph.buffer(id).width); }
    VkDeviceAddress at(graph::BufferId id, int32_t token) const {
        return mem.arena + mem.plan->offsets[static_cast<size_t>(id)] +
               static_cast<uint64_t>(token) * width(id) * 4u;
    }
    VkDeviceAddress row0(graph::BufferId id) const { return at(id, firstRow); }
};

}  // namespace zinc::vk
