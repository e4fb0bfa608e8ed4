#pragma once
// The vulkan tier's ops: each records one graph op kind into a plan and owns the pipelines
// it dispatches (vulkan/op_*.cpp, one file per family).
#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "graph/graph.h"
#include "model/model_weights.h"
#include "vulkan/plan_context.h"
#include "vulkan/vk_pipeline.h"

namespace zinc::vk {

class EmbedOp {
public:
    explicit EmbedOp(PipelineFactory& pipelines);
    void record(PlanContext& ctx, const graph::Op& op) const;

private:
    VkPipeline pipeline_;
};

// RmsNorm of the residual stream and per-head QK-norm (HeadNorm), in one shader.
class NormOp {
public:
    explicit NormOp(PipelineFactory& pipelines);
    void record(PlanContext& ctx, const graph::Op& op) const;

private:
    VkPipeline pipeline_;
};

class RopeOp {
public:
    explicit RopeOp(PipelineFactory& pipelines);
    void record(PlanContext& ctx, const graph::Op& op) const;

private:
    VkPipeline pipeline_;
};

// Stores k and v into the F16 cache, then attends (attention.comp). recordFused also does
// the QK-norm and RoPE ops before it (qk_rope.comp): one dispatch instead of five.
class AttentionOp {
public:
    explicit AttentionOp(PipelineFactory& pipelines);
    // quantizeFor: the format the op after it reads the output in (graph::lower's Quantize step),
    // which attention.comp may write itself (QUANT) into the activation cache's slot.
    void record(PlanContext& ctx, const graph::Op& op, std::optional<ActFormat> quantizeFor = {}) const;
    void recordFused(PlanContext& ctx, const graph::Op& op, const model::WeightRef* qNorm, const model::WeightRef* kNorm,
                     std::optional<ActFormat> quantizeFor = {}) const;
    // attention_split.comp's specialization constants for `heads` query heads a workgroup and
    // heads of headDim: rolling loads for one-token steps up to 128 wide (ZINC_VK_ATTN_ROLL=0:
    // none); fused: the decode step's QK-norm, RoPE and KV store in it (FUSED). The variant
    // attend() creates (and the RADV compile test builds for real shapes).
    static std::vector<uint32_t> splitSpec(uint32_t heads, uint32_t headDim, bool oneToken, bool fused = false);
    // Query heads one split-attention workgroup takes (attention_split.comp GQ): 4, or the
    // largest divisor of the GQA group under it that fits the device's shared memory;
    // ZINC_VK_ATTN_HEADS (1..8) asks for another block size.
    uint32_t splitHeads(const model::ModelConfig& c) const;
    // A prefill batch at least this long attends through flash_attention.comp where
    // DeviceCaps::flashAttention holds (and flashFits): 32, or ZINC_VK_FLASH_MIN (A/B; read per plan).
    static int32_t flashMinTokens();
    // What flash_attention.comp reads: q and out rows of the batch ([token][stride], head h at
    // h * headDim), the layer's K and V rows (key p in row p of kvDim halves), the token state
    // (the batch's first position).
    struct FlashArgs {
        VkDeviceAddress q, kCache, vCache, out, state;
        uint32_t nTok, nHead, group, headDim, kvDim, qStride, outStride;
        float scale, qScale;
    };
    // Records flash_attention.comp over nTok tokens x nHead heads (the device's matrix cores, or
    // their emulation where DeviceCaps::cooperativeMatrixEmulated).
    static void recordFlash(Recorder& rec, PipelineFactory& pipelines, const FlashArgs& a);
    // Its subgroups (the emulation's: 32 threads) and the shared memory it takes.
    static uint32_t flashSubgroup(const DeviceCaps& caps) { return caps.cooperativeMatrixEmulated ? 32u : caps.subgroupSize; }
    static uint32_t flashSharedBytes(uint32_t headDim, uint32_t subgroup);

private:
    // One layer's K and V rows (graph::KvLayout) and its window.
    struct LayerCache {
        VkDeviceAddress k, v;
        uint32_t slots, window;
    };
    static LayerCache layerCache(const PlanContext& ctx, const graph::Op& op);
    // Flash attention takes this layer's batch: one sequence (token t at position + t, key p in
    // row p), no window, heads of a multiple of 16 up to 128.
    bool flashFits(const PlanContext& ctx, const LayerCache& cache) const;
    // A one-token step whose attention the split kernel's FUSED variant may rotate and store
    // (not ZINC_VK_ATTN_FUSE=0).
    static bool fusable(const PlanContext& ctx);
    // Partials per (token, head) this plan's split kernel writes (at most; a one-token step's
    // may be more, below), and whether they fit.
    static uint32_t splitCount(const PlanContext& ctx);
    // The split policy word (vulkan/shaders/split_policy.glsl) of a plan whose split kernel is
    // `split` over `headBlocks` blocks of query heads: splitCount; for a one-token step up to
    // what the GPU keeps resident (DeviceLayout::attnStepSplits at most), with the GPU's units.
    uint32_t splitPolicy(const PlanContext& ctx, VkPipeline split, uint32_t headBlocks) const;
    bool splitFits(const PlanContext& ctx) const;
    // What the split kernel's FUSED variant reads to rotate and store the step itself.
    struct RopeStep {
        VkDeviceAddress k = 0, v = 0, qNorm = 0, kNorm = 0, table = 0;
        uint32_t rope = 0;  // ropeDim | neox << 16 | hasNorm << 17
        float eps = 0.0f;
    };
    void attend(PlanContext& ctx, const graph::Op& op, const LayerCache& cache, const RopeStep* step,
                std::optional<ActFormat> quantizeFor) const;
    PipelineFactory& pipelines_;
    VkPipeline store_, attend_, args_, fused_;
};

// SwiGLU and the residual add.
class ElementwiseOp {
public:
    explicit ElementwiseOp(PipelineFactory& pipelines);
    void record(PlanContext& ctx, const graph::Op& op) const;
    void recordRaw(PlanContext& ctx, VkDeviceAddress a, VkDeviceAddress b, VkDeviceAddress out, uint64_t n,
                   uint32_t mode) const;
    void recordBias(PlanContext& ctx, const graph::Op& op) const;

private:
    VkPipeline pipeline_;
};

// Weight times activations for every weight type: quantizes the input as the cpu tier does,
// then runs the matvec variant of the weight type (tokens tiled for batched prefill).
class F16MatMul;

struct QuantizePc;  // quantize.comp's push constants (op_matvec.cpp)

class MatVecOp {
public:
    MatVecOp(PipelineFactory& pipelines, bool integerDotProduct);
    ~MatVecOp();
    static ActFormat formatFor(model::GgmlType weight);  // throws TierError for an unsupported type
    // Words a row of k activations takes in `mode` (quant_block.glsl's layout for the 8-bit ones).
    static uint32_t rowWords(ActFormat mode, uint32_t k);
    void record(PlanContext& ctx, const graph::Op& op);

