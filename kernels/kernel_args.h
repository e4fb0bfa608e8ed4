#pragma once
// The kernarg segment of every kernel in kernels/cl/, as the host writes it: one struct per
// argument list, fields in declaration order at their natural alignment (what clang lays
// out; tests/kernels checks every offset against the code objects' metadata). Pointers are
// device addresses. Grid and workgroup per kernel are documented in its .cl file and in
// kernelLaunchShape().
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace zinc::kernels {

// The token-state block kernels read per-token values from (graph::TokenState's layout):
// int32 position (of the first token of the batch), nTokens, kvLength.
struct TokenStateLayout {
    int32_t position;
    int32_t nTokens;
    int32_t kvLength;
};

// embed_f32, embed_f16, embed_q8_0, embed_q4_k, embed_q5_k, embed_q6_k
struct EmbedArgs {
    uint64_t table, tokens, out;
    uint64_t rowBytes;
    int32_t cols, outStride;
    float scale = 1.0f;  // rows times this (gemma3: sqrt(d))
};
// rms_norm
struct RmsNormArgs {
    uint64_t in, weight, out;
    int32_t n;
    float eps;
    int32_t inStride, outStride;
};
// head_norm (in place)
struct HeadNormArgs {
    uint64_t x, weight;
    int32_t heads, headDim;
    float eps;
    int32_t stride;
};
// rope_norm, rope_neox (in place; position from state). Scaling as model::RopeParams;
// freqFactors (rope_freqs, ropeDim / 2 floats) may be 0.
struct RopeArgs {
    uint64_t x, state;
    int32_t heads, headDim, ropeDim;
    float thetaScale;
    int32_t stride;
    uint64_t freqFactors;
    float freqScale, extFactor, mscale, corrLow, corrHigh;
    uint64_t rows = 0;  // a step over rows of several sequences: per row {position, first KV row of its slot}
};
// quantize_q8_0, quantize_q8_1, quantize_q8_k (outStride in bytes)
struct QuantizeArgs {
    uint64_t in, out;
    int32_t n, inStride;
    uint64_t outStride;
    uint64_t up = 0;  // not 0: quantize swiglu(in, up), `up` laid out as `in` (graph::fuse's SwiGluQuantize)
    // The op computed on the way in and written to normOut too (kernels/cl/quantize.cl):
    // normWeight alone rms_norm (NormQuantize), with gate gated_norm over heads of headDim
    // (GatedNormQuantize), gate alone in * sigmoid(gate) (SigmoidGateQuantize).
    uint64_t normWeight = 0, normOut = 0;
    int32_t normOutStride = 0;
    float eps = 0.0f;
    uint64_t gate = 0;
    int32_t gateStride = 0, headDim = 0, gatePerToken = 0;
};
// quantize_f16, quantize_bf16 (outStride in halves)
struct ConvertF16Args {
    uint64_t in, out;
    int32_t n, inStride, outStride;
};
// matvec_T for T in f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k,
// iq4_nl, iq4_xs
struct MatVecArgs {
    uint64_t w, act, y;
    uint64_t rowBytes, actStride;
    int32_t k, rows, yStride;
    int32_t accumulate = 0;  // 1: y += the product (graph::fuse's MatMulAdd)
};
// matvec_<type>_expert
struct MatVecExpertArgs {
    uint64_t w, act, y, ids;
    uint64_t rowBytes, actStride, actSlotStride, expertBytes;
    int32_t k, rows, yStride, ySlotStride, idsStride;
};
// matvec_<type>_gate_up (graph::fuse's GateUpSwiGlu: gate and up of one type and shape)
struct MatVecGateUpArgs {
    uint64_t w, up, act, y;
    uint64_t rowBytes, actStride;
    int32_t k, rows, yStride;
};
// matvec_<type>_expert_gate_up (the experts' gate and up of one type inside the MoE op)
struct MatVecExpertGateUpArgs {
    uint64_t w, up, act, y, ids;
    uint64_t rowBytes, actStride, actSlotStride, expertBytes;
    int32_t k, rows, yStride, ySlotStride, idsStride;
};
// matvec_<type>_conv (graph::fuse's MatMulConv: the product's rows are the conv's channels)
struct MatVecConvArgs {
    uint64_t w, act;
    uint64_t rowBytes, actStride;
    int32_t k, rows;             // rows: the conv's channels
    uint64_t window, convW, out, state;
    int32_t taps, outStride;
    uint64_t rowsBlock = 0;      // as SsmConvArgs::rows (decode rows in slots of their own)
    int32_t slotFloats = 0, kvRows = 1;
};
// kv_store
struct KvStoreArgs {
    uint64_t k, v, kCache, vCache, state;
    int32_t kvDim, inStride;
    int32_t slots;  // the layer's cache rows: position p in row p % slots (graph/kv_layout.h)
    uint64_t rows = 0;  // as RopeArgs::rows: row t at rows[2t] % slots past KV row rows[2t + 1]
};
// qk_rope (graph::fuse's QkRopeAttention before attention: kernels/cl/rope.cl)
struct QkRopeArgs {
    uint64_t q, k, v, qNorm, kNorm;  // qNorm / kNorm 0: no QK-norm
    float eps;
    uint64_t kCache, vCache, state;
    int32_t heads, kvHeads, headDim, ropeDim;
    float thetaScale;
    int32_t qStride, kStride, vStride;
    float freqScale, extFactor, mscale, corrLow, corrHigh;
    int32_t neox, slots;
    uint64_t rows = 0;  // as RopeArgs::rows
};
// attention (split over the KV cache: kernels/cl/attention.cl)
struct AttentionArgs {
    uint64_t q, kCache, vCache, out, state;
    uint64_t partial;  // splits > 1: per (token, head, split) m, l and headDim sums (attentionPartialFloats)
    int32_t nHead, nHeadKv, headDim, kvStride, qStride, outStride;
    float scale;
    int32_t window = 0;    // > 0: keys at distance >= window are masked (sliding-window layers)
    int32_t preScale = 0;  // 1: q times scale before its F16 rounding (gemma3), scores unscaled
    int32_t slots = 0;     // the layer's cache rows: position p in row p % slots
    int32_t splits = 1;    // workgroups along z per (token, head group); 1: no attention_combine
    uint64_t rows = 0;     // as RopeArgs::rows: token t at position rows[2t] over its slot's rows
};
// attention_combine
struct AttentionCombineArgs {
    uint64_t partial, out, state;
    int32_t nHead, headDim, outStride, window, splits;
    uint64_t rows = 0;  // as AttentionArgs::rows: each row's own length
};
// Splits of a decode token's attention for a layer of `slots` cache rows: one per 128 rows,
// at most 32 (attention_combine's limit). The kernels size the chunks from the current length
// (chunks of a multiple of 64 positions), so a short context uses one split whatever this is.
inline constexpr int32_t kAttentionMaxSplits = 32;
inline constexpr int32_t attentionSplits(int32_t slots) {
    const int32_t s = (slots + 127) / 128;
    return s < 1 ? 1 : s > kAttentionMaxSplits ? kAttentionMaxSplits : s;
}
// Floats of attention's partial results for `tokens` tokens.
inline constexpr uint64_t attentionPartialFloats(int32_t tokens, int32_t nHead, int32_t headDim, int32_t splits) {
    return uint64_t(tokens) * uint64_t(nHead) * uint64_t(splits) * uint64_t(headDim + 2);
}
// swiglu, geglu
struct SwiGluArgs {
    uint64_t gate, up, out;
    int32_t n, stride;
};
// add
struct AddArgs {
    uint64_t a, b, out;
    int32_t n, stride;
};
// add_bias (in place)
struct AddBiasArgs {
    uint64_t x, bias;
    int32_t n, stride;
};
// moe_topk
struct MoeTopkArgs {
    uint64_t logits, ids, weights;
    int32_t nExpert, nUsed, logitsStride, idsStride, normalize;
};
// moe_combine
struct MoeCombineArgs {
    uint64_t down, ids, weights, out;
    int32_t n, nUsed, downTokenStride, downSlotStride, idsStride, outStride;
    int32_t accumulate = 0;  // 1: out += the combination (graph::fuse's MoeFfnAdd)
};
// moe_shared_add (graph::fuse's MoeSharedAdd)
struct MoeSharedAddArgs {
    uint64_t down, ids, weights, shared, gate, x, out;
    int32_t n, nUsed, downTokenStride, downSlotStride, idsStride, sharedStride, xStride, k, outStride;
};
// argmax
struct ArgmaxArgs {
    uint64_t logits, out;
    int32_t n, stride;
};

// sample_token (one group of 256; kfd/tier/sampler_block.h lays out `chain`)
struct SampleArgs {
    uint64_t logits, scratch, state, tokens, ring, chain;
    int32_t n, ringCapacity;
};
inline constexpr uint32_t kSampleWorkgroup = 256;

// The qwen35 hybrid ops (cl/deltanet.cl). `state`: the token-state block (position 0 clears the
// recurrent state first). ssm_conv
struct SsmConvArgs {
    uint64_t x, window, w, out, state;
    int32_t channels, taps, tokens, inStride, outStride;
    uint64_t rows = 0;       // as AttentionArgs::rows: row t steps the copy of slot rows[2t + 1] / kvRows
    int32_t slotFloats = 0;  // one slot's copy of the recurrent state (graph::MemoryPlan::stateStride / 4)
    int32_t kvRows = 1;      // KV cache rows a slot
    int32_t rowOfGroup = 0;  // 1: every row in a slot of its own, workgroup y takes row y alone
};
// delta_net (S: the layer's per-head state matrices, updated in place)
struct DeltaNetArgs {
    uint64_t qkv, alpha, beta, out, S, a, dtBias, state;
    int32_t d, keyHeads, tokens, inStride, gateStride, outStride;
    float eps, qScale;
    uint64_t rows = 0;  // as SsmConvArgs
    int32_t slotFloats = 0, kvRows = 1, rowOfGroup = 0;
};
// gated_norm
struct GatedNormArgs {
    uint64_t x, z, w, out;
    int32_t n;
    float eps;
    int32_t inStride, gateStride, outStride;
};
// split_gate
struct SplitGateArgs {
    uint64_t in, out, gate;
    int32_t headDim, inStride, outStride, gateStride;
};
// sigmoid_gate
struct SigmoidGateArgs {
    uint64_t x, gate, out;
    int32_t n, stride, gateStride, perToken;
};
// gather_rows (in place): rows wanted[0..count) of x to rows 0..count-1
struct GatherRowsArgs {
    uint64_t x, wanted;
    int32_t width, stride, count;
};
// copy_words
struct CopyWordsArgs {
    uint64_t src, dst;
    int32_t n;
};

// Workgroup size of each kernel (its reqd_work_group_size) and how many items one group
// covers along x: groups.x = ceil(extent / perGroupX), where extent is cols / n / rows / heads
// as the kernel's comment says; y = tokens (or rows), z = expert slots for *_expert, splits for attention.
struct LaunchShape {
    uint32_t workgroup;
    uint32_t perGroupX;
};
inline constexpr LaunchShape kEmbedShape{256, 256}, kRmsNormShape{256, 0}, kHeadNormShape{64, 1}, kRopeShape{64, 1}, kQkRopeShape{64, 1},
    kQuantizeQ8_0Shape{256, 256}, kQuantizeQ8_KShape{256, 256}, kConvertF16Shape{256, 256}, kMatVecShape{256, 32}, kMatVecGateUpShape{256, 16},
    kKvStoreShape{256, 256}, kAttentionShape{128, 1}, kAttentionCombineShape{128, 1}, kElementwiseShape{256, 256}, kMoeTopkShape{64, 0},
    kMoeCombineShape{256, 256}, kMoeSharedAddShape{256, 256}, kArgmaxShape{256, 0};
inline constexpr LaunchShape kSsmConvShape{64, 64}, kDeltaNetShape{128, 1}, kGatedNormShape{128, 1}, kSplitGateShape{64, 1},
    kSigmoidGateShape{256, 256}, kCopyWordsShape{256, 256}, kGatherRowsShape{256, 256};

}  // namespace zinc::kernels
