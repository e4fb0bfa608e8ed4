#pragma once
// The decode graph as one indirect buffer: every op of the lowered graph (graph/lower.h) mapped onto the kernels of
// kernels/cl/ (kernel argument structs of kernels/kernel_args.h) with pointers into the arena,
// the weights, the KV cache and the token-state block. Recorded once per batch shape; per token
// only the token-state block changes. MoE expert ids are written by moe_topk and read by the
// expert matvecs on the GPU.
#include <cstdint>
#include <functional>
#include <string>

#include "graph/graph.h"
#include "graph/lower.h"
#include "kfd/tier/plan_builder.h"
#include "kfd/tier/sampler_block.h"
#include "kfd/tier/tier_memory.h"

namespace zinc::kfd {

struct PlanShape {
    int32_t nTokens = 1;
    bool allRows = false;  // every token's logits, or only the last one's
    bool argmax = false;   // end with argmax of the last logits row into tokens[0]
    bool sample = false;   // end with the GPU sampler (sample_token) on the last logits row
    // >= 0: a step over nTokens rows of several sequences (Tier::evaluateRows), this many of them
    // wanting logits. Each row's position and KV slot come from the token state's rows block
    // (TierMemory::rows()); where the layer stack ends, the wanted rows of the buffers crossing it
    // (graph::buffersCrossingLayerEnd) are gathered to rows 0..wantedRows-1, and the output head
    // runs on those (none wanted: the plan ends there). Attention never splits in such a plan, so
    // a row's logits do not depend on the rows beside it.
    int32_t wantedRows = -1;
    // In such a step, every row is in a sequence slot of its own (decode rows): a hybrid's
    // recurrent ops then step the rows side by side (hybrid_ops.h, OpRows::ownSlots).
    bool rowsOwnSlots = false;
    bool sequenceRows() const { return wantedRows >= 0; }
    auto operator<=>(const PlanShape&) const = default;
};

struct RecordedPlan {
    PlanShape shape;
    int32_t firstLogitsRow = 0;  // logits rows [firstLogitsRow, nTokens) are computed
    PlanBuilder::Finished built;
};

// Called after each lowered op that carries out graph ops (graph/lower.h; not after its Quantize
// steps) once per graph op it carries out (index, op), in order: a fused op (graph::fuse) calls
// it for each of its ops after all its dispatches. A tracer appends its launches.
using AfterOp = std::function<void(PlanBuilder&, size_t, const graph::Op&)>;

// `fuseOps` false: graph::fuse's fused ops are declined, so every graph op writes its output
// (plans instrumented op by op: trace, capture).
RecordedPlan recordGraph(Device& device, KernelTable& kernels, const graph::Graph& graph, const TierMemory& memory,
                         const PlanShape& shape, const AfterOp& afterOp = {}, uint32_t extraDispatches = 0,
                         const SamplerBlock* sampler = nullptr, bool fuseOps = true);

}  // namespace zinc::kfd
