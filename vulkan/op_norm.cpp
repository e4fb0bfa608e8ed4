// RMSNorm of the residual stream (one workgroup per token) and QK-norm (one per head).
#include "vulkan/ops.h"

namespace zinc::vk {
namespace {

struct NormPc {
    VkDeviceAddress x, w, out;
    uint32_t n, heads, inStride, outStride;
    float eps;
};

}  // namespace

NormOp::NormOp(PipelineFactory& pipelines) : pipeline_(pipelines.get(Shader::RmsNorm)) {}

void NormOp::record(PlanContext& ctx, const graph::Op& op) const {
    const auto& c = *ctx.graph.config;
    const bool perHead = op.kind == graph::OpKind::HeadNorm;
    const uint32_t heads = perHead ? static_cast<uint32_t>(op.heads) : 1u;
    const NormPc pc{ctx.row0(op.in), ctx.weights.address(*op.weight), ctx.row0(op.out),
                    perHead ? static_cast<uint32_t>(c.headDim) : ctx.width(op.in), heads, ctx.width(op.in),
                    ctx.width(op.out), c.normEps};
    ctx.rec.dispatch(pipeline_, pc, static_cast<uint32_t>(ctx.rows) * heads);
    ctx.acts.invalidate(op.out);
}

}  // namespace zinc::vk
