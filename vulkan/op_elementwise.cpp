// SwiGLU and the residual add over whole rows.
#include <algorithm>

#include "vulkan/ops.h"

namespace zinc::vk {
namespace {

struct ElementwisePc {
    VkDeviceAddress a, b, out;
    uint32_t n, mode;
};

}  // namespace

ElementwiseOp::ElementwiseOp(PipelineFactory& pipelines) : pipeline_(pipelines.get(Shader::Elementwise)) {}

void ElementwiseOp::recordRaw(PlanContext& ctx, VkDeviceAddress a, VkDeviceAddress b, VkDeviceAddress out, uint64_t n,
                              uint32_t mode) const {
    const uint32_t groups = groupsFor(n, 256);
    const uint32_t x = std::min<uint32_t>(groups, 65535);
    ctx.rec.dispatch(pipeline_, ElementwisePc{a, b, out, static_cast<uint32_t>(n), mode}, x, groupsFor(groups, x));
}

void ElementwiseOp::record(PlanContext& ctx, const graph::Op& op) const {
    const uint64_t n = static_cast<uint64_t>(ctx.width(op.in)) * static_cast<uint64_t>(ctx.rows);
    recordRaw(ctx, ctx.row0(op.in), ctx.row0(op.kind == graph::OpKind::SwiGlu ? op.up : op.addend), ctx.row0(op.out), n, op.kind == graph::OpKind::SwiGlu ? 0u : 1u);
    ctx.acts.invalidate(op.out);
}

}  // namespace zinc::vk
