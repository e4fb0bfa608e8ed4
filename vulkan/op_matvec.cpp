// Weight times activations. Inputs are first put into the activation format the weight type
// multiplies against (quantize.comp, the cpu tier's formats), once per buffer and format;
// the matvec variant of the weight type then reads each weight once per token tile.
#include <fmt/format.h>

#include <algorithm>

#include "vulkan/ops.h"
#include "vulkan/vk_error.h"

namespace zinc::vk {
namespace {

using model::GgmlType;

struct QuantizePc {
    VkDeviceAddress x, x2, out;
    uint32_t k, inStride, outStride, mode, swiglu;
    VkDeviceAddress normW, normOut;
    float eps;
    uint32_t norm;
};

struct MatVecPc {
    VkDeviceAddress w, w32, act, out, ids, w2, w2_32;
    uint32_t k, m, rowBytes, actStride, outStride, nTok, sliceBytes, expertMode, actDiv, accumulate, groupsX;
};

struct MatMulPc {
    VkDeviceAddress w, w32, act, out, w2, w2_32;
    uint32_t k, m, rowBytes, actStride, outStride, nTok, accumulate;
    VkDeviceAddress group;
    uint32_t sliceBytes, actDiv, orderAt;
};

constexpr uint32_t kTokenTile = 8;        // tokens per matvec workgroup in batched prefill
constexpr uint32_t kMatMulMinTokens = 16;  // from here on prefill uses the tiled matmul
constexpr uint32_t kMatMulTile = 64;       // matmul.comp's rows and tokens per workgroup (matmul_coopmat: coopmatTileFor)

// Threads along k: enough for every 32-value unit of a row, 32 to 128.
uint32_t workgroupFor(int64_t k) {
    uint32_t wg = 32;
    while (wg < 128 && wg * 32 < k) wg *= 2;
    return wg;
}

// Rows per workgroup: more rows share each activation load; fewer keep a small matrix
// spread over the whole GPU.
uint32_t rowsPerGroup(int64_t m) { return m >= 8192 ? 4 : m >= 4096 ? 2 : 1; }

// matmul_coopmat.comp's shape for m rows (per weight set) and `columns` workgroup columns of
// 64 tokens (or expert tiles): the forced one (ZINC_VK_COOPMAT_TILE), else the largest that
// still gives kCoopmatMinWorkgroups workgroups (big tiles decode each weight for more tokens
// and multiply more per shared load; too few leave multiprocessors idle), within shared memory.
// PAIR decodes gate and up: half the rows per set, at least 64. EXPERT: 64 tokens (moe_group).
constexpr uint32_t kCoopmatMinWorkgroups = 256;

CoopmatTile coopmatTileFor(const DeviceCaps& caps, uint32_t m, uint32_t tokens, bool pair, bool expert) {
    const uint32_t subgroup = caps.cooperativeMatrix ? caps.subgroupSize : 32u;
    const auto fits = [&](CoopmatTile t) {
        return caps.sharedMemoryBytes >= coopmatSharedBytes(t.rows, pair ? 2u : 1u, t.tokens, subgroup);
    };
    const auto shaped = [&](CoopmatTile t) {
        t.rows = pair ? std::max(64u, t.rows / 2u) : t.rows;
        if (expert) t.tokens = 64;
        return t;
    };
    if (!caps.coopmatTile.automatic()) {
        const CoopmatTile t = shaped(caps.coopmatTile);
        return fits(t) ? t : shaped({64, 64});
    }
    for (const CoopmatTile t : {shaped({128, 128}), shaped({128, 64})}) {
        const uint32_t groups = groupsFor(m, t.rows) * (expert ? tokens : groupsFor(tokens, t.tokens));
        if (groups >= kCoopmatMinWorkgroups && fits(t)) return t;
    }
    return shaped({64, 64});
}

uint32_t actRowWords(ActFormat mode, uint32_t k) {
    return mode == ActFormat::Q8_0 || mode == ActFormat::Q8_1 || mode == ActFormat::Q8_K ? k / 4 + k / 16 : k;
}

}  // namespace

MatVecOp::MatVecOp(PipelineFactory& pipelines, bool integerDotProduct)
    : pipelines_(pipelines),
      quantize_(pipelines.get(Shader::Quantize)),
      matVec_(integerDotProduct ? Shader::MatVecDot4 : Shader::MatVec),
      matMul_(pipelines.caps().cooperativeMatrix           ? Shader::MatMulCoopmat
              : pipelines.caps().cooperativeMatrixEmulated ? Shader::MatMulCoopmatEmulated
              : integerDotProduct                          ? Shader::MatMulDot4
                                                           : Shader::MatMul) {}

ActFormat MatVecOp::formatFor(GgmlType weight) {
    if (const auto format = graph::actFormatOf(weight)) return *format;
    throw runtime::TierError(fmt::format("vulkan tier: no matvec shader for {} weights", model::ggmlTypeName(weight)));
}

MatVecOp::Input MatVecOp::quantize(PlanContext& ctx, ActFormat mode, VkDeviceAddress x, VkDeviceAddress x2, uint32_t k,
                                   uint32_t stride, uint32_t rows) {
    const auto slot = static_cast<size_t>(mode);
    const uint32_t outStride = actRowWords(mode, k);
    const QuantizePc pc{x, x2 ? x2 : x, ctx.mem.actSlots[slot], k, stride, outStride, static_cast<uint32_t>(mode),
                        x2 ? 1u : 0u, x, x, 0.0f, 0u};
    ctx.rec.dispatch(quantize_, pc, groupsFor(k, 256), rows);
    ctx.acts.slots[slot] = {};
    return {ctx.mem.actSlots[slot], outStride};
}

void MatVecOp::recordNormQuantized(PlanContext& ctx, const graph::Op& norm, ActFormat mode) {
    const auto slot = static_cast<size_t>(mode);
    const uint32_t k = ctx.width(norm.in);
    const QuantizePc pc{ctx.row0(norm.in), ctx.row0(norm.in), ctx.mem.actSlots[slot], k, k, actRowWords(mode, k),
                        static_cast<uint32_t>(mode), 0u, ctx.weights.address(*norm.weight), ctx.row0(norm.out),
                        ctx.graph.config->normEps, 1u};
    ctx.rec.dispatch(quantize_, pc, groupsFor(k, 256), static_cast<uint32_t>(ctx.rows));
    ctx.acts.invalidate(norm.out);
    ctx.acts.slots[slot] = {norm.out, ctx.firstRow, ctx.rows};
}

MatVecOp::Input MatVecOp::input(PlanContext& ctx, const model::WeightRef& w, graph::BufferId in) {
    return quantizeInput(ctx, formatFor(w.type), in);
}

MatVecOp::Input MatVecOp::quantizeInput(PlanContext& ctx, ActFormat mode, graph::BufferId in) {
    if (mode == ActFormat::F32) return {ctx.row0(in), ctx.width(in)};
    auto& entry = ctx.acts.slots[static_cast<size_t>(mode)];
    const uint32_t k = ctx.width(in);
    if (entry.buffer == in && entry.firstRow == ctx.firstRow && entry.rows == ctx.rows)
        return {ctx.mem.actSlots[static_cast<size_t>(mode)], actRowWords(mode, k)};
    const Input act = quantize(ctx, mode, ctx.row0(in), 0, k, k, static_cast<uint32_t>(ctx.rows));
    entry = {in, ctx.firstRow, ctx.rows};
    return act;
}

void MatVecOp::multiply(PlanContext& ctx, const model::WeightRef& w, Input act, VkDeviceAddress out, uint32_t outStride,
                        uint32_t tokens, bool accumulate, const Expert* expert, const model::WeightRef* up) {
    if (up && !pairable(w, *up))
        throw runtime::TierError(fmt::format("vulkan tier: {} and {} cannot share a matvec", w.name, up->name));
    const ActFormat mode = formatFor(w.type);
    const bool quantized = mode != ActFormat::F32 && mode != ActFormat::F16 && mode != ActFormat::BF16;
    // matmul.comp keeps one min per 32 values: Q2_K's per-16 mins stay on the matvec.
    const bool tiledType = w.type != GgmlType::Q2_K;
    if (expert && expert->maxTiles > 0 && !tiledType)
        throw runtime::TierError(fmt::format("vulkan tier: expert weights {} are Q2_K, which the grouped matmul cannot read", w.name));
    if (quantized && (expert ? expert->maxTiles > 0 : tokens >= kMatMulMinTokens && tiledType && !ctx.sequenceRows))
        return multiplyTiled(ctx, w, act, out, outStride, tokens, accumulate, up, expert);
    const uint32_t tile = expert || tokens == 1 ? 1u : kTokenTile;
    const uint32_t rows = rowsPerGroup(w.rows);
    const VkPipeline pipeline =
        pipelines_.get(matVec_, {workgroupFor(w.cols), static_cast<uint32_t>(w.type), tile, rows, up ? 1u : 0u});
    const uint32_t m = static_cast<uint32_t>(w.rows);
    const uint32_t groups = groupsFor(m, rows);
    const uint32_t gx = std::min<uint32_t>(groups, 65535);
    const VkDeviceAddress weights = ctx.weights.address(w);
    const VkDeviceAddress upWeights = up ? ctx.weights.address(*up) : weights;
    const MatVecPc pc{weights,
                      weights,
                      act.address,
                      out,
                      expert ? expert->ids : 0,
                      upWeights,
                      upWeights,
                      static_cast<uint32_t>(w.cols),
                      m,
                      static_cast<uint32_t>(w.rowBytes),
                      act.stride,
                      outStride,
                      tokens,
                      static_cast<uint32_t>(w.rowBytes * static_cast<size_t>(w.rows)),
                      expert ? 1u : 0u,
                      expert ? expert->actDiv : 1u,
                      accumulate ? 1u : 0u,
                      gx};
    ctx.rec.dispatch(pipeline, pc, gx, groupsFor(groups, gx), expert ? expert->slots : groupsFor(tokens, tile));
}

void MatVecOp::multiplyTiled(PlanContext& ctx, const model::WeightRef& w, Input act, VkDeviceAddress out,
                             uint32_t outStride, uint32_t tokens, bool accumulate, const model::WeightRef* up,
                             const Expert* expert) {
    const uint32_t rows = static_cast<uint32_t>(w.rows);
    const uint32_t slots = expert ? expert->maxTiles : tokens;
    std::vector<uint32_t> spec = {static_cast<uint32_t>(w.type), up ? 1u : 0u, expert ? 1u : 0u};
    CoopmatTile tile{kMatMulTile, kMatMulTile};
    if (matMul_ == Shader::MatMulCoopmat || matMul_ == Shader::MatMulCoopmatEmulated) {
        const auto& caps = pipelines_.caps();
        tile = coopmatTileFor(caps, rows, slots, up != nullptr, expert != nullptr);
        spec.insert(spec.end(), {tile.rows, tile.tokens, matMul_ == Shader::MatMulCoopmat ? caps.subgroupSize : 32u});
    }
    const VkPipeline pipeline = pipelines_.get(matMul_, spec);
    const VkDeviceAddress weights = ctx.weights.address(w);
    const VkDeviceAddress upWeights = up ? ctx.weights.address(*up) : weights;
    const MatMulPc pc{weights,
                      weights,
                      act.address,
                      out,
                      upWeights,
                      upWeights,
                      static_cast<uint32_t>(w.cols),
                      static_cast<uint32_t>(w.rows),
                      static_cast<uint32_t>(w.rowBytes),
                      act.stride,
                      outStride,
                      expert ? expert->slots : tokens,
                      accumulate ? 1u : 0u,
                      ctx.mem.moeGroups,
                      static_cast<uint32_t>(w.rowBytes * static_cast<size_t>(w.rows)),
                      expert ? expert->actDiv : 1u,
                      ctx.mem.moeOrderAt};
    const uint32_t columnTiles = expert ? expert->maxTiles : groupsFor(tokens, tile.tokens);
    ctx.rec.dispatch(pipeline, pc, groupsFor(rows, tile.rows), columnTiles, 1);
}

bool MatVecOp::pairable(const model::WeightRef& gate, const model::WeightRef& up) {
    const ActFormat mode = formatFor(gate.type);
    return gate.type == up.type && gate.rows == up.rows && gate.cols == up.cols && gate.stack == up.stack &&
           mode != ActFormat::F32 && mode != ActFormat::F16 && mode != ActFormat::BF16;
}

void MatVecOp::record(PlanContext& ctx, const graph::Op& op) {
    const auto& w = *op.weight;
    const Input act = input(ctx, w, op.in);
    multiply(ctx, w, act, ctx.row0(op.out), ctx.width(op.out), static_cast<uint32_t>(ctx.rows), false);
    ctx.acts.invalidate(op.out);
}

}  // namespace zinc::vk