    // The building blocks, also used by the MoE op.
    struct Input {
        VkDeviceAddress address;
        uint32_t stride;  // words between rows
    };
    // Quantizes `rows` rows of k floats (stride floats apart; with x2, silu(x) * x2 first) into
    // the format's slot, or `into` (the slot's cached copy then stays).
    Input quantize(PlanContext& ctx, ActFormat mode, VkDeviceAddress x, VkDeviceAddress x2, uint32_t k, uint32_t stride,
                   uint32_t rows, VkDeviceAddress into = 0);
    // RMSNorm (op `norm`) and quantization of its output for `mode` in one dispatch; the
    // normalised floats are written too, for consumers of another format.
    void recordNormQuantized(PlanContext& ctx, const graph::Op& norm, ActFormat mode);
    // The same for the qwen35 gates (SigmoidGateQuantize, GatedNormQuantize, in place):
    // quantize.comp computes the gate on the way in (as gate.comp / gated_norm.comp do) and
    // writes its floats too.
    static bool gateQuantizable(const graph::Op& gate);
    void recordGateQuantized(PlanContext& ctx, const graph::Op& gate, ActFormat mode);
    // The input of `w` for graph buffer `in` over the context's rows, quantized once per
    // buffer and format (ActivationCache).
    Input input(PlanContext& ctx, const model::WeightRef& w, graph::BufferId in);
    // The same for a format (a lowered Quantize step): a no-op when the cache holds it.
    Input quantizeInput(PlanContext& ctx, ActFormat mode, graph::BufferId in);
    struct Expert {
        VkDeviceAddress ids = 0;  // [slot] expert id
        uint32_t slots = 0;
        uint32_t actDiv = 1;      // activation row of a slot = slot / actDiv
        uint32_t maxTiles = 0;    // with the slots grouped by expert (moe_group.comp): the tiled matmul
    };
    // With `up`, out = silu(w · x) * (up · x) (SwiGLU); needs pairable(w, *up).
    void multiply(PlanContext& ctx, const model::WeightRef& w, Input act, VkDeviceAddress out, uint32_t outStride,
                  uint32_t tokens, bool accumulate, const Expert* expert = nullptr, const model::WeightRef* up = nullptr);
    // From this many tokens on prefill uses the tiled matmul (MoeOp: from this many rows on it
    // groups the pairs by expert for it).
    static constexpr uint32_t kTiledMinTokens = 16;
    // Weights the tiled matmuls (matmul.comp and the matrix-core ones) read: quantized, and not
    // Q2_K (one min per 32 values there; Q2_K's per-16 mins stay on the matvec).
    static bool tiled(model::GgmlType type);
    // Gate and up weights of one quantized type and shape: one dispatch multiplies both.
    static bool pairable(const model::WeightRef& gate, const model::WeightRef& up);
    // MatMulConv (graph::fuse): one token's matvec of `op.weight` whose rows go through the
    // DeltaNet's causal conv and silu in matvec_rows.comp's epilogue (conv_step.glsl, as
    // ssm_conv.comp), each row by the one thread that sums it; the projection is never written.
    static bool convFusable(const model::WeightRef& w);
    // conv_step.glsl's kernels: 2 to 4 taps (throws TierError naming the op otherwise).
    static void checkConvTaps(const graph::Op& op, uint32_t taps);
    void recordConv(PlanContext& ctx, const graph::Op& op, uint32_t taps);
    // A one-token matvec of `w` (with up: a SwiGLU pair) that can wait on the quantize of its
    // input instead of a barrier (matvec_rows_chain: unstaged, one token, a unit of k a thread).
    bool waitable(const model::WeightRef& w, bool up) const;

