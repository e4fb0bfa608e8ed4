#pragma once
// Records the lowered decode graph (graph/lower.h) into a plan's command buffer: a switch from
// each lowered op to its dispatch(es). The tier accepts every fused op of graph::fuse (gate and
// up only when MatVecOp::pairable), so a projection followed by the residual add accumulates
// into the residual, SwiGLU feeds the down projection's quantizer directly, and so on.
#include <cstdint>
#include <functional>
#include <vector>

#include "graph/graph.h"
#include "graph/lower.h"
#include "vulkan/ops.h"
#include "vulkan/plan_context.h"

namespace zinc::vk {

class GraphRecorder {
public:
    GraphRecorder(PipelineFactory& pipelines, const graph::Graph& graph, bool integerDotProduct);
    // Called after each lowered op that carries out graph ops (op.first .. op.last(); more than
    // one when fused), with the dispatches added since the previous call (its Quantize steps
    // included). Instrumented plans (plan_instrument.h) put timestamps and copies there.
    using OpHook = std::function<void(const PlanContext& ctx, const graph::LoweredOp& op, uint32_t dispatches)>;
    // Records the graph for a batch of nTokens; the ops after the layer stack run on the last
    // token only unless allRows. Returns the row of the first logits row recorded.
    int32_t record(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights, int32_t nTokens, bool allRows,
                   const OpHook& afterOps = {});
    // Records a step over nRows rows of several sequences (continuous batching: each row's
    // position and KV slot from the token state's per-row arrays): the layer stack on every
    // row, then the `wanted` rows the token state lists gathered to rows 0..wanted-1 and the
    // ops after the layer stack on those (none when wanted is 0: the step ends there).
    // ownSlots: every row is in a slot of its own (PlanContext::rowsOwnSlots).
    void recordRows(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights, int32_t nRows, int32_t wanted,
                    bool ownSlots);
    // Greedy sampling after the graph (argmax of the last logits row).
    void recordArgmax(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights, VkDeviceAddress logits,
                      bool advance);
    // Greedy sampling after a step of rows (recordRows): each of the `rows` logits rows from
    // `logits` to its id ring entry.
    void recordArgmaxRows(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights, VkDeviceAddress logits,
                          int32_t rows);
    // Seeded sampling after the graph (sample.comp), advancing the token state.
    void recordSample(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights, VkDeviceAddress logits);
    // Seeded sampling after a step of rows (recordRows): each of the `rows` logits rows from
    // `logits` by its own sampler block to its id ring entry.
    void recordSampleRows(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights, VkDeviceAddress logits,
                          int32_t rows);
    // The most splits a head of the plan record() made last takes (PlanContext::attnSplitPolicy;
    // 0: no split attention).
    uint32_t attentionSplits() const { return attentionSplits_; }

private:
    void recordOp(PlanContext& ctx, const graph::LoweredOp& l);
    // The op recorded last in a chain of ops and its dispatches (independent()'s prev).
    struct Chain {
        const graph::LoweredOp* prev = nullptr;
        uint32_t dispatches = 0;
    };
    // l after the chain's last op, with no barrier between them where `overlap` and
    // independent() allow; l becomes the chain's last op.
    void recordInChain(PlanContext& ctx, Chain& chain, const graph::LoweredOp& l, bool overlap);
    std::optional<graph::ActFormat> quantizedNext(const graph::LoweredOp& l) const;
    bool raisesSite(const std::vector<graph::LoweredOp>& ops, size_t i) const;
    bool chainable(const graph::LoweredOp& l, uint64_t maxBytes) const;
    VkDeviceAddress chainedSite(const PlanContext& ctx, const graph::LoweredOp& l, bool overlapPrev) const;
    static bool independent(const PlanContext& ctx, const graph::LoweredOp* prev, uint32_t prevDispatches,
                            const graph::LoweredOp& next);
    // A decode step's MoE FFN with a shared expert: the routed and the shared chain recorded as
    // two lanes (Recorder::beginLane). ZINC_VK_MOE_LANES=0: one after the other (A/B, tests).
    static bool lanesEnabled();
    size_t sharedExpertLaneEnd(const PlanContext& ctx, const std::vector<graph::LoweredOp>& ops, size_t at) const;
    void recordSharedExpertLanes(PlanContext& ctx, const std::vector<graph::LoweredOp>& ops, size_t at, size_t end);
    // The graph lowered three times, differing only in where gate and up are one SwiGLU pair
    // matvec (loweredFor says which a step of `tokens` rows records).
    const graph::Lowered& loweredFor(int32_t tokens, bool sequenceRows) const;
    template <typename RowsOp>
    void recordRowsPick(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights, VkDeviceAddress logits, int32_t rows,
                        const char* label, const RowsOp& op) const;
    const graph::Graph& graph_;
    graph::Lowered lowered_;        // paired wherever MatVecOp::pairable
    graph::Lowered decodeLowered_;  // paired below 8,192 rows (ZINC_VK_PAIR_BELOW_ROWS)
    graph::Lowered tileLowered_;    // never paired
    std::vector<graph::BufferId> crossingLayerEnd_;  // graph::buffersCrossingLayerEnd
    uint32_t attentionSplits_ = 0;
    EmbedOp embed_;
    NormOp norm_;
    RopeOp rope_;
    AttentionOp attention_;
    ElementwiseOp elementwise_;
    MatVecOp matVec_;
    MoeOp moe_;
    ArgmaxOp argmax_;
    SampleOp sample_;
    HybridOp hybrid_;
    GatherRowsOp gather_;
};

}  // namespace zinc::vk
