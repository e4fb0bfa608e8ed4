#pragma once
// The ops of the Qwen3.5 / Qwen3.6 hybrids (graph/hybrid_blocks.cpp) onto the kernels of
// kernels/cl/deltanet.cl: SsmConv, DeltaNet, GatedNorm, SplitGate, SigmoidGate. The conv window
// and the per-head state matrices are the graph's persistent buffers in the arena
// (graph::planMemory's recurrent-state range, a copy per sequence slot), updated in place by the
// kernels; barriers come from the buffer ids as for every other op (each layer's state has its
// own id, all its copies included).
#include <cstdint>
#include <string>

#include "graph/graph.h"
#include "kfd/tier/plan_builder.h"
#include "kfd/tier/tier_memory.h"

namespace zinc::kfd {

// Workgroups along an extent: ceil(a / b).
inline uint32_t ceilDiv(int64_t a, int64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

// The rows a recorded op covers: tokens [firstRow, firstRow + rows) of the plan; in a step over
// rows of several sequences, the token state's rows block (each row's position and slot), whose
// slot picks the copy of the recurrent state a row steps (graph::MemoryPlan::stateCopies);
// ownSlots: every row is in a slot of its own, so ssm_conv and delta_net step the rows side by
// side (a workgroup row each) instead of walking them in order.
struct OpRows {
    int32_t firstRow = 0;
    uint32_t rows = 1;
    uint64_t rowsBlock = 0;
    bool ownSlots = false;
};

// Records the dispatch of one hybrid op; throws TierError naming the op for a shape the
// kernels do not take (a head dim over 128).
void recordHybridOp(PlanBuilder& b, const graph::Graph& g, const TierMemory& m, const graph::Op& op, OpRows rows);

// The matvec half of graph::fuse's MatMulConv as the graph recorder resolves it: the kernel
// (matvec_<type>_conv), the weight and the activations it multiplies.
struct ConvMatVec {
    std::string kernel;
    uint64_t weight = 0, rowBytes = 0;
    int32_t k = 0, rows = 0;
    uint64_t act = 0, actStride = 0;
    graph::BufferId actId = graph::kNoBuffer;
};

// MatMulConv (qwen35's attn_qkv and the DeltaNet conv of its rows) as one matvec_<type>_conv
// dispatch; decode rows only (one row, or rows each in a sequence slot of its own), since the
// conv of a prompt's rows walks them in order (ssm_conv).
void recordMatMulConv(PlanBuilder& b, const graph::Graph& g, const TierMemory& m, const graph::Op& op, OpRows rows,
                      const ConvMatVec& matVec);

// One dispatch of copy_words: `words` 32-bit words from `src` to `dst` (state snapshots), alone
// in its plan (the plan's start and end are its barriers).
void recordCopyWords(PlanBuilder& b, uint64_t src, uint64_t dst, uint64_t words);

}  // namespace zinc::kfd
