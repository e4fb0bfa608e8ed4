// Seeded sampling on the GPU (sample.comp): the host sampler's chain over the last logits row.
#include "vulkan/ops.h"

namespace zinc::vk {
namespace {

struct SamplePc {
    VkDeviceAddress logits, state, ring, sampler;
    uint32_t n, ringCapacity;
};

}  // namespace

SampleOp::SampleOp(PipelineFactory& pipelines) : pipeline_(pipelines.get(Shader::Sample)) {}

void SampleOp::record(PlanContext& ctx, VkDeviceAddress logits, uint32_t n) const {
    ctx.rec.dispatch(pipeline_, SamplePc{logits, ctx.mem.state, ctx.mem.ring, ctx.mem.sampler, n, ctx.mem.ringCapacity}, 1);
}

}  // namespace zinc::vk