    // The matvec kernels, for A/B runs: v1 matvec.comp (1..4 rows a workgroup, activations
    // read per thread), v2 matvec_rows.comp (rows in groups of `rows` per TK threads along k,
    // activations staged in shared memory `units` units at a time for a token tile — stage 1 —
    // else read from global memory, stage 0, with `prefetch` units a thread in flight). Float
    // weights always take v1. Spelled "v1", "v2" or "v2:r=R:c=C:wg=W:s=0|1:p=P" (absent: chosen
    // by shape).
    // ZINC_VK_MATVEC, read once per process; v2 unless set (v1 stays for A/B).
    struct Kernel {
        bool v2 = false;
        uint32_t rows = 0, units = 0, threads = 0, prefetch = 0;
        int32_t stage = -1;
        static Kernel parse(std::string_view text);  // throws TierError naming the text
        std::string name() const;
    };
    static Kernel kernelFromEnvironment();
    // matvec.comp's workgroup for rows of k values; moe_topk / moe_combine sum float rows in its
    // order, so their fused router and gate logits are the bits the matvec would write.
    static uint32_t matVecThreads(int64_t k);
    // One matvec dispatch outside a plan's bookkeeping: multiply()'s, and bench --kernels'.
    struct Call {
        const model::WeightRef* w = nullptr;
        const model::WeightRef* up = nullptr;  // SwiGLU pair
        VkDeviceAddress weights = 0, upWeights = 0, act = 0, out = 0, ids = 0;
        uint32_t actStride = 0, outStride = 0, tokens = 1;
        bool accumulate = false;
        uint32_t expertSlots = 0;  // > 0: expert mode, workgroup z = slot, expert id from ids
        uint32_t actDiv = 1;
        VkDeviceAddress waitSite = 0;  // chained after the quantize of this site (PlanContext::Chain)
        uint32_t waitGroups = 0;
        // MatMulConv (one token): the conv's kernel [row][taps] and window [taps - 1][rows].
        VkDeviceAddress convWeights = 0, convWindow = 0;
        uint32_t convTaps = 0;
    };
    void recordCall(Recorder& rec, const Call& call, const Kernel& kernel);
    // matvec_rows.comp's specialization constants for a weight of `type`, k columns and m rows,
    // `tokens` a call (an expert slot counts one), SwiGLU pair or not, Q4_K's 16-byte loads (vec)
    // and 16-byte activation reads (act4), for the integer dot-product build or not (dot4): the
    // variant recordCall creates (and the RADV compile test builds for real shapes).
    static std::vector<uint32_t> rowsSpec(model::GgmlType type, uint32_t k, uint32_t m, uint32_t tokens, bool expert, bool up,
                                          bool vec, bool act4, bool dot4, const Kernel& kernel);
    // The module a rowsSpec runs in: matvec_rows, or matvec_rows_tiles for a token tile with
    // units in flight (stage 0, prefetch > 1); the dot4 build of either where the device has
    // integer dot products.
    static Shader rowsShader(const std::vector<uint32_t>& spec, bool dot4);

private:
    // Many tokens (prefill), quantized weights: the tiled matmul (matmul.comp; on matrix cores
    // dequant_f16.comp + matmul_f16.comp where DeviceCaps::coopmatDequant and the tier has the
    // f16 scratch, else matmul_coopmat.comp).
    void multiplyTiled(PlanContext& ctx, const model::WeightRef& w, Input act, VkDeviceAddress out, uint32_t outStride,
                       uint32_t tokens, bool accumulate, const model::WeightRef* up, const Expert* expert);

