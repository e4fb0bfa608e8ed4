// Seeded sampling on the GPU (sample.comp): the host sampler's chain over the last logits row,
// a workgroup per slice of the vocabulary and the last one drawing.
#include "vulkan/ops.h"
#include "vulkan/sampler_state.h"

namespace zinc::vk {
namespace {

struct SamplePc {
    VkDeviceAddress logits, state, ring, sampler, candLogits, candIds, done;
    uint32_t n, ringCapacity;
};

}  // namespace

SampleOp::SampleOp(PipelineFactory& pipelines) : pipeline_(pipelines.get(Shader::Sample)) {}

void SampleOp::record(PlanContext& ctx, VkDeviceAddress logits, uint32_t n) const {
    record(ctx.rec, pipeline_, {logits, ctx.mem.state, ctx.mem.ring, ctx.mem.sampler, ctx.mem.sampleScratch}, n,
           ctx.mem.ringCapacity);
}

void SampleOp::record(Recorder& rec, VkPipeline pipeline, const Buffers& b, uint32_t n, uint32_t ringCapacity) {
    const uint32_t slices = sampleSlices(n);
    const VkDeviceAddress candLogits = b.scratch + kSampleCountersBytes;
    const VkDeviceAddress candIds = candLogits + sizeof(float) * kMaxDeviceTopK * slices;
    rec.dispatch(pipeline, SamplePc{b.logits, b.state, b.ring, b.sampler, candLogits, candIds, b.scratch, n, ringCapacity},
                 slices);
}

}  // namespace zinc::vk
