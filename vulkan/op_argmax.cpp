// Greedy sampling: argmax of the last logits row into the token state and the id ring.
#include "vulkan/ops.h"

namespace zinc::vk {
namespace {

struct ArgmaxPc {
    VkDeviceAddress logits, state, ring;
    uint32_t n, ringCapacity, advance;
};

}  // namespace

ArgmaxOp::ArgmaxOp(PipelineFactory& pipelines) : pipeline_(pipelines.get(Shader::Argmax)) {}

void ArgmaxOp::record(PlanContext& ctx, VkDeviceAddress logits, uint32_t n, bool advance) const {
    ctx.rec.dispatch(pipeline_, ArgmaxPc{logits, ctx.mem.state, ctx.mem.ring, n, ctx.mem.ringCapacity, advance ? 1u : 0u},
                     1);
}

}  // namespace zinc::vk
