// Rotary position embedding in place; positions come from the token state, angles from a
// table the tier fills once (TierMemory::uploadRopeTable; sliding-window layers have their own).
#include "vulkan/ops.h"

namespace zinc::vk {
namespace {

struct RopePc {
    VkDeviceAddress x, table, state;
    uint32_t stride, heads, headDim, ropeDim, neox;
};

}  // namespace

RopeOp::RopeOp(PipelineFactory& pipelines) : pipeline_(pipelines.get(Shader::Rope)) {}

void RopeOp::record(PlanContext& ctx, const graph::Op& op) const {
    const auto& c = *ctx.graph.config;
    const RopePc pc{ctx.row0(op.in), op.window > 0 ? ctx.mem.ropeTableSwa : ctx.mem.ropeTable, ctx.mem.state, ctx.width(op.in),
                    static_cast<uint32_t>(op.heads), static_cast<uint32_t>(c.headDim),
                    static_cast<uint32_t>(c.ropeDim), c.ropeStyle == model::RopeStyle::Neox ? 1u : 0u};
    ctx.rec.dispatch(pipeline_, pc, groupsFor(static_cast<uint64_t>(c.ropeDim / 2) * op.heads, 64),
                     static_cast<uint32_t>(ctx.rows));
    ctx.acts.invalidate(op.out);
}

}  // namespace zinc::vk
