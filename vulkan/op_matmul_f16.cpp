#include "vulkan/op_matmul_f16.h"

#include <algorithm>
#include <string>

#include "vulkan/ops.h"

namespace zinc::vk {
namespace {

struct DequantPc {
    VkDeviceAddress w, w32, w2, w2_32, out, out2, group;
    uint32_t k, rows, row0, rowBytes, sliceBytes, sliceRows;
};

struct GemmPc {
    VkDeviceAddress w, w2, act, out, group;
    uint32_t k, m, actStride, outStride, nTok, accumulate, sliceRows, actDiv, orderAt;
};

}  // namespace

CoopmatTile coopmatTileFor(const DeviceCaps& caps, uint32_t m, uint32_t tokens, bool pair, bool expert, bool twoPass) {
    const uint32_t subgroup = caps.cooperativeMatrix ? caps.subgroupSize : 32u;
    const auto fits = [&](CoopmatTile t) {
        const uint32_t sets = pair ? 2u : 1u;
        return caps.sharedMemoryBytes >= (twoPass ? matmulF16SharedBytes(t.rows, sets, t.tokens)
                                                  : coopmatSharedBytes(t.rows, sets, t.tokens, subgroup));
    };
    // PAIR multiplies gate and up: half the rows per set, at least 64. EXPERT: 64 tokens (moe_group).
    const auto shaped = [&](CoopmatTile t) {
        t.rows = pair ? std::max(64u, t.rows / 2u) : t.rows;
        if (expert) t.tokens = 64;
        return t;
    };
    if (!caps.coopmatTile.automatic()) {
        const CoopmatTile t = shaped(caps.coopmatTile);
        return fits(t) ? t : shaped({64, 64});
    }
    // The largest tile that still gives caps.coopmatMinWorkgroups: big tiles read each weight
    // for more tokens and multiply more per shared load, too few workgroups leave
    // multiprocessors idle.
    for (const CoopmatTile t : {shaped({128, 128}), shaped({128, 64})}) {
        const uint32_t groups = groupsFor(m, t.rows) * (expert ? tokens : groupsFor(tokens, t.tokens));
        if (groups >= caps.coopmatMinWorkgroups && fits(t)) return t;
    }
    return shaped({64, 64});
}

F16MatMul::F16MatMul(PipelineFactory& pipelines)
    : pipelines_(pipelines), gemm_(pipelines.caps().cooperativeMatrix ? Shader::MatMulF16 : Shader::MatMulF16Emulated) {}

uint32_t F16MatMul::chunkRows(uint64_t budget, uint32_t rows, uint64_t rowBytes) {
    if (uint64_t{rows} * rowBytes <= budget) return rows;
    return static_cast<uint32_t>(budget / rowBytes / kChunkAlign * kChunkAlign);
}

uint64_t F16MatMul::scratchBytesFor(const graph::Graph& graph) {
    uint64_t most = 0;
    for (const graph::Op& op : graph.ops) {
        if (op.kind == graph::OpKind::Embed) continue;
        const bool pair = op.weight && op.upWeight && MatVecOp::pairable(*op.weight, *op.upWeight);
        for (const model::WeightRef* w : op.weights()) {
            if (!w || w == op.bias || !w->present() || !MatVecOp::tiled(w->type)) continue;
            const uint64_t sets = pair && (w == op.weight || w == op.upWeight) ? 2 : 1;
            const uint64_t rowBytes = sets * static_cast<uint64_t>(w->stack) * static_cast<uint64_t>(w->cols) * 2;
            const auto rows = static_cast<uint32_t>(w->rows);
            most = std::max(most, chunkRows(std::max(kScratchCap, kChunkAlign * rowBytes), rows, rowBytes) * rowBytes);
        }
    }
    return most;
}

void F16MatMul::recordDequant(Recorder& rec, const Call& c, uint32_t row0, uint32_t rows) {
    const bool expert = c.experts > 0;
    const uint32_t experts = std::max(c.experts, 1u);
    const uint64_t setBytes = uint64_t{experts} * rows * c.cols * 2;
    const bool pair = c.upWeights != 0;
    const VkPipeline pipeline = pipelines_.get(Shader::DequantF16, {static_cast<uint32_t>(c.type), expert ? 1u : 0u});
    const DequantPc pc{c.weights,
                       c.weights,
                       pair ? c.upWeights : c.weights,
                       pair ? c.upWeights : c.weights,
                       c.scratch,
                       c.scratch + setBytes,
                       c.group,
                       c.cols,
                       rows,
                       row0,
                       c.rowBytes,
                       c.rowBytes * c.rows,
                       rows};
    rec.dispatch(pipeline, pc, groupsFor(uint64_t{rows} * (c.cols / 32), 256), expert ? c.maxTiles : 1u, pair ? 2u : 1u);
}

bool F16MatMul::record(Recorder& rec, const Call& c) {
    const bool expert = c.experts > 0, pair = c.upWeights != 0;
    const uint64_t rowBytes = (pair ? 2u : 1u) * uint64_t{std::max(c.experts, 1u)} * c.cols * 2;
    const uint32_t most = chunkRows(c.scratchBytes, c.rows, rowBytes);
    if (most == 0) return false;
    // Chunks of about equal rows, in multiples of kChunkAlign but the last.
    const uint32_t chunks = groupsFor(c.rows, most);
    const uint32_t chunk = std::min(c.rows, groupsFor(groupsFor(c.rows, chunks), kChunkAlign) * kChunkAlign);
    const auto& caps = pipelines_.caps();
    for (uint32_t row0 = 0; row0 < c.rows; row0 += chunk) {
        const uint32_t rows = std::min(chunk, c.rows - row0);
        {
            const SubLabel dequant(rec, "f16 dequant");
            recordDequant(rec, c, row0, rows);
        }
        const CoopmatTile tile = coopmatTileFor(caps, rows, expert ? c.maxTiles : c.tokens, pair, expert, true);
        const VkPipeline pipeline = pipelines_.get(gemm_, {pair ? 1u : 0u, expert ? 1u : 0u, tile.rows, tile.tokens,
                                                           gemm_ == Shader::MatMulF16 ? caps.subgroupSize : 32u});
        const uint64_t setBytes = uint64_t{std::max(c.experts, 1u)} * rows * c.cols * 2;
        const GemmPc pc{c.scratch,
                        c.scratch + (pair ? setBytes : 0),
                        c.act,
                        c.out + uint64_t{row0} * 4,
                        c.group,
                        c.cols,
                        rows,
                        c.actStride,
                        c.outStride,
                        c.tokens,
                        c.accumulate ? 1u : 0u,
                        rows,
                        c.actDiv,
                        c.orderAt};
        const uint32_t columns = expert ? c.maxTiles : groupsFor(c.tokens, tile.tokens);
        rec.dispatch(pipeline, pc, groupsFor(rows, tile.rows), columns, 1);
    }
    return true;
}

}  // namespace zinc::vk
