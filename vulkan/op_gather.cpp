// Continuous batching: where the layer stack ends, the rows whose logits are wanted move to the
// first rows of each buffer still read after it (graph::buffersCrossingLayerEnd), so the
// output norm and head run on those rows only.
#include "vulkan/ops.h"

namespace zinc::vk {
namespace {

struct GatherPc {
    VkDeviceAddress x, state;
    uint32_t width, wanted;
};

}  // namespace

GatherRowsOp::GatherRowsOp(PipelineFactory& pipelines) : pipeline_(pipelines.get(Shader::GatherRows)) {}

void GatherRowsOp::record(PlanContext& ctx, graph::BufferId buffer, uint32_t wanted) const {
    const GatherPc pc{ctx.at(buffer, 0), ctx.mem.state, ctx.width(buffer), wanted};
    ctx.rec.dispatch(pipeline_, pc, 1);
    ctx.acts.invalidate(buffer);
}

}  // namespace zinc::vk
