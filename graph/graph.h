#pragma once
// The decode graph: an ordered list of ops over named buffers, built once per model. Every
// tier executes this same list; only the values declared in TokenState change per token.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/model_config.h"
#include "model/model_weights.h"

namespace zinc::graph {

enum class OpKind : uint8_t {
    Embed,      // out[t] = row tokens[t] of the embedding table
    RmsNorm,    // out = rmsnorm(in) * weight
    MatMul,     // out[t] = weight · in[t] (+ bias)
    HeadNorm,   // in place: rmsnorm over each head of `heads` x headDim, times weight (QK-norm)
    Rope,       // in place: rotate each head at its token's position (weight: rope_freqs divisors, optional)
    Attention,  // append k, v to the layer's KV cache; out = softmax(q kᵀ/√d) v over the cache (q = in)
    SwiGlu,     // out = silu(in) * up (in: the gate projection); gelu_tanh(in) * up with `gelu`
    Add,        // out = in + addend (the residual stream)
    MoeRoute,   // logits = weight · in; top-k experts -> expertIds, their weights -> expertWeights
    MoeFfn,     // out[t] = Σ_e w_e · down_e(silu(gate_e · in[t]) * up_e · in[t]) over expertIds/expertWeights
    // Gated DeltaNet (qwen35 hybrids; graph/hybrid_blocks.cpp says what each reads and writes).
    // Lowering passes them through unchanged; graph::fuse may join an SsmConv to the MatMul
    // before it (MatMulConv).
    SsmConv,      // out[t] = silu(causal conv1d of in over the window `state` (persistent), kernel weight)
    DeltaNet,     // delta-rule step per token (alpha, beta) on the persistent `state`; out = per-head output
    GatedNorm,    // out = rmsnorm per head of in (head dim = weight length) * weight * silu(gate)
    SplitGate,    // per head, in holds query then gate: out = query half, gate = gate half
    SigmoidGate,  // out = in * sigmoid(gate) (gate of width 1: one gate per token)
    // Only in a lowered graph (graph/lower.h): the explicit quantization step and the fused ops.
    Quantize,         // quantized = in in the lowered op's format
    MatMulAdd,        // out += weight · in (out: the residual)
    MoeFfnAdd,        // out += MoeFfn(in)
    GateUpSwiGlu,     // out = silu(weight · in) * (upWeight · in)
    SwiGluQuantize,   // quantized = silu(in) * up, in the lowered op's format
    NormQuantize,     // out = rmsnorm(in) * weight, and quantized = out in the lowered op's format
    QkRopeAttention,  // QK-norm (if any) and RoPE of q (in) and k, then Attention
    GatedNormQuantize,    // GatedNorm, and quantized = its out in the lowered op's format
    SigmoidGateQuantize,  // SigmoidGate, and quantized = its out in the lowered op's format
    MoeExperts,           // MoeFfn's expert rows only: the weighted sum is left to MoeSharedAdd
    MoeSharedAdd,         // out += Σ_e w_e · down_e + addend · sigmoid(weight · in): the experts'
                          // sum (expertWeights), the shared expert (addend) and its input gate
    MatMulConv,           // out = SsmConv of (weight · in) over `state` with convWeight: the
                          // projection's rows go through the conv as they are summed
};
inline constexpr bool isLoweredOnly(OpKind kind) { return kind >= OpKind::Quantize; }
const char* opKindName(OpKind kind);

enum class ElemType : uint8_t { F32, I32 };
using BufferId = int32_t;
inline constexpr BufferId kNoBuffer = -1;

struct Buffer {
    std::string name;
    ElemType elem = ElemType::F32;
    int64_t width = 0;  // elements per token
    // Recurrent state (conv window, DeltaNet matrices): one copy of `width` elements, not one
    // per token, kept across evaluate calls and cleared when a sequence starts at position 0.
    bool persistent = false;
};

// An op's operands by role: `in` and `out` for every op that has them, the others only for the
// kinds named beside them (kNoBuffer / nullptr elsewhere).
struct Op {
    OpKind kind;
    int32_t layer = -1;  // -1 for ops outside the layer stack
    std::string label;   // model-level name: "attn_q", "ffn_down", "moe_experts", "lm_head"...
    BufferId in = kNoBuffer;   // Attention: q; SwiGlu: the gate projection
    BufferId out = kNoBuffer;  // MoeRoute has none (expertIds, expertWeights)
    BufferId addend = kNoBuffer;                                // Add
    BufferId up = kNoBuffer;                                    // SwiGlu
    BufferId k = kNoBuffer, v = kNoBuffer;                      // Attention
    BufferId expertIds = kNoBuffer, expertWeights = kNoBuffer;  // MoeRoute writes them, MoeFfn reads them
    BufferId state = kNoBuffer;                                 // SsmConv, DeltaNet: persistent, read and written
    BufferId alpha = kNoBuffer, beta = kNoBuffer;               // DeltaNet: per value head decay, write strength
    BufferId gate = kNoBuffer;                                  // GatedNorm, SigmoidGate read it; SplitGate writes it
    const model::WeightRef* weight = nullptr;      // matrix, norm vector, router or gate experts
    const model::WeightRef* upWeight = nullptr;    // MoeFfn: up experts
    const model::WeightRef* downWeight = nullptr;  // MoeFfn: down experts
    const model::WeightRef* biasWeight = nullptr;  // DeltaNet: ssm_dt.bias
    const model::WeightRef* bias = nullptr;        // MatMul: F32 vector added to every output row (qwen2 q/k/v)
    const model::WeightRef* convWeight = nullptr;  // MatMulConv: the SsmConv's kernel
    float scale = 1.0f;                            // Embed: rows times this (gemma3: sqrt(d))
    int32_t window = 0;                            // Rope: sliding layer's rope; Attention: keys at distance >= window masked
    bool gelu = false;                             // SwiGlu: gelu_tanh(in) * up instead of silu(in) * up (gemma3)
    int32_t heads = 0;  // HeadNorm / Rope / Attention (query heads); DeltaNet / GatedNorm / SplitGate

