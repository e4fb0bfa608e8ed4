// Mixture of experts on the GPU: the router's matvec and top-k write expert ids and weights
// to device memory (one dispatch of moe_topk.comp for F32 router weights); the expert matvecs
// read those ids (expert mode of matvec.comp), so the routing never visits the host. One
// (token, slot) pair per workgroup z. qwen35moe's shared expert joins the weighted sum in
// moe_combine.comp (graph::fuse's MoeExperts + MoeSharedAdd).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "vulkan/ops.h"
#include "vulkan/vk_error.h"

namespace zinc::vk {
namespace {

struct TopKPc {
    VkDeviceAddress logits, ids, weights, w, x, done;
    uint32_t nExpert, nUsed, normalize, k, xStride, matThreads, computes;
};

struct GroupPc {
    VkDeviceAddress ids, group;
    uint32_t nPairs, nExpert, orderAt;
};

constexpr uint32_t kPairTile = 64;  // matmul.comp's pairs per tile

// Rows from which an F32 router's logits take the float matvec and the top k a dispatch of its
// own (one workgroup a token) instead of moe_topk.comp's one dispatch (a workgroup an expert and
// token, the last of a token ranking). A step of rows never takes the fused form: it pays for one
// token only, where it saves a barrier, and a rows plan's row must get the same bits alone as
// beside others (NVIDIA's driver compiles the two forms' sums differently). H200, make-model
// Q4_K_M, bench --sequences 8 -p 64 -n 128 -r 2 --gpu-greedy (run 230): the Qwen3.6 shape 839.3
// -> 919.3 / 924.3 tok/s (the routers of a step 1,941 -> 1,083 us), Qwen3-30B-A3B 887.1 -> 887.7
// / 895.7. One-sequence plans keep it below kTiledMinTokens tokens. ZINC_VK_ROUTER_FUSED_BELOW=N
// sets the bound for both, for A/B runs (read per plan).
uint32_t fusedRouterBelowRows(bool sequenceRows) {
    const char* v = std::getenv("ZINC_VK_ROUTER_FUSED_BELOW");
    if (v && *v) return static_cast<uint32_t>(std::strtoul(v, nullptr, 10));
    return sequenceRows ? 0u : MatVecOp::kTiledMinTokens;
}

struct CombinePc {
    VkDeviceAddress down, weights, out;
    uint32_t n, nUsed, outStride, accumulate;
    VkDeviceAddress shared, gateW, x;
    uint32_t sharedStride, xStride, k, matThreads, hasShared;
};
constexpr uint32_t kCombineGroup = 128;  // moe_combine.comp's local size


}  // namespace

MoeOp::MoeOp(PipelineFactory& pipelines, MatVecOp& matVec, ElementwiseOp& elementwise)
    : matVec_(matVec),
      elementwise_(elementwise),
      topK_(pipelines.get(Shader::MoeTopK)),
      combine_(pipelines.get(Shader::MoeCombine)),
      group_(pipelines.get(Shader::MoeGroup)) {}

uint32_t MoeOp::maxTiles(uint32_t pairs, uint32_t nExpert) { return pairs / kPairTile + std::min(pairs, nExpert); }

void MoeOp::recordRoute(PlanContext& ctx, const graph::Op& op) const {
    const auto& c = *ctx.graph.config;
    const auto& w = *op.weight;
    if (c.nExpert > 512 || c.nExpertUsed > 64 || c.nExpertUsed > c.nExpert)
        throw runtime::TierError(fmt::format("vulkan tier: {} experts, {} used (moe_topk.comp takes up to 512, 64 used)", c.nExpert,
                                             c.nExpertUsed));
    const auto rows = static_cast<uint32_t>(ctx.rows);
    TopKPc pc{ctx.mem.routerLogits, ctx.row0(op.expertIds), ctx.row0(op.expertWeights), 0, 0, ctx.mem.routerDone,
              static_cast<uint32_t>(c.nExpert), static_cast<uint32_t>(c.nExpertUsed), c.normTopkProb ? 1u : 0u,
              static_cast<uint32_t>(w.cols), 0, MatVecOp::matVecThreads(w.cols), 0};
    if (w.type == model::GgmlType::F32 && ctx.mem.routerDone != 0 && rows < fusedRouterBelowRows(ctx.sequenceRows)) {
        // Logits and top k in one dispatch: workgroup (expert, token), the last one of a token
        // ranks. Rows plans take the else branch (fusedRouterBelowRows): the float matvec's tiles of 4 experts x
        // 8 tokens (the same sums, each router value loaded once per tile, not per token),
        // then the top k.
        pc.w = ctx.weights.address(w);
        pc.x = ctx.row0(op.in);
        pc.xStride = ctx.width(op.in);
        pc.computes = 1;
        ctx.rec.dispatch(topK_, pc, static_cast<uint32_t>(c.nExpert), rows);
    } else {
        matVec_.multiply(ctx, w, matVec_.input(ctx, w, op.in), ctx.mem.routerLogits, static_cast<uint32_t>(c.nExpert), rows, false);
        ctx.rec.dispatch(topK_, pc, rows);
    }
    ctx.acts.invalidate(op.expertIds);
    ctx.acts.invalidate(op.expertWeights);
}

void MoeOp::recordExperts(PlanContext& ctx, const graph::Op& op, bool accumulate, bool combine) const {
    const auto& c = *ctx.graph.config;
    const auto rows = static_cast<uint32_t>(ctx.rows);
    const auto nUsed = static_cast<uint32_t>(c.nExpertUsed);
    const auto ff = static_cast<uint32_t>(c.nFfExpert), embd = static_cast<uint32_t>(c.nEmbd);
    const uint32_t slots = rows * nUsed;
    uint32_t tiles = 0;
    if (rows >= MatVecOp::kTiledMinTokens && !ctx.sequenceRows) {  // each expert's matrices once per 64 of its pairs (matmul.comp)
        tiles = maxTiles(slots, static_cast<uint32_t>(c.nExpert));
        ctx.rec.dispatch(group_, GroupPc{ctx.row0(op.expertIds), ctx.mem.moeGroups, slots, static_cast<uint32_t>(c.nExpert),
                                         ctx.mem.moeOrderAt}, 1);
    }
    const MatVecOp::Expert up{ctx.row0(op.expertIds), slots, nUsed, tiles};
    const ActFormat downMode = MatVecOp::formatFor(op.downWeight->type);
    MatVecOp::Input act{ctx.mem.gateSlots, ff};
    if (MatVecOp::pairable(*op.weight, *op.upWeight)) {
        // gateSlots = silu(gate · x) * (up · x), both experts' matrices in one dispatch
        matVec_.multiply(ctx, *op.weight, matVec_.input(ctx, *op.weight, op.in), ctx.mem.gateSlots, ff, rows, false, &up,
                         op.upWeight);
        // The rows' Quantize stays a dispatch of its own. A one-token down projection that
        // quantized the floats itself (the same bits) was slower on the H200, Qwen3.6 shape /
        // Qwen3-30B-A3B, bench -p 512 -n 128 -r 2 --gpu-greedy: 297.3 / 294.7 tok/s with the
        // Quantize; 287.0 / 291.8 with each down workgroup (256 threads) quantizing the row into
        // shared memory first (run 195); 246.0 / 225.6 with each thread quantizing the units it
        // multiplies in registers (run 196). Branch qin, not merged.
        if (downMode != ActFormat::F32)
            act = matVec_.quantize(ctx, downMode, ctx.mem.gateSlots, 0, ff, ff, slots, ctx.mem.expertActs);
    } else {
        matVec_.multiply(ctx, *op.weight, matVec_.input(ctx, *op.weight, op.in), ctx.mem.gateSlots, ff, rows, false, &up);
        matVec_.multiply(ctx, *op.upWeight, matVec_.input(ctx, *op.upWeight, op.in), ctx.mem.upSlots, ff, rows, false, &up);
        if (downMode == ActFormat::F32)
            elementwise_.recordRaw(ctx, ctx.mem.gateSlots, ctx.mem.upSlots, ctx.mem.gateSlots, uint64_t{slots} * ff, 0);
        else
            act = matVec_.quantize(ctx, downMode, ctx.mem.gateSlots, ctx.mem.upSlots, ff, ff, slots, ctx.mem.expertActs);
    }
    const MatVecOp::Expert down{ctx.row0(op.expertIds), slots, 1, tiles};
    matVec_.multiply(ctx, *op.downWeight, act, ctx.mem.downSlots, embd, rows, false, &down);
    if (!combine) return;  // MoeSharedAdd sums the rows later
    const CombinePc pc{ctx.mem.downSlots, ctx.row0(op.expertWeights), ctx.row0(op.out), embd, nUsed, ctx.width(op.out),
                       accumulate ? 1u : 0u, 0, 0, 0, 0, 0, 0, 0, 0};
    ctx.rec.dispatch(combine_, pc, groupsFor(embd, kCombineGroup), rows);
    ctx.acts.invalidate(op.out);
}

bool MoeOp::sharedAddable(const graph::Op& op) {
    return op.weight->type == model::GgmlType::F32 && op.weight->rows == 1;
}

void MoeOp::recordSharedAdd(PlanContext& ctx, const graph::Op& op) const {
    const auto& c = *ctx.graph.config;
    const auto embd = static_cast<uint32_t>(c.nEmbd);
    const auto& g = *op.weight;
    const CombinePc pc{ctx.mem.downSlots, ctx.row0(op.expertWeights), ctx.row0(op.out), embd, static_cast<uint32_t>(c.nExpertUsed),
                       ctx.width(op.out), 1u, ctx.row0(op.addend), ctx.weights.address(g), ctx.row0(op.in), ctx.width(op.addend),
                       ctx.width(op.in), static_cast<uint32_t>(g.cols), MatVecOp::matVecThreads(g.cols), 1u};
    ctx.rec.dispatch(combine_, pc, groupsFor(embd, kCombineGroup), static_cast<uint32_t>(ctx.rows));
    ctx.acts.invalidate(op.out);
}

}  // namespace zinc::vk
