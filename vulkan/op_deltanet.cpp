// The qwen35 hybrid ops on the GPU (graph/hybrid_blocks.cpp has the math): causal conv1d over
// the persistent window (ssm_conv.comp), the delta-rule step on the persistent state
// (delta_net.comp; a batch in chunks: delta_chunk_prep.comp for every chunk at once, then
// delta_chunk_state.comp carrying the state across them, 16 state rows per workgroup), the gated per-head norm (gated_norm.comp), and the query / output-gate split
// and sigmoid gate (gate.comp). The recurrent state is updated in place in the arena; nothing
// is read back per token. In a plan over rows of several sequences the conv and the delta rule
// read each row's slot from the token state and step that slot's copy of the state
// (graph::MemoryPlan::stateCopies), cleared in the shader where a row is at position 0, token by
// token (never in chunks: a row's bits do not depend on the rows beside it); a step of decode
// rows, every one in a slot of its own, takes its rows side by side (workgroup z a row).
#include <fmt/format.h>

#include <algorithm>

#include "runtime/tier.h"
#include "vulkan/ops.h"

namespace zinc::vk {
namespace {

// Rows of several sequences: where each row's copy of the state is (ssm_conv.comp, delta_net.comp).
struct RowSlots {
    VkDeviceAddress tokenState = 0;
    uint32_t slotFloats = 0, kvRows = 1, rowOfGroup = 0;
};
struct ConvPc {
    VkDeviceAddress x, window, w, out, tokenState;
    uint32_t channels, taps, tokens, slotFloats, kvRows, rowOfGroup;
};
struct DeltaPc {
    VkDeviceAddress qkv, alpha, beta, out, state, a, dtBias;
    uint32_t d, keyHeads, valueHeads, tokens;
    float eps;
    VkDeviceAddress tokenState;
    uint32_t slotFloats, kvRows, rowOfGroup;
};

// One sequence: nothing (slot 0, cleared by the host's state upload). Rows of several: the token
// state, a slot's copy of the state in floats, the KV rows a slot, and whether the rows go side
// by side (every row in a slot of its own).
RowSlots rowSlots(const PlanContext& ctx) {
    if (!ctx.sequenceRows) return {};
    return {ctx.mem.state, static_cast<uint32_t>(ctx.mem.plan->stateStride / 4),
            static_cast<uint32_t>(std::max<int64_t>(1, ctx.mem.kv->rows)), ctx.rowsOwnSlots ? 1u : 0u};
}
struct ChunkPrepPc {
    VkDeviceAddress qkv, alpha, beta, a, dtBias, scratch;
    uint32_t d, keyHeads, valueHeads, tokens, chunk;
    float eps;
};
struct ChunkStatePc {
    VkDeviceAddress scratch, state, out;
    uint32_t d, valueHeads, tokens, chunk;
};
struct GatedNormPc {
    VkDeviceAddress x, z, w, out;
    uint32_t n, heads;
    float eps;
};
struct GatePc {
    VkDeviceAddress a, b, out, out2;
    uint32_t n, width, gateWidth, mode;
};

constexpr uint32_t kMaxHeadDim = 128;  // delta_net.comp (32 rows a thread) / gated_norm.comp (a thread a row)

}  // namespace

HybridOp::HybridOp(PipelineFactory& pipelines)
    : conv_(pipelines.get(Shader::SsmConv)),
      delta_(pipelines.get(Shader::DeltaNet)),
      chunkPrep_(pipelines.get(Shader::DeltaChunkPrep)),
      chunkState_(pipelines.get(Shader::DeltaChunkState)),
      norm_(pipelines.get(Shader::GatedNorm)),
      gate_(pipelines.get(Shader::Gate)) {}

uint64_t HybridOp::deltaChunkSlotFloats(uint32_t headDim, uint32_t chunk) {
    return 4ull * chunk * headDim + static_cast<uint64_t>(chunk) * chunk + chunk;  // Q, K, W, Ũ; M; G
}

void HybridOp::recordChunkedDelta(PlanContext& ctx, const graph::Op& op) const {
    const auto& c = *ctx.graph.config;
    const auto& h = c.hybrid;
    const auto rows = static_cast<uint32_t>(ctx.rows), chunk = ctx.mem.deltaChunk;
    const auto d = static_cast<uint32_t>(h.headDim), valueHeads = static_cast<uint32_t>(h.valueHeads);
    const ChunkPrepPc prep{ctx.row0(op.in), ctx.row0(op.alpha), ctx.row0(op.beta), ctx.weights.address(*op.weight),
                           ctx.weights.address(*op.biasWeight), ctx.mem.deltaChunks, d,
                           static_cast<uint32_t>(h.keyHeads), valueHeads, rows, chunk, c.normEps};
    ctx.rec.dispatch(chunkPrep_, prep, (rows + chunk - 1) / chunk, valueHeads);
    const ChunkStatePc state{ctx.mem.deltaChunks, ctx.at(op.state, 0), ctx.row0(op.out), d, valueHeads, rows, chunk};
    ctx.rec.dispatch(chunkState_, state, valueHeads, (d + 15) / 16);
}

void HybridOp::record(PlanContext& ctx, const graph::Op& op) const {
    const auto& c = *ctx.graph.config;
    const auto& h = c.hybrid;
    const auto rows = static_cast<uint32_t>(ctx.rows);
    if (h.enabled() && (h.headDim > static_cast<int32_t>(kMaxHeadDim) || h.headDim % 4 != 0))
        throw runtime::TierError(fmt::format("vulkan tier: op {}: DeltaNet head dim {} (the shaders take multiples of 4 up to {})",
                                             op.label, h.headDim, kMaxHeadDim));
    switch (op.kind) {
        case graph::OpKind::SsmConv: {
            MatVecOp::checkConvTaps(op, static_cast<uint32_t>(h.convKernel));
            const RowSlots slots = rowSlots(ctx);
            const ConvPc pc{ctx.row0(op.in), ctx.at(op.state, 0), ctx.weights.address(*op.weight), ctx.row0(op.out), slots.tokenState,
                            static_cast<uint32_t>(h.convChannels()), static_cast<uint32_t>(h.convKernel), rows,
                            slots.slotFloats, slots.kvRows, slots.rowOfGroup};
            ctx.rec.dispatch(conv_, pc, groupsFor(static_cast<uint64_t>(h.convChannels()), 64), 1, slots.rowOfGroup ? rows : 1);
            break;
        }
        case graph::OpKind::DeltaNet: {
            if (rows > 1 && ctx.mem.deltaChunks != 0 && !ctx.sequenceRows) {
                recordChunkedDelta(ctx, op);
                break;
            }
            const RowSlots slots = rowSlots(ctx);
            const DeltaPc pc{ctx.row0(op.in), ctx.row0(op.alpha), ctx.row0(op.beta), ctx.row0(op.out), ctx.at(op.state, 0),
                             ctx.weights.address(*op.weight), ctx.weights.address(*op.biasWeight),
                             static_cast<uint32_t>(h.headDim), static_cast<uint32_t>(h.keyHeads),
                             static_cast<uint32_t>(h.valueHeads), rows, c.normEps, slots.tokenState, slots.slotFloats,
                             slots.kvRows, slots.rowOfGroup};
            ctx.rec.dispatch(delta_, pc, static_cast<uint32_t>(h.valueHeads), groupsFor(static_cast<uint64_t>(h.headDim), 32),
                             slots.rowOfGroup ? rows : 1);
            break;
        }
        case graph::OpKind::GatedNorm: {
            const GatedNormPc pc{ctx.row0(op.in), ctx.row0(op.gate), ctx.weights.address(*op.weight), ctx.row0(op.out),
                                 static_cast<uint32_t>(op.weight->cols), static_cast<uint32_t>(op.heads), c.normEps};
            ctx.rec.dispatch(norm_, pc, rows * static_cast<uint32_t>(op.heads));
            break;
        }
        case graph::OpKind::SplitGate: {
            const uint32_t d = ctx.width(op.in) / (2u * static_cast<uint32_t>(op.heads));
            const uint64_t n = static_cast<uint64_t>(ctx.width(op.out)) * rows;
            const GatePc pc{ctx.row0(op.in), 0, ctx.row0(op.out), ctx.row0(op.gate), static_cast<uint32_t>(n), d, 0, 0};
            ctx.rec.dispatch(gate_, pc, groupsFor(n, 256));
            ctx.acts.invalidate(op.gate);
            break;
        }
        case graph::OpKind::SigmoidGate: {
            const uint64_t n = static_cast<uint64_t>(ctx.width(op.in)) * rows;
            const GatePc pc{ctx.row0(op.in), ctx.row0(op.gate), ctx.row0(op.out), 0, static_cast<uint32_t>(n),
                            ctx.width(op.in), ctx.width(op.gate), 1};
            ctx.rec.dispatch(gate_, pc, groupsFor(n, 256));
            break;
        }
        default:
            throw runtime::TierError(fmt::format("vulkan tier: op {} is not a hybrid-model op", op.label));
    }
    ctx.acts.invalidate(op.out);
}

}  // namespace zinc::vk
