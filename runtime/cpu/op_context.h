#pragma once
// What every cpu op sees: the graph, the arena, the batch of tokens being evaluated and the
// shared scratch. Ops are free functions, one small file per family (ops_*.cpp).
#include <cstdint>
#include <span>
#include <vector>

#include "graph/graph.h"
#include "runtime/cpu/kv_cache.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/tier.h"

namespace zinc::cpu {

// A byte buffer aligned for SIMD loads.
class AlignedBytes {
public:
    explicit AlignedBytes(size_t bytes = 0) { resize(bytes); }
    void resize(size_t bytes) { storage_.assign((bytes + 63) / 64 + 1, Line{}); }
    uint8_t* data() { return reinterpret_cast<uint8_t*>(storage_.data()); }
    size_t size() const { return storage_.size() * 64; }

private:
    struct alignas(64) Line { uint8_t bytes[64]; };
    std::vector<Line> storage_;
};

struct OpContext {
    const graph::Graph& graph;
    const graph::MemoryPlan& plan;
    uint8_t* arena;
    ThreadPool& pool;
    KvCache& kv;
    std::span<const int32_t> tokens;  // the whole batch
    int32_t position;                 // of tokens[0]
    int32_t firstRow = 0;             // ops after the layer stack may run on the last token only
    int32_t rows = 0;                 // tokens this op processes
    const float* ropeCos;             // [token][ropeDim/2], filled once per evaluate
    const float* ropeSin;
    runtime::Precision precision;
    AlignedBytes& actScratch;         // quantized activations of the current matmul input
    const float* ropeCosSwa = nullptr;  // the sliding-window layers' table (gemma3), when the model has them
    const float* ropeSinSwa = nullptr;
    // A step over several sequences (Tier::evaluateRows): each row's position and KV slot. Null:
    // one sequence, row t at position + t in slot 0.
    const int32_t* rowPositions = nullptr;
    const int32_t* rowSlots = nullptr;
    // DeltaNet over more than one token: chunks of this many tokens (runtime/cpu/delta_rule.h);
    // 0 runs the recurrence token by token.
    int32_t deltaChunk = 0;
    // The sequence slot whose copy of the recurrent state (graph::MemoryPlan::stateCopies) the
    // recurrent ops read and write: the slot of the rows they run on.
    int32_t stateCopy = 0;

    int32_t positionOf(int32_t row) const { return rowPositions ? rowPositions[row] : position + row; }
    int32_t slotOf(int32_t row) const { return rowSlots ? rowSlots[row] : 0; }

    float* f32(graph::BufferId id, int32_t token) const {
        const auto& b = graph.buffer(id);
        return reinterpret_cast<float*>(arena + plan.offsets[static_cast<size_t>(id)]) +
               static_cast<size_t>(token) * static_cast<size_t>(b.width);
    }
    // A persistent (recurrent state) buffer: stateCopy's copy.
    float* state(graph::BufferId id) const { return reinterpret_cast<float*>(arena + plan.stateOffset(id, stateCopy)); }
    int32_t* i32(graph::BufferId id, int32_t token) const {
        return reinterpret_cast<int32_t*>(f32(id, token));
    }
};

// One op of the decode graph (the cpu tier's op switch; the probe's check mode runs the graph
// op by op through it). Throws TierError for the lowered-only kinds of graph/lower.h.
void runOp(const OpContext& ctx, const graph::Op& op);

void runEmbed(const OpContext& ctx, const graph::Op& op);
void runRmsNorm(const OpContext& ctx, const graph::Op& op);
void runHeadNorm(const OpContext& ctx, const graph::Op& op);
void runRope(const OpContext& ctx, const graph::Op& op);
void runAttention(const OpContext& ctx, const graph::Op& op);
void runMatMul(const OpContext& ctx, const graph::Op& op);
void runSwiGlu(const OpContext& ctx, const graph::Op& op);  // GeGLU when op.gelu
void runGeGlu(const OpContext& ctx, const graph::Op& op);
void runAdd(const OpContext& ctx, const graph::Op& op);
void runMoeRoute(const OpContext& ctx, const graph::Op& op);
void runMoeFfn(const OpContext& ctx, const graph::Op& op);
// Qwen3.5 hybrids (ops_deltanet.cpp): SsmConv, DeltaNet, GatedNorm, SplitGate, SigmoidGate.
void runHybridOp(const OpContext& ctx, const graph::Op& op);

// Shared by the matmul, router and expert ops: y[t][r] = (slice `slice` of w) row r · x[t] for
// `tokens` rows of x (xStride floats apart), in the context's precision.
void project(const OpContext& ctx, const model::WeightRef& w, int64_t slice, const float* x, size_t xStride,
             int32_t tokens, float* y, size_t yStride);

}  // namespace zinc::cpu
