// Greedy sampling: argmax of the last logits row into the token state and the id ring; in a
// step of several sequences' rows, of each wanted row into the ring.
#include <fmt/format.h>

#include <stdexcept>

#include "vulkan/ops.h"

namespace zinc::vk {
namespace {

struct ArgmaxPc {
    VkDeviceAddress logits, state, ring;
    uint32_t n, ringCapacity, advance;  // argmax.comp's advance: 0, 1, or kArgmaxRows
};

constexpr uint32_t kArgmaxRows = 2;

}  // namespace

ArgmaxOp::ArgmaxOp(PipelineFactory& pipelines) : pipeline_(pipelines.get(Shader::Argmax)) {}

void ArgmaxOp::record(PlanContext& ctx, VkDeviceAddress logits, uint32_t n, bool advance) const {
    ctx.rec.dispatch(pipeline_, ArgmaxPc{logits, ctx.mem.state, ctx.mem.ring, n, ctx.mem.ringCapacity, advance ? 1u : 0u},
                     1);
}

void ArgmaxOp::recordRows(PlanContext& ctx, VkDeviceAddress logits, uint32_t n, uint32_t rows) const {
    if (rows > ctx.mem.ringCapacity || uint64_t{rows} * n * sizeof(float) > UINT32_MAX)  // argmax.comp's row offset
        throw std::logic_error(fmt::format("vulkan tier: argmax of {} rows of {} logits; the id ring holds {}, the row offset 32 bits",
                                           rows, n, ctx.mem.ringCapacity));
    ctx.rec.dispatch(pipeline_, ArgmaxPc{logits, ctx.mem.state, ctx.mem.ring, n, ctx.mem.ringCapacity, kArgmaxRows}, rows);
}

}  // namespace zinc::vk
