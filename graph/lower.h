#pragma once
// The decode graph lowered for the GPU tiers: the facts every GPU recorder needs, derived once
// here instead of in each recorder.
//   - Activation quantization is an explicit step: a Quantize op before each op whose weight
//     multiplies 8-bit or half activations, writing the quantized copy of its input into the
//     scratch buffer of that format, once per buffer, format and row span (q/k/v share one).
//   - The last-row cut: ops after the layer stack carry lastRowOnly (they run on the last
//     token's row only, unless every row's logits are wanted).
//   - Scratch buffers are buffers: the quantized activations (one per format), the router
//     logits, the experts' gate/up/down rows and each layer's KV cache get ids after the graph's
//     own, so a tier can place barriers from buffer ids alone. They live outside the activation
//     arena (graph::planMemory does not lay them out); `Lowered::scratch` says which is which.
//   - Fusion (graph::fuse): op sequences rewritten into fused ops, each only where the tier's
//     `accepts` says yes.
// A recorder is then a switch from a lowered op's kind to its kernel(s).
//
// Adding an op kind: add it to graph::OpKind (graph.h) with its role fields; if it multiplies a
// weight against activations, add it to quantizedInputs() (lower.cpp) so its Quantize steps are
// placed; every other kind passes through lower() unchanged. Then a case in each recorder.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "graph/graph.h"

namespace zinc::graph {

// The activation format a weight type multiplies against (the same on every tier; values are
// the mode numbers of vulkan's quantize.comp).
enum class ActFormat : uint8_t { Q8_0 = 0, Q8_1 = 1, Q8_K = 2, F16 = 3, BF16 = 4, F32 = 5 };
inline constexpr size_t kActFormats = 6;
// The 8-bit block formats (a quantize kernel computes them; fused ops write them on the way in).
inline constexpr bool isEightBit(ActFormat f) { return f == ActFormat::Q8_0 || f == ActFormat::Q8_1 || f == ActFormat::Q8_K; }
const char* actFormatName(ActFormat format);
// nullopt for a weight type no tier multiplies (the tier's error names the weight).
std::optional<ActFormat> actFormatOf(model::GgmlType type);

// What a scratch buffer of the lowered graph holds (None: a buffer of the graph, in the arena).
enum class Scratch : uint8_t { None, Activations, RouterLogits, ExpertGate, ExpertUp, ExpertDown, KvCache };

struct LoweredOp {
    Op op;  // kind may be one of the lowered-only kinds (Quantize, the fused ones)
    // The graph ops [first, first + count) this op carries out; count 0 for a step the
    // lowering added (Quantize): it belongs to the graph op that follows.
    size_t first = 0, count = 0;
    bool lastRowOnly = false;  // after the layer stack: only the last token's row goes on
    // Quantize / NormQuantize / SwiGluQuantize: the format written into `quantized`.
    ActFormat format = ActFormat::F32;
    BufferId quantized = kNoBuffer;
    // Ops with a weight: the quantized copy of `in` each weight reads (kNoBuffer: F32, `in`).
    BufferId act = kNoBuffer, upAct = kNoBuffer;
    // MoeFfn / MoeFfnAdd: the down experts' input format (quantized inside the op).
    ActFormat downFormat = ActFormat::F32;
    // QkRopeAttention: the QK-norm weights (nullptr when the model has none).
    const model::WeightRef *qNorm = nullptr, *kNorm = nullptr;
    BufferId kvCache = kNoBuffer;  // Attention / QkRopeAttention: this layer's cache

    size_t last() const { return first + count - 1; }  // count > 0
};

struct Lowered {
    const Graph* graph = nullptr;
    std::vector<LoweredOp> ops;
    std::vector<Buffer> buffers;  // the graph's, then the scratch buffers
    std::vector<Scratch> scratch;  // per buffer
    BufferId tokens = kNoBuffer;   // the token ids (embed reads them; device argmax writes them)
    std::vector<BufferId> actBuffer = std::vector<BufferId>(kActFormats, kNoBuffer);  // per format
    BufferId routerLogits = kNoBuffer, expertGate = kNoBuffer, expertUp = kNoBuffer, expertDown = kNoBuffer;

    const Buffer& buffer(BufferId id) const { return buffers[static_cast<size_t>(id)]; }
};

// The format a weight needs: the tier's rule (it throws for types it has no kernel for).
using FormatOf = std::function<ActFormat(const model::WeightRef&)>;
// Every tier's MoE op quantizes the experts' rows (the down projections' input) into a scratch of
// its own, so the FFN input's quantized copy outlives it (qwen35moe's shared expert reads it).
Lowered lower(const Graph& graph, const FormatOf& formatOf);

// Fusion: each candidate (a lowered op of a fused kind, built from a sequence) replaces its
// sequence when `accepts` returns true for it. The fused kinds and what they replace:
//   MatMulAdd        MatMul, Add of its output into the residual (accumulate into the residual)
//   MoeFfnAdd        MoeFfn, Add of its output into the residual
//   GateUpSwiGlu     MatMul gate, MatMul up (same input), SwiGlu: one matvec of both matrices
//   SwiGluQuantize   SwiGlu, Quantize of its output (the F32 product is never written)
//   NormQuantize     RmsNorm and the next Quantize of its output (the F32 norm is written too)
//   QkRopeAttention  [HeadNorm q, HeadNorm k,] Rope q, Rope k, Attention (KV store included)
//   GatedNormQuantize, SigmoidGateQuantize
//                    GatedNorm / SigmoidGate (qwen35), the Quantize of its output right after
//                    (the F32 output is written too)
//   MoeExperts + MoeSharedAdd
//                    MoeFfn; and its shared expert's input gate (a one-row MatMul of the FFN
//                    input), SigmoidGate, the Add into the MoE output and the residual Add
//                    (qwen35moe): the expert rows, then one pass summing them with the gated
//                    shared expert into the residual. Both are asked for; both or neither.
//   MatMulConv       MatMul, the SsmConv of its output right after it, where nothing else reads
//                    the projection (qwen35's attn_qkv): the conv in the projection's epilogue
// A sequence whose ops carry a field the fused kernels do not (a MatMul bias, a Rope's
// rope_freqs or window, an Attention window, a GeGLU) is never fused.
using Accepts = std::function<bool(const LoweredOp& candidate)>;
void fuse(Lowered& lowered, const Accepts& accepts);

// Whether op writes its F32 `out` (false for SwiGluQuantize: only the quantized copy; and
// MoeExperts, whose weighted sum MoeSharedAdd adds straight into the residual).
bool writesF32Output(const LoweredOp& op);

}  // namespace zinc::graph
