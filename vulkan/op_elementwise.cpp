// SwiGLU / GeGLU, the residual add and a MatMul's bias, over whole rows.
#include <fmt/format.h>

#include <algorithm>

#include "vulkan/ops.h"
#include "vulkan/vk_error.h"

namespace zinc::vk {
namespace {

struct ElementwisePc {
    VkDeviceAddress a, b, out;
    uint32_t n, mode, bWidth;
};

}  // namespace

ElementwiseOp::ElementwiseOp(PipelineFactory& pipelines) : pipeline_(pipelines.get(Shader::Elementwise)) {}

void ElementwiseOp::recordRaw(PlanContext& ctx, VkDeviceAddress a, VkDeviceAddress b, VkDeviceAddress out, uint64_t n,
                              uint32_t mode) const {
    const uint32_t groups = groupsFor(n, 256);
    const uint32_t x = std::min<uint32_t>(groups, 65535);
    ctx.rec.dispatch(pipeline_, ElementwisePc{a, b, out, static_cast<uint32_t>(n), mode, 0}, x, groupsFor(groups, x));
}

void ElementwiseOp::record(PlanContext& ctx, const graph::Op& op) const {
    const uint64_t n = static_cast<uint64_t>(ctx.width(op.in)) * static_cast<uint64_t>(ctx.rows);
    const bool glu = op.kind == graph::OpKind::SwiGlu;
    recordRaw(ctx, ctx.row0(op.in), ctx.row0(glu ? op.up : op.addend), ctx.row0(op.out), n, glu ? (op.gelu ? 3u : 0u) : 1u);
    ctx.acts.invalidate(op.out);
}

}  // namespace zinc::vk

namespace zinc::vk {

// A MatMul's bias (qwen2 q/k/v), added to its output rows in place after the matvec.
void ElementwiseOp::recordBias(PlanContext& ctx, const graph::Op& op) const {
    const uint64_t width = static_cast<uint64_t>(ctx.width(op.out));
    if (static_cast<uint64_t>(op.bias->cols) != width)
        throw runtime::TierError(fmt::format("vulkan tier: op {}: bias {} has {} values for rows of {}", op.label, op.bias->name,
                                      op.bias->cols, width));
    const uint64_t n = width * static_cast<uint64_t>(ctx.rows);
    const uint32_t groups = groupsFor(n, 256);
    const uint32_t x = std::min<uint32_t>(groups, 65535);
    const VkDeviceAddress out = ctx.row0(op.out);
    ctx.rec.dispatch(pipeline_, ElementwisePc{out, ctx.weights.address(*op.bias), out, static_cast<uint32_t>(n), 2,
                                              static_cast<uint32_t>(width)},
                     x, groupsFor(groups, x));
    ctx.acts.invalidate(op.out);
}

}  // namespace zinc::vk
