// Causal GQA attention over the F16 KV cache: the batch's k and v rows are stored first, then
// every (token, head) pair attends to positions [0, its own].
#include <fmt/format.h>

#include <cmath>

#include "vulkan/ops.h"
#include "vulkan/vk_error.h"

namespace zinc::vk {
namespace {

struct StorePc {
    VkDeviceAddress k, v, kCache, vCache, state;
    uint32_t kvDim, stride;
};

struct AttendPc {
    VkDeviceAddress q, kCache, vCache, out, state;
    uint32_t nHead, group, headDim, kvDim, qStride, outStride;
    float scale;
    VkDeviceAddress partials;
    uint32_t nSplits, exactMax;
};

struct FusedPc {
    VkDeviceAddress q, k, v, qNorm, kNorm, table, kCache, vCache, state;
    uint32_t nHead, nHeadKv, headDim, ropeDim, neox, qStride, kvStride;
    float eps;
    uint32_t hasNorm;
};

void checkHeadDim(const model::ModelConfig& c) {
    if (c.headDim > 256 || c.headDim % 2 != 0)
        throw runtime::TierError(fmt::format("vulkan tier: head size {} (the attention shaders take even sizes up to 256)",
                                             c.headDim));
}

struct ArgsPc {
    VkDeviceAddress state, args;
    uint32_t nHead, maxSplits, exactMax;
};

struct SplitPc {
    VkDeviceAddress q, kCache, vCache, partials, state;
    uint32_t nHead, group, headDim, kvDim, qStride, nSplits;
    float scale;
    uint32_t exactMax;
};

}  // namespace

AttentionOp::AttentionOp(PipelineFactory& pipelines)
    : store_(pipelines.get(Shader::KvStore)),
      split_(pipelines.get(Shader::AttentionSplit)),
      attend_(pipelines.get(Shader::Attention)),
      args_(pipelines.get(Shader::AttentionArgs)),
      fused_(pipelines.get(Shader::QkRope)) {}

void AttentionOp::record(PlanContext& ctx, const graph::Op& op) const {
    const auto& c = *ctx.graph.config;
    checkHeadDim(c);
    const uint32_t kvDim = static_cast<uint32_t>(c.kvDim());
    const uint64_t layerOffset = static_cast<uint64_t>(op.layer) * ctx.mem.layerKvBytes;
    const VkDeviceAddress kCache = ctx.mem.kCache + layerOffset, vCache = ctx.mem.vCache + layerOffset;
    const StorePc store{ctx.row0(op.k), ctx.row0(op.v), kCache, vCache, ctx.mem.state, kvDim, ctx.width(op.k)};
    ctx.rec.dispatch(store_, store, groupsFor(kvDim / 2, 64), static_cast<uint32_t>(ctx.rows));
    attend(ctx, op, kCache, vCache);
}

void AttentionOp::recordFused(PlanContext& ctx, const graph::Op& op, const model::WeightRef* qNorm,
                              const model::WeightRef* kNorm) const {
    const auto& c = *ctx.graph.config;
    checkHeadDim(c);
    const uint64_t layerOffset = static_cast<uint64_t>(op.layer) * ctx.mem.layerKvBytes;
    const VkDeviceAddress kCache = ctx.mem.kCache + layerOffset, vCache = ctx.mem.vCache + layerOffset;
    const bool norm = qNorm && kNorm;
    const FusedPc pc{ctx.row0(op.in),
                     ctx.row0(op.k),
                     ctx.row0(op.v),
                     norm ? ctx.weights.address(*qNorm) : 0,
                     norm ? ctx.weights.address(*kNorm) : 0,
                     ctx.mem.ropeTable,
                     kCache,
                     vCache,
                     ctx.mem.state,
                     static_cast<uint32_t>(c.nHead),
                     static_cast<uint32_t>(c.nHeadKv),
                     static_cast<uint32_t>(c.headDim),
                     static_cast<uint32_t>(c.ropeDim),
                     c.ropeStyle == model::RopeStyle::Neox ? 1u : 0u,
                     ctx.width(op.in),
                     ctx.width(op.k),
                     c.normEps,
                     norm ? 1u : 0u};
    ctx.rec.dispatch(fused_, pc, static_cast<uint32_t>(c.nHead + 2 * c.nHeadKv), static_cast<uint32_t>(ctx.rows));
    attend(ctx, op, kCache, vCache);
}

void AttentionOp::attend(PlanContext& ctx, const graph::Op& op, VkDeviceAddress kCache, VkDeviceAddress vCache) const {
    const auto& c = *ctx.graph.config;
    const uint32_t kvDim = static_cast<uint32_t>(c.kvDim());
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.headDim));
    const auto nHead = static_cast<uint32_t>(c.nHead), group = static_cast<uint32_t>(c.nHead / c.nHeadKv);
    const auto headDim = static_cast<uint32_t>(c.headDim);
    // Only single-token plans split: a prefill batch fills the GPU with (token, head) pairs.
    const bool split = ctx.nTokens == 1 && ctx.mem.attnPartials != 0 && ctx.mem.attnArgs != VK_NULL_HANDLE &&
                       c.headDim % 8 == 0;
    const uint32_t exactMax = split ? kExactAttentionMax : UINT32_MAX;
    if (split) {
        const SplitPc pc{ctx.row0(op.in), kCache, vCache, ctx.mem.attnPartials, ctx.mem.state, nHead, group, headDim,
                         kvDim, ctx.width(op.in), ctx.mem.attnSplits, scale, exactMax};
        if (!ctx.attnArgsRecorded) {  // the split count follows the current KV length: once per plan
            const ArgsPc args{ctx.mem.state, ctx.mem.attnArgsAddress, nHead, ctx.mem.attnSplits, exactMax};
            ctx.rec.dispatch(args_, args, 1);
            ctx.rec.indirectArgsBarrier();
            ctx.attnArgsRecorded = true;
        }
        ctx.rec.dispatchIndirect(split_, pc, ctx.mem.attnArgs, 0);
    }
    const AttendPc attend{ctx.row0(op.in),
                          kCache,
                          vCache,
                          ctx.row0(op.out),
                          ctx.mem.state,
                          static_cast<uint32_t>(c.nHead),
                          static_cast<uint32_t>(c.nHead / c.nHeadKv),
                          static_cast<uint32_t>(c.headDim),
                          kvDim,
                          ctx.width(op.in),
                          ctx.width(op.out),
                          scale,
                          ctx.mem.attnPartials,
                          ctx.mem.attnSplits,
                          exactMax};
    ctx.rec.dispatch(attend_, attend, static_cast<uint32_t>(c.nHead), static_cast<uint32_t>(ctx.rows));
    ctx.acts.invalidate(op.out);
}

}  // namespace zinc::vk