    PipelineFactory& pipelines_;
    VkPipeline quantize_;
    Shader matVec_, matMul_;  // matMul_: matmul_coopmat.comp where the device has matrix cores (=old)
    // Where prefill runs in two passes (f16_): the one-pass matrix-core matmul for MoE experts
    // of kOnePassMinPairsPerExpert to F16MatMul::kMinPairsPerExpert pairs each; else matMul_.
    Shader expertOnePass_ = matMul_;
    static constexpr uint32_t kOnePassMinPairsPerExpert = 8;
    std::unique_ptr<F16MatMul> f16_;  // the two-pass matrix-core matmul (DeviceCaps::coopmatDequant)
    Kernel kernel_ = kernelFromEnvironment();
    bool chains_ = false;  // the device has the Vulkan memory model (the chain modules need it)
    void recordQuantize(PlanContext& ctx, QuantizePc pc, uint32_t groupsX, uint32_t rows, VkDeviceAddress out);
};

class MoeOp {
public:
    MoeOp(PipelineFactory& pipelines, MatVecOp& matVec, ElementwiseOp& elementwise);
    void recordRoute(PlanContext& ctx, const graph::Op& op) const;
    // Without `combine` the weighted sum of the expert rows is left to recordSharedAdd.
    void recordExperts(PlanContext& ctx, const graph::Op& op, bool accumulate, bool combine = true) const;
    // graph::fuse's MoeSharedAdd: out += Σ_e w_e · down_e + addend · sigmoid(weight · in), the
    // input gate an F32 row (sharedAddable). The next layer's attn_norm stays a dispatch of its
    // own: run in the same dispatch (one workgroup a token, so that the residual is rewritten in
    // place with no other reading it; the same bits), the pair measured even, the one
    // workgroup's serial reductions and quantization costing what the barrier did (H200, Qwen3.6
    // shape, run 191: 297.0 tok/s fused, 296.8 apart; branch combinenorm, not merged).
    static bool sharedAddable(const graph::Op& op);
    void recordSharedAdd(PlanContext& ctx, const graph::Op& op) const;
    // The most tiles moe_group.comp makes of `pairs` (token, slot) pairs over nExpert experts.
    static uint32_t maxTiles(uint32_t pairs, uint32_t nExpert);

private:
    MatVecOp& matVec_;
    ElementwiseOp& elementwise_;
    VkPipeline topK_, combine_, group_;
};

// The qwen35 hybrid ops: SsmConv, DeltaNet, GatedNorm, SplitGate, SigmoidGate (op_deltanet.cpp).
class HybridOp {
public:
    explicit HybridOp(PipelineFactory& pipelines);
    void record(PlanContext& ctx, const graph::Op& op) const;
    // Chunk scratch floats per value head and chunk (delta_chunk_prep.comp's slot), and the
    // shared memory the chunked shaders need: the tier falls back to the recurrence without it.
    static uint64_t deltaChunkSlotFloats(uint32_t headDim, uint32_t chunk);
    static constexpr uint32_t kDeltaChunkSharedBytes = 4 * (64 * 64 + 4 * 64);
    static constexpr uint32_t kMaxDeltaChunk = 64;

private:
    void recordChunkedDelta(PlanContext& ctx, const graph::Op& op) const;
    VkPipeline conv_, delta_, chunkPrep_, chunkState_, norm_, gate_;
};

// A step over rows of several sequences: the wanted rows of a buffer moved to its first rows
// (gather_rows.comp), where the layer stack ends.
class GatherRowsOp {
public:
    explicit GatherRowsOp(PipelineFactory& pipelines);
    void record(PlanContext& ctx, graph::BufferId buffer, uint32_t wanted) const;

private:
    VkPipeline pipeline_;
};

// Greedy sampling on the GPU (argmax.comp).
class ArgmaxOp {
public:
    explicit ArgmaxOp(PipelineFactory& pipelines);
    void record(PlanContext& ctx, VkDeviceAddress logits, uint32_t n, bool advance) const;
    // A step of rows of several sequences: `rows` logits rows of n from `logits`, row r's
    // argmax into id ring entry r (one workgroup a row); the token state is left as it is.
    void recordRows(PlanContext& ctx, VkDeviceAddress logits, uint32_t n, uint32_t rows) const;

private:
    VkPipeline pipeline_;
};

// Seeded sampling on the GPU (sample.comp): one chain advancing the token state, or a chain a
// wanted row of a step of several sequences.
class SampleOp {
public:
    // What sample.comp reads and writes: the logits row, the token state, the id ring, the
    // sampler state (sampler_state.h) and its scratch (sampleScratchBytes).
    struct Buffers {
        VkDeviceAddress logits, state, ring, sampler, scratch;
    };
    explicit SampleOp(PipelineFactory& pipelines);
    void record(PlanContext& ctx, VkDeviceAddress logits, uint32_t n) const;
    // A step of rows of several sequences: `rows` logits rows of n from `logits`, row r drawn by
    // sampler block r into id ring entry r; the token state and the blocks are left as they are.
    void recordRows(PlanContext& ctx, VkDeviceAddress logits, uint32_t n, uint32_t rows) const;
    // The dispatch alone, for a test that owns the buffers.
    static void record(Recorder& rec, VkPipeline pipeline, const Buffers& b, uint32_t n, uint32_t ringCapacity);

private:
    VkPipeline pipeline_;
};

}  // namespace zinc::vk
