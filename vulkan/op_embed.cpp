// Embedding lookup (times the op's scale): the token ids come from the token state, so the plan
// never changes.
#include <fmt/format.h>

#include <algorithm>

#include "vulkan/ops.h"
#include "vulkan/vk_error.h"

namespace zinc::vk {
namespace {

struct EmbedPc {
    VkDeviceAddress w, out, state;
    uint32_t type, cols, rowBytes, outStride;
    float scale;  // gemma3: sqrt(d)
};

bool embeddable(model::GgmlType t) {
    using model::GgmlType;
    switch (t) {
        case GgmlType::F32: case GgmlType::F16: case GgmlType::BF16: case GgmlType::Q4_0: case GgmlType::Q4_1:
        case GgmlType::Q5_0: case GgmlType::Q5_1: case GgmlType::Q8_0: case GgmlType::Q4_K: case GgmlType::Q5_K:
        case GgmlType::Q6_K: case GgmlType::Q2_K: case GgmlType::Q3_K: case GgmlType::IQ4_NL: case GgmlType::IQ4_XS:
            return true;
        default: return false;
    }
}

}  // namespace

EmbedOp::EmbedOp(PipelineFactory& pipelines) : pipeline_(pipelines.get(Shader::Embed)) {}

void EmbedOp::record(PlanContext& ctx, const graph::Op& op) const {
    const auto& w = *op.weight;
    if (!embeddable(w.type))
        throw runtime::TierError(fmt::format("vulkan tier: embedding {} has type {}, which the embed shader cannot read",
                                             w.name, model::ggmlTypeName(w.type)));
    const EmbedPc pc{ctx.weights.address(w), ctx.row0(op.out), ctx.mem.state, static_cast<uint32_t>(w.type),
                     static_cast<uint32_t>(w.cols), static_cast<uint32_t>(w.rowBytes), ctx.width(op.out), op.scale};
    ctx.rec.dispatch(pipeline_, pc, std::min<uint32_t>(groupsFor(w.cols, 64), 64), static_cast<uint32_t>(ctx.rows));
    ctx.acts.invalidate(op.out);
}

}  // namespace zinc::vk
