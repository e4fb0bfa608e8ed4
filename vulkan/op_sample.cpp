// Seeded sampling on the GPU (sample.comp): the host sampler's chain over the last logits row,
// a workgroup per slice of the vocabulary and the last one drawing; or over each wanted row of
// a step of several sequences, a chain (sampler block) a row.
#include <fmt/format.h>

#include <stdexcept>

#include "vulkan/ops.h"
#include "vulkan/sampler_state.h"

namespace zinc::vk {
namespace {

struct SamplePc {
    VkDeviceAddress logits, state, ring, sampler, candLogits, candIds, done;
    uint32_t n, ringCapacity, rows;
};

void dispatchSample(Recorder& rec, VkPipeline pipeline, const SampleOp::Buffers& b, uint32_t n, uint32_t ringCapacity,
                    uint32_t rows) {
    const uint32_t slices = sampleSlices(n);
    const uint32_t counted = std::max(rows, 1u);
    const VkDeviceAddress candLogits = b.scratch + kSampleCountersBytes * counted;
    const VkDeviceAddress candIds = candLogits + sizeof(float) * kMaxDeviceTopK * slices;
    rec.dispatch(pipeline, SamplePc{b.logits, b.state, b.ring, b.sampler, candLogits, candIds, b.scratch, n, ringCapacity, rows},
                 slices, counted);
}

}  // namespace

SampleOp::SampleOp(PipelineFactory& pipelines) : pipeline_(pipelines.get(Shader::Sample)) {}

void SampleOp::record(PlanContext& ctx, VkDeviceAddress logits, uint32_t n) const {
    record(ctx.rec, pipeline_, {logits, ctx.mem.state, ctx.mem.ring, ctx.mem.sampler, ctx.mem.sampleScratch}, n,
           ctx.mem.ringCapacity);
}

void SampleOp::recordRows(PlanContext& ctx, VkDeviceAddress logits, uint32_t n, uint32_t rows) const {
    if (rows > ctx.mem.samplerBlocks || rows > ctx.mem.ringCapacity || uint64_t{rows} * n > UINT32_MAX)  // sample.comp's offsets
        throw std::logic_error(fmt::format("vulkan tier: sampling {} rows of {} logits; {} sampler blocks, an id ring of {}, "
                                           "32-bit offsets", rows, n, ctx.mem.samplerBlocks, ctx.mem.ringCapacity));
    dispatchSample(ctx.rec, pipeline_, {logits, ctx.mem.state, ctx.mem.ring, ctx.mem.sampler, ctx.mem.sampleScratch}, n,
                   ctx.mem.ringCapacity, rows);
}

void SampleOp::record(Recorder& rec, VkPipeline pipeline, const Buffers& b, uint32_t n, uint32_t ringCapacity) {
    dispatchSample(rec, pipeline, b, n, ringCapacity, 0);
}

}  // namespace zinc::vk
