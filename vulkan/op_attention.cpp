// Causal GQA attention over the F16 KV cache: the batch's k and v rows are stored first, then
// every (token, head) pair attends to positions [0, its own] (the last `window` of them on a
// sliding-window layer, whose rows are a ring: graph/kv_layout.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "vulkan/ops.h"
#include "vulkan/vk_error.h"

namespace zinc::vk {
namespace {

struct StorePc {
    VkDeviceAddress k, v, kCache, vCache, state;
    uint32_t kvDim, stride, slots;
};

struct AttendPc {
    VkDeviceAddress q, kCache, vCache, out, state;
    uint32_t nHead, group, headDim, qStride, outStride;
    float scale;
    VkDeviceAddress partials;
    uint32_t nSplits, exactMax;
    float qScale;
    uint32_t window, slots;
    VkDeviceAddress quantOut;  // QUANT only
    uint32_t quantStride;
    uint32_t chainWait;        // attention_chain: (the chained split's ordinal) << 16 | its head blocks
    VkDeviceAddress signal;    // attention_chain: the site a chained matvec after it waits on
};
static_assert(sizeof(AttendPc) <= 128);

struct FusedPc {
    VkDeviceAddress q, k, v, qNorm, kNorm, table, kCache, vCache, state;
    uint32_t nHead, nHeadKv, headDim, ropeDim, neox, qStride, kvStride;
    float eps;
    uint32_t hasNorm;
};

void checkHeadDim(const model::ModelConfig& c) {
    if (c.headDim > 256 || c.headDim % 2 != 0)
        throw runtime::TierError(fmt::format("vulkan tier: head size {} (the attention shaders take even sizes up to 256)",
                                             c.headDim));
}

struct ArgsPc {
    VkDeviceAddress state, args;
    uint32_t nHead, policy, exactMax, tokens, atLeast, windows;
};

// attention_split.comp's push constants: 128 bytes, the least Vulkan guarantees (the head size
// is its specialization constant HD).
struct SplitPc {
    VkDeviceAddress q, kCache, vCache, partials, state;
    VkDeviceAddress k, v, qNorm, kNorm, table;  // FUSED only
    uint32_t nHead, group, kvDim, qStride, nSplits;
    float scale;
    uint32_t exactMax;
    float qScale;
    uint32_t window, slots;
    uint32_t rope;  // FUSED: ropeDim | neox << 16 | hasNorm << 17
    float eps;
};
static_assert(sizeof(SplitPc) == 128);

// One-token steps fold qk_rope.comp into the split kernel (attention_split.comp FUSED) unless
// ZINC_VK_ATTN_FUSE=0 (A/B; read per plan).
bool fuseEnabled() {
    const char* v = std::getenv("ZINC_VK_ATTN_FUSE");
    return !(v && *v == '0');
}

// A chained plan (PlanContext::chain) runs a FUSED one-token split attention and its merge with
// no barrier between them (attention_split_chain, attention_chain) unless ZINC_VK_CHAIN_ATTN=0
// (A/B; read per plan).
bool chainSplitEnabled() {
    const char* v = std::getenv("ZINC_VK_CHAIN_ATTN");
    return !(v && *v == '0');
}

// attention.comp writes its output quantized too (QUANT) unless ZINC_VK_ATTN_QUANT=0 (A/B; read
// per plan).
bool quantEnabled() {
    const char* v = std::getenv("ZINC_VK_ATTN_QUANT");
    return !(v && *v == '0');
}

// Rows of several sequences take QUANT too unless ZINC_VK_ATTN_QUANT_ROWS=0 (A/B; read per plan).
bool quantRowsEnabled() {
    const char* v = std::getenv("ZINC_VK_ATTN_QUANT_ROWS");
    return !(v && *v == '0');
}

}  // namespace

int32_t AttentionOp::flashMinTokens() {
    const char* v = std::getenv("ZINC_VK_FLASH_MIN");
    const long n = v && *v ? std::strtol(v, nullptr, 10) : 0;
    return n >= 2 ? static_cast<int32_t>(n) : 32;
}

AttentionOp::LayerCache AttentionOp::layerCache(const PlanContext& ctx, const graph::Op& op) {
    const graph::KvLayer& l = ctx.mem.kv->layer(op.layer);
    const uint64_t offset = static_cast<uint64_t>(l.firstRow) * 2u * static_cast<uint64_t>(ctx.graph.config->kvDim());
    return {ctx.mem.kCache + offset, ctx.mem.vCache + offset, static_cast<uint32_t>(l.slots), static_cast<uint32_t>(l.window)};
}

AttentionOp::AttentionOp(PipelineFactory& pipelines)
    : pipelines_(pipelines),
      store_(pipelines.get(Shader::KvStore)),
      attend_(pipelines.get(Shader::Attention)),
      args_(pipelines.get(Shader::AttentionArgs)),
      fused_(pipelines.get(Shader::QkRope)) {}

// attention_split.comp's shared memory for `heads` query heads a workgroup: the queries and
// the partial dots, the weights (a vec4 of heads a position), the V partial sums (up to 4
// heads at once) and the reduction scratch, and 3 floats a head.
static uint32_t splitSharedBytes(uint32_t heads) {
    return heads * (1024 + 1024 + 12) + (heads + 3) / 4 * 1024 + std::min(heads, 4u) * 2048 + 512;
}

uint32_t AttentionOp::splitHeads(const model::ModelConfig& c) const {
    const auto group = static_cast<uint32_t>(c.nHead / c.nHeadKv);
    const char* v = std::getenv("ZINC_VK_ATTN_HEADS");  // read per plan: tests set it per tier
    const uint32_t forced = v && *v ? static_cast<uint32_t>(std::strtoul(v, nullptr, 10)) : 0u;
    // Four heads a block by default. H200, tok/s, main's one head a workgroup -> blocks of 4
    // (of 8 where written): 8B decode at depth 8192 175.6 -> 192.7, prefill 8192 774 -> 1,016;
    // 30B-A3B decode at depth 8192 149.9 -> 168.3 (8: 135.5), prefill 8192 700 -> 974; decode at
    // depth 512 costs 0-1 %: 8B 264.2 -> 263.1, 30B-A3B 245.3 -> 242.7 (8: 221.5), Qwen3.6
    // shape 226.4 -> 223.7 (8: 217.0). A block's dot products and weighted sums are done by
    // one workgroup in turn: 8 heads leave short contexts with too few workgroups.
    uint32_t heads = forced ? forced : 4;
    while (heads > 1 && (group % heads != 0 || heads > 8 || splitSharedBytes(heads) > pipelines_.caps().sharedMemoryBytes))
        --heads;
    return std::max(heads, 1u);
}

std::vector<uint32_t> AttentionOp::splitSpec(uint32_t heads, uint32_t headDim, bool oneToken, bool fused) {
    const char* rollEnv = std::getenv("ZINC_VK_ATTN_ROLL");
    const uint32_t roll = oneToken && headDim <= 128 && !(rollEnv && *rollEnv == '0') ? 1u : 0u;
    return {heads, headDim, roll, fused ? 1u : 0u};
}

void AttentionOp::record(PlanContext& ctx, const graph::Op& op, std::optional<ActFormat> quantizeFor) const {
    const auto& c = *ctx.graph.config;
    checkHeadDim(c);
    const uint32_t kvDim = static_cast<uint32_t>(c.kvDim());
    const LayerCache cache = layerCache(ctx, op);
    const StorePc store{ctx.row0(op.k), ctx.row0(op.v), cache.k, cache.v, ctx.mem.state, kvDim, ctx.width(op.k), cache.slots};
    {
        const SubLabel stored(ctx.rec, "kv store");
        ctx.rec.dispatch(store_, store, groupsFor(kvDim / 2, 64), static_cast<uint32_t>(ctx.rows));
    }
    attend(ctx, op, cache, nullptr, quantizeFor);
}

void AttentionOp::recordFused(PlanContext& ctx, const graph::Op& op, const model::WeightRef* qNorm,
                              const model::WeightRef* kNorm, std::optional<ActFormat> quantizeFor) const {
    const auto& c = *ctx.graph.config;
    checkHeadDim(c);
    // Fused only where nothing carries a window (graph::fuse): the rows are one per position.
    const LayerCache cache = layerCache(ctx, op);
    const bool norm = qNorm && kNorm;
    const FusedPc pc{ctx.row0(op.in),
                     ctx.row0(op.k),
                     ctx.row0(op.v),
                     norm ? ctx.weights.address(*qNorm) : 0,
                     norm ? ctx.weights.address(*kNorm) : 0,
                     ctx.mem.ropeTable,
                     cache.k,
                     cache.v,
                     ctx.mem.state,
                     static_cast<uint32_t>(c.nHead),
                     static_cast<uint32_t>(c.nHeadKv),
                     static_cast<uint32_t>(c.headDim),
                     static_cast<uint32_t>(c.ropeDim),
                     c.ropeStyle == model::RopeStyle::Neox ? 1u : 0u,
                     ctx.width(op.in),
                     ctx.width(op.k),
                     c.normEps,
                     norm ? 1u : 0u};
    // A one-token step whose k and v rows are kvDim wide: the split kernel rotates and stores it
    // (attention_split.comp FUSED), one dispatch boundary a layer less; so does a step of
    // decode rows, each in a slot of its own. Not a batch, nor rows of which two share a slot:
    // a row may attend to the key of a row before it in the same step (a prompt's rows),
    // stored by another workgroup of the same dispatch.
    const auto kvDim = static_cast<uint32_t>(c.kvDim());
    if (fusable(ctx) && splitFits(ctx) && ctx.width(op.k) == kvDim && ctx.width(op.v) == kvDim) {
        const RopeStep step{pc.k, pc.v, pc.qNorm, pc.kNorm, pc.table,
                            pc.ropeDim | pc.neox << 16 | pc.hasNorm << 17, pc.eps};
        attend(ctx, op, cache, &step, quantizeFor);
        return;
    }
    {
        const SubLabel rope(ctx.rec, "qk_rope");
        ctx.rec.dispatch(fused_, pc, static_cast<uint32_t>(c.nHead + 2 * c.nHeadKv), static_cast<uint32_t>(ctx.rows));
    }
    attend(ctx, op, cache, nullptr, quantizeFor);
}

uint32_t AttentionOp::flashSharedBytes(uint32_t headDim, uint32_t subgroup) {
    // flash_attention.comp's arrays: K and V rows of 32 keys (HD / 8 + 1 uvec4 a row), each
    // subgroup's 16 rows of scores (36 floats) and of P (5 uvec4), alpha, the lanes' partial
    // sums and the positions. The emulation's are the same.
    const uint32_t rows = 16u * (128u / subgroup);
    return 2u * 32u * (headDim / 8u + 1u) * 16u + rows * 36u * 4u + rows * 5u * 16u + rows * 4u + 128u * 4u + rows * 4u;
}

void AttentionOp::recordFlash(Recorder& rec, PipelineFactory& pipelines, const FlashArgs& a) {
    // flash_attention.comp's push constants: FlashArgs without nHead and headDim (the grid's y
    // and a specialization constant).
    struct FlashPc {
        VkDeviceAddress q, kCache, vCache, out, state;
        uint32_t nTok, group, kvDim, qStride, outStride;
        float scale, qScale;
    };
    const FlashPc pc{a.q, a.kCache, a.vCache, a.out, a.state, a.nTok, a.group, a.kvDim, a.qStride, a.outStride, a.scale, a.qScale};
    // 16 query rows a subgroup, 128 threads a workgroup; the emulation's subgroups are 32 threads.
    const bool emulated = pipelines.caps().cooperativeMatrixEmulated;
    const uint32_t sg = flashSubgroup(pipelines.caps()), rowsPerGroup = 16u * (128u / sg);
    rec.dispatch(pipelines.get(emulated ? Shader::FlashAttentionEmulated : Shader::FlashAttention, {a.headDim, sg}), pc,
                 groupsFor(a.nTok, rowsPerGroup), a.nHead);
}

bool AttentionOp::flashFits(const PlanContext& ctx, const LayerCache& cache) const {
    const auto& c = *ctx.graph.config;
    return pipelines_.caps().flashAttention && ctx.nTokens >= flashMinTokens() && !ctx.sequenceRows && ctx.firstRow == 0 &&
           cache.window == 0 && c.headDim % 16 == 0 && c.headDim <= 128 && c.kvDim() % 8 == 0 &&
           flashSharedBytes(static_cast<uint32_t>(c.headDim), flashSubgroup(pipelines_.caps())) <=
               pipelines_.caps().sharedMemoryBytes;
}

uint32_t AttentionOp::splitCount(const PlanContext& ctx) {
    return ctx.nTokens == 1 || ctx.sequenceRows ? ctx.mem.attnSplits : ctx.mem.attnBatchSplits;
}

uint32_t AttentionOp::splitPolicy(const PlanContext& ctx, VkPipeline split, uint32_t headBlocks) const {
    const uint32_t base = splitCount(ctx);
    if (ctx.nTokens != 1 || ctx.sequenceRows || ctx.mem.attnStepSplits <= base || headBlocks == 0 || headBlocks > 0x7F) return base;
    // A one-token step may take more than splitCount's splits, up to what the GPU keeps resident
    // (vulkan/residency.h): a long context's token waits for its busiest unit, and
    // split_policy.glsl picks the count per token. H200, 8B at depth 8192 (129 chunks of 64
    // keys, 8 head blocks, 2 workgroups of this kernel an SM): 32 splits 268.2 / 268.5 tok/s, 33
    // (264 workgroups, one wave) 271.6 / 272.5, 34 (two waves) 249.2, 48 248.3. Tests stand in
    // for a GPU with ZINC_VK_ATTN_UNITS=U:K (U units holding K split workgroups each; read per
    // plan); ZINC_VK_ATTN_UNITS=0, or ZINC_VK_ATTN_SPLITS alone, holds a step to splitCount (A/B).
    uint32_t units = pipelines_.caps().computeUnits, resident = 0;
    const char* fake = std::getenv("ZINC_VK_ATTN_UNITS");
    const char* fixed = std::getenv("ZINC_VK_ATTN_SPLITS");
    if (fake && *fake) {
        char* end = nullptr;
        units = static_cast<uint32_t>(std::strtoul(fake, &end, 10));
        resident = *end == ':' ? units * static_cast<uint32_t>(std::strtoul(end + 1, nullptr, 10)) : 0;
    } else if (fixed && *fixed) {
        return base;
    } else if (units > 0) {
        resident = pipelines_.residentWorkgroups(split, 256);  // attention_split.comp's workgroup
    }
    if (units == 0 || units > 0x1FF || base > 0xFF) return base;
    const uint32_t most = std::clamp(resident / headBlocks, base, std::min<uint32_t>(ctx.mem.attnStepSplits, 0xFF));
    return most <= base ? base : most | base << 8 | headBlocks << 16 | units << 23;
}

bool AttentionOp::fusable(const PlanContext& ctx) {
    return (ctx.sequenceRows ? ctx.rowsOwnSlots : ctx.nTokens == 1) && fuseEnabled();
}

bool AttentionOp::splitFits(const PlanContext& ctx) const {
    return ctx.mem.attnPartials != 0 && ctx.mem.attnArgs != VK_NULL_HANDLE && ctx.graph.config->headDim % 8 == 0 &&
           static_cast<uint64_t>(ctx.nTokens) * splitCount(ctx) <= ctx.mem.attnPartialSlots;
}

void AttentionOp::attend(PlanContext& ctx, const graph::Op& op, const LayerCache& cache, const RopeStep* step,
                         std::optional<ActFormat> quantizeFor) const {
    const VkDeviceAddress kCache = cache.k, vCache = cache.v;
    const auto& c = *ctx.graph.config;
    const uint32_t kvDim = static_cast<uint32_t>(c.kvDim());
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.headDim));
    // gemma3 scales q before attention (llama.cpp), so q's F16 rounding sees q * scale.
    const float qScale = c.preScaleQuery ? scale : 1.0f, scoreScale = c.preScaleQuery ? 1.0f : scale;
    const auto nHead = static_cast<uint32_t>(c.nHead), group = static_cast<uint32_t>(c.nHead / c.nHeadKv);
    const auto headDim = static_cast<uint32_t>(c.headDim);
    if (flashFits(ctx, cache)) {
        recordFlash(ctx.rec, pipelines_,
                    {ctx.row0(op.in), kCache, vCache, ctx.row0(op.out), ctx.mem.state, static_cast<uint32_t>(ctx.rows), nHead, group,
                     headDim, kvDim, ctx.width(op.in), ctx.width(op.out), scoreScale, qScale});
        ctx.acts.invalidate(op.out);
        return;
    }
    // Decode, prefill and rows of several sequences alike: a (token, head) past attnExactMax keys
    // (kExactAttentionMax, 16, unless ZINC_VK_ATTN_EXACT asks) is split along the KV length in
    // fp32, so no long attention is one F16 chain per (token, head) of its whole length. A
    // prefill batch computes what decoding it token by token would (up to the order of fp32 sums where its fewer splits
    // part the keys otherwise: a batch already fills the GPU with (token, head) pairs); a row of
    // several sequences splits as it would alone, so its bits do not depend on the rows beside
    // it. A sliding-window layer splits its window (the split count follows the whole KV length,
    // so workgroups past the window's chunks return at once).
    const bool split = splitFits(ctx);
    const uint32_t exactMax = split ? ctx.mem.attnExactMax : UINT32_MAX;
    // The merge waits on the split in the kernel (vulkan/plan_context.h kSplitSiteOffset): a
    // FUSED step, where split 0 runs at every length, so an exact step waits on it too.
    const bool chains = ctx.chain && pipelines_.caps().chainedAttention;
    const bool chainSplit = chains && split && step && ctx.nTokens == 1 && chainSplitEnabled();
    const uint32_t heads = split ? splitHeads(c) : 1;
    // Rolling loads (attention_split.comp ROLL) for a one-token step: on the H200 8B decode at
    // depth 8192 193.6 -> 203.3 tok/s, at 512 262.7 -> 265.8; their registers (95 against 69)
    // cost a prefill batch's many workgroups occupancy (8B prefill 8192 1,017 -> 978), so
    // batches and rows keep the plain loads (the same bits); so do heads wider than 128,
    // whose rolled keys and values take twice the registers (the Qwen3.6 shape, 256-wide
    // attention heads, decoded 2-3 % slower rolled). ZINC_VK_ATTN_ROLL=0: none (A/B).
    const VkPipeline splitPipeline = split ? pipelines_.get(chainSplit ? Shader::AttentionSplitChain : Shader::AttentionSplit,
                                                            splitSpec(heads, headDim, ctx.nTokens == 1, step != nullptr))
                                           : VK_NULL_HANDLE;
    // Every split layer of a plan shares attention_args.comp's dispatch size: the first one's policy.
    if (split && ctx.attnSplitPolicy == 0) ctx.attnSplitPolicy = splitPolicy(ctx, splitPipeline, nHead / heads);
    const uint32_t nSplits = split ? ctx.attnSplitPolicy : splitCount(ctx);  // the kernels' split policy word
    if (split) {
        const SubLabel splitLabel(ctx.rec, "split");  // attention.comp's merge keeps the op's label
        const RopeStep none{};
        const RopeStep& r = step ? *step : none;
        const SplitPc pc{ctx.row0(op.in), kCache,  vCache,  ctx.mem.attnPartials, ctx.mem.state,
                         r.k,             r.v,     r.qNorm, r.kNorm,              r.table,
                         nHead,           group,   kvDim,   ctx.width(op.in),     nSplits,
                         scoreScale,      exactMax, qScale, cache.window,         cache.slots,
                         r.rope,          r.eps};
        if (!ctx.attnArgsRecorded) {  // the split count follows the current KV length: once per plan
            // A one-token step is rotated and stored by split 0 at any length where the FUSED
            // kernel runs (layers without it return at once).
            const uint32_t atLeast = fusable(ctx) ? 1u : 0u;
            const auto& layers = ctx.mem.kv->layers;
            const bool windows = std::any_of(layers.begin(), layers.end(), [](const graph::KvLayer& l) { return l.window > 0; });
            const ArgsPc args{ctx.mem.state, ctx.mem.attnArgsAddress, nHead / heads, nSplits, exactMax,
                              static_cast<uint32_t>(ctx.nTokens), atLeast, windows ? 1u : 0u};
            ctx.rec.dispatch(args_, args, 1);
            ctx.rec.indirectArgsBarrier();
            ctx.attnArgsRecorded = true;
        }
        ctx.rec.dispatchIndirect(splitPipeline, pc, ctx.mem.attnArgs, 0);
    }
    AttendPc attend{ctx.row0(op.in),
                    kCache,
                    vCache,
                    ctx.row0(op.out),
                    ctx.mem.state,
                    static_cast<uint32_t>(c.nHead),
                    static_cast<uint32_t>(c.nHead / c.nHeadKv),
                    static_cast<uint32_t>(c.headDim),
                    ctx.width(op.in),
                    ctx.width(op.out),
                    scoreScale,
                    ctx.mem.attnPartials,
                    nSplits,
                    exactMax,
                    qScale,
                    cache.window,
                    cache.slots,
                    0,
                    0,
                    chainSplit ? (++ctx.chain->splitsChained) << 16 | nHead / heads : 0u,
                    0};
    // The output quantized here too for the next matvec where a 256-value group is 2 or 4 whole
    // heads (workgroups of 256 or 512 threads, 128 a head): its Quantize step then finds the
    // activation cache's slot filled and records nothing. H200 (run 117, decode tok/s with and
    // without): 8B 306.2 / 299.5, 0.6B 774.5 / 742.9, 30B-A3B 287.9 / 285.2, 8B at depth 8192
    // 261.2 / 256.3. Rows of several sequences too: 8 sequences of 8B 1,231 -> 1,241 tok/s with it
    // alone, 1,246-1,252 beside FUSED decode rows (run 206; run 118, before the rows' ids were
    // picked on the device, had not told them apart). ZINC_VK_ATTN_QUANT_ROWS=0: rows without
    // it (A/B).
    const bool eightBit = quantizeFor && graph::isEightBit(*quantizeFor);
    const bool quant = eightBit && quantEnabled() && (!ctx.sequenceRows || quantRowsEnabled()) && (headDim == 64 || headDim == 128) &&
                       (nHead * headDim) % 256 == 0 && ctx.width(op.out) == nHead * headDim;
    ctx.acts.invalidate(op.out);
    if (chainSplit) ctx.rec.overlapNext();
    if (!quant) {
        ctx.rec.dispatch(chainSplit ? pipelines_.get(Shader::AttentionChain) : attend_, attend, nHead,
                         static_cast<uint32_t>(ctx.rows));
        return;
    }
    // A chained matvec after it (the next op's, attn_output: GraphRecorder) waits on the site
    // it raises.
    const auto slot = static_cast<size_t>(*quantizeFor);
    const uint32_t merged = 256 / headDim, k = nHead * headDim, groups = nHead / merged;
    attend.quantOut = ctx.mem.actSlots[slot];
    attend.quantStride = MatVecOp::rowWords(*quantizeFor, k);
    attend.signal = chains ? ctx.takeSite() : 0;
    const bool chained = chainSplit || attend.signal;
    const VkPipeline pipeline = pipelines_.get(chained ? Shader::AttentionChain : Shader::Attention,
                                               {128 * merged, merged, 1 + static_cast<uint32_t>(*quantizeFor)});
    ctx.rec.dispatch(pipeline, attend, groups, static_cast<uint32_t>(ctx.rows));
    if (attend.signal) ctx.raised(attend.signal, groups * static_cast<uint32_t>(ctx.rows), attend.quantOut);
    ctx.acts.slots[slot] = {op.out, ctx.firstRow, ctx.rows};
}

}  // namespace zinc::vk