    std::array<const model::WeightRef*, 6> weights() const { return {weight, upWeight, downWeight, biasWeight, bias, convWeight}; }
};
// Ops after the layer stack (final norm, lm_head) need only the rows whose logits are wanted.
inline bool runsOnWantedRowsOnly(const Op& op) { return op.layer < 0 && op.kind != OpKind::Embed; }
// The buffers an op reads and writes (in-place ops list theirs in both).
std::vector<BufferId> readsOf(const Op& op);
std::vector<BufferId> writesOf(const Op& op);

// Values that change per token. They live in a small token-state block that kernels read
// (GPU tiers) or are passed to the op (cpu tier); nothing else in the graph changes.
struct TokenState {
    int32_t position = 0;  // of the first token in the batch
    int32_t nTokens = 1;   // tokens in this batch (1 for decode)
    int32_t kvLength = 0;  // cache entries valid after this batch = position + nTokens
};

struct Graph {
    const model::ModelConfig* config = nullptr;
    const model::ModelWeights* weights = nullptr;
    std::vector<Buffer> buffers;
    std::vector<Op> ops;
    BufferId residual = kNoBuffer;
    BufferId logits = kNoBuffer;

    const Buffer& buffer(BufferId id) const { return buffers[static_cast<size_t>(id)]; }
    // Ops of one layer, in order (for events, traces, per-layer checks).
    size_t opsPerLayer() const;
};

Graph buildDecodeGraph(const model::ModelConfig& config, const model::ModelWeights& weights);

// Builder helpers shared by the per-architecture blocks: the buffer called `name` (added with
// this width the first time), and a new op appended to the graph.
BufferId findOrAddBuffer(Graph& graph, const std::string& name, int64_t width, ElemType elem = ElemType::F32,
                         bool persistent = false);
Op& appendOp(Graph& graph, OpKind kind, int32_t layer, std::string label);
// The gated DeltaNet block and the gated full-attention block of qwen35 hybrids
// (graph/hybrid_blocks.cpp); x is the residual stream, xn the normed-input scratch.
void buildDeltaNetBlock(Graph& graph, int32_t layer, BufferId x, BufferId xn);
void buildGatedAttentionBlock(Graph& graph, int32_t layer, BufferId x, BufferId xn);
void buildSharedExpert(Graph& graph, int32_t layer, BufferId xn, BufferId moeOut);

// Static memory plan: one arena holding every buffer for up to `maxTokens` tokens; buffer b of
// token t lives at byte offsets[b] + t * width * 4. Buffers are reused by every layer; persistent
// (recurrent state) buffers have `stateCopies` copies, one per sequence slot of a tier that
// batches a hybrid model's sequences: copy s of buffer b at offsets[b] + s * stateStride. The
// copies fill stateBegin..stateEnd, at the end of the arena.
struct MemoryPlan {
    std::vector<size_t> offsets;
    size_t arenaBytes = 0;
    int32_t maxTokens = 0;
    size_t stateBegin = 0, stateEnd = 0;  // the persistent buffers, contiguous (empty range: none)
    size_t stateStride = 0;               // one copy of them
    int32_t stateCopies = 1;

    size_t stateOffset(BufferId id, int32_t copy) const {
        return offsets[static_cast<size_t>(id)] + static_cast<size_t>(copy) * stateStride;
    }
};
MemoryPlan planMemory(const Graph& graph, int32_t maxTokens, int32_t stateCopies = 1);

}  // namespace zinc::graph
