#pragma once
// Walks the decode graph once and records every op into a plan's command buffer, fusing
// where the result is the same: a projection followed by the residual add accumulates into
// the residual; SwiGLU feeds the down projection's activation quantizer directly.
#include <cstdint>
#include <functional>
#include <vector>

#include "graph/graph.h"
#include "vulkan/ops.h"
#include "vulkan/plan_context.h"

namespace zinc::vk {

class GraphRecorder {
public:
    GraphRecorder(PipelineFactory& pipelines, const graph::Graph& graph, bool integerDotProduct);
    // Called after graph ops [first, last] were recorded (more than one when fused), with the
    // dispatches they added (0: their work was deferred into a later op's dispatch).
    // Instrumented plans (plan_instrument.h) put timestamps and copies there.
    using OpHook = std::function<void(const PlanContext& ctx, size_t first, size_t last, uint32_t dispatches)>;
    // Records the graph for a batch of nTokens; the ops after the layer stack run on the last
    // token only unless allRows. Returns the row of the first logits row recorded.
    int32_t record(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights, int32_t nTokens, bool allRows,
                   const OpHook& afterOps = {});
    // Greedy sampling after the graph (argmax of the last logits row).
    void recordArgmax(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights, VkDeviceAddress logits,
                      bool advance);
    // Seeded sampling after the graph (sample.comp), advancing the token state.
    void recordSample(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights, VkDeviceAddress logits);

private:
    void recordOp(PlanContext& ctx, size_t& i);
    // QK-norm and RoPE ops seen since the last attention: recorded with it, fused.
    std::vector<const graph::Op*> pendingHeadOps_;
    const graph::Graph& graph_;
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
};

}  // namespace zinc::vk
