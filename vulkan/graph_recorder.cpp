#include "vulkan/graph_recorder.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "graph/batched_step.h"

namespace zinc::vk {
namespace {

using graph::OpKind;

// Where gate and up become one SwiGLU pair matvec (GateUpSwiGlu, where MatVecOp::pairable);
// elsewhere they are two matvecs side by side and the SwiGLU runs in the down projection's
// quantize (SwiGluQuantize): the same dispatches behind a barrier, the same bits.
enum class Pairing { Always, BelowRows, Never };

// BelowRows' bound: 8,192 (GraphRecorder::loweredFor says why); ZINC_VK_PAIR_BELOW_ROWS=N sets
// another for A/B (read when a tier lowers its graph; tests compare both sides).
int64_t pairBelowRows() {
    const char* v = std::getenv("ZINC_VK_PAIR_BELOW_ROWS");
    return v && *v ? std::strtoll(v, nullptr, 10) : 8192;
}

// MatMulConv (the DeltaNet conv in attn_qkv's matvec) in one-token steps: on unless
// ZINC_VK_CONV_FUSE=0 (read when a tier lowers its graph; tests compare both). A prefill batch
// keeps ssm_conv.comp, which walks each channel's tokens in order.
bool convFuseEnabled() {
    const char* v = std::getenv("ZINC_VK_CONV_FUSE");
    return !(v && *v == '0');
}

graph::Lowered lowerForVulkan(const graph::Graph& graph, Pairing pairing, bool oneToken) {
    const int64_t belowRows = pairBelowRows();
    const bool fuseConv = oneToken && convFuseEnabled();
    // The MoE op quantizes the expert rows into its own scratch (DeviceLayout::expertActs).
    graph::Lowered lowered = graph::lower(graph, [](const model::WeightRef& w) { return MatVecOp::formatFor(w.type); });
    graph::fuse(lowered, [pairing, belowRows, fuseConv](const graph::LoweredOp& l) {
        switch (l.op.kind) {
            case OpKind::MatMulConv: return fuseConv && MatVecOp::convFusable(*l.op.weight);
            case OpKind::GateUpSwiGlu:
                return MatVecOp::pairable(*l.op.weight, *l.op.upWeight) &&
                       (pairing == Pairing::Always || (pairing == Pairing::BelowRows && l.op.weight->rows < belowRows));
            case OpKind::GatedNormQuantize:
            case OpKind::SigmoidGateQuantize: return MatVecOp::gateQuantizable(l.op);
            case OpKind::MoeSharedAdd: return MoeOp::sharedAddable(l.op);
            default: return true;
        }
    });
    return lowered;
}

bool isPlainMatVec(const graph::LoweredOp& l) {
    const OpKind k = l.op.kind;
    return (k == OpKind::MatMul || k == OpKind::GateUpSwiGlu || k == OpKind::MatMulConv) && l.op.bias == nullptr && l.count > 0;
}

// Whether next's input is ready without a quantize dispatch: F32 weights read the buffer itself,
// others the copy the activation cache holds for these rows.
bool inputReady(const PlanContext& ctx, const graph::LoweredOp& next) {
    const ActFormat mode = MatVecOp::formatFor(next.op.weight->type);
    if (mode == ActFormat::F32) return true;
    const auto& e = ctx.acts.slots[static_cast<size_t>(mode)];
    return e.buffer == next.op.in && e.firstRow == ctx.firstRow && e.rows == ctx.rows;
}

// Chained matvecs (PlanContext::Chain; tiers.md "chained matvecs"): on unless ZINC_VK_CHAIN=0.
// Read per plan: tests compare both.
bool chainEnabled() {
    const char* v = std::getenv("ZINC_VK_CHAIN");
    return !(v && *v == '0');
}

// The largest matrix a chained matvec multiplies: 4 MiB, ZINC_VK_CHAIN_BYTES=N for A/B. A chained
// matvec hides its launch behind the quantize before it, but its first weight loads then compete
// with the quantize for the memory system, and the release and acquire cost the quantize and
// every workgroup of it a little: small matrices gain, large ones lose. H200, Q4_K_M files,
// bench -p 512 -n 128 -r 2 --gpu-greedy, twice (runs 159-160): Qwen3-0.6B (every matrix up to
// 1.8 MiB) 781.3 / 781.9 tok/s barriers, 812.9 / 813.0 chained; chaining matrices of up to 4,096
// rows, Qwen3-8B (q 9.0 MiB, ffn_down 27 MiB) 313.9 -> 301.0 / 300.7, Qwen3-30B-A3B 290.1 ->
// 281.3 / 281.1; every one-token matvec, 8B 284.8, 0.6B 804.9. The Qwen3.6-35B-A3B shape (run
// 192, twice): 296.8 / 297.1 at 4 MiB, 287.2 / 287.2 at 5 MiB, 285.2 / 285.2 at 10 and 20 MiB.
uint64_t chainMaxBytes() {
    const char* v = std::getenv("ZINC_VK_CHAIN_BYTES");
    return v && *v ? std::strtoull(v, nullptr, 10) : uint64_t{4} << 20;
}

// The same for a matvec waiting on attention's merge (attn_output): any size, ZINC_VK_CHAIN_ATTN_BYTES=N
// for A/B. The merge is a few workgroups, so a large matrix's first weight loads do not delay it
// as they delay a quantize. H200, Q4_K_M files, bench -p 512 -n 128 -r 2 --gpu-greedy, twice
// (run 167): Qwen3-8B (attn_output 9.0 MiB) 316.7 / 316.5 tok/s up to 4 MiB, 318.6 / 318.9
// chained; Qwen3-30B-A3B (4.5 MiB) 292.8, 294.9.
uint64_t chainAfterAttentionMaxBytes() {
    const char* v = std::getenv("ZINC_VK_CHAIN_ATTN_BYTES");
    return v && *v ? std::strtoull(v, nullptr, 10) : UINT64_MAX;
}

bool isAttention(OpKind k) { return k == OpKind::Attention || k == OpKind::QkRopeAttention; }

// A quantize raised the context's site and no barrier was recorded since: whatever overlaps
// the dispatches after it may run beside it.
bool siteOpen(const PlanContext& ctx) {
    return ctx.chain && ctx.chain->site && ctx.rec.barriersEmitted() == ctx.chain->barriersAt;
}

bool sharesBuffer(const std::vector<graph::BufferId>& a, const std::vector<graph::BufferId>& b) {
    for (graph::BufferId x : a)
        if (std::find(b.begin(), b.end(), x) != b.end()) return true;
    return false;
}

}  // namespace

// Two projections in a row (a DeltaNet layer's gate, alpha, beta and qkv, the last with its conv
// where MatMulConv; a gated attention layer's q, k and v; k and v): prev recorded one dispatch,
// its matvec (so no scratch of its own is in flight), next starts with its matvec (its input
// ready), reads its input (or the quantized copy prev read too) and writes its own buffer, so it
// needs no barrier after prev.
bool GraphRecorder::independent(const PlanContext& ctx, const graph::LoweredOp* prev, uint32_t prevDispatches,
                                const graph::LoweredOp& next) {
    if (!prev || prevDispatches != 1 || !isPlainMatVec(*prev) || !isPlainMatVec(next) || !inputReady(ctx, next)) return false;
    const graph::Op &a = prev->op, &b = next.op;
    return b.out != a.out && b.out != a.in && a.out != b.in;
}

GraphRecorder::GraphRecorder(PipelineFactory& pipelines, const graph::Graph& graph, bool integerDotProduct)
    : graph_(graph),
      lowered_(lowerForVulkan(graph, Pairing::Always, false)),
      decodeLowered_(lowerForVulkan(graph, Pairing::BelowRows, true)),
      tileLowered_(lowerForVulkan(graph, Pairing::Never, false)),
      crossingLayerEnd_(graph::buffersCrossingLayerEnd(graph)),
      embed_(pipelines),
      norm_(pipelines),
      rope_(pipelines),
      attention_(pipelines),
      elementwise_(pipelines),
      matVec_(pipelines, integerDotProduct),
      moe_(pipelines, matVec_, elementwise_),
      argmax_(pipelines),
      sample_(pipelines),
      hybrid_(pipelines),
      gather_(pipelines) {}

int32_t GraphRecorder::record(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights, int32_t nTokens,
                              bool allRows, const OpHook& afterOps) {
    ActivationCache acts;
    PlanContext ctx{rec, graph_, mem, weights, acts, nTokens, 0, nTokens};
    uint32_t dispatched = rec.dispatches();
    Chain chain;
    PlanContext::Chain sites;
    const std::vector<graph::LoweredOp>& ops = loweredFor(nTokens, false).ops;
    if (nTokens == 1 && !afterOps && mem.chainBuffer != VK_NULL_HANDLE && chainEnabled()) {
        uint32_t sitesUsed = 0;  // one an op a matvec may wait on raises
        for (size_t i = 0; i + 1 < ops.size(); ++i)
            if (raisesSite(ops, i)) {
                ++sitesUsed;
                if (isAttention(ops[i].op.kind)) ++i;  // one for it and its Quantize step
            }
        sites.capacity = std::min(sitesUsed, mem.chainSites);
        ctx.chain = &sites;
        // The sites start at zero in every run of the plan, the split attention's too.
        const bool splitSite = mem.attnArgs != VK_NULL_HANDLE;
        if (sites.capacity > 0 || splitSite)
            rec.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                        VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
        if (sites.capacity > 0) rec.fill(mem.chainBuffer, 0, uint64_t{kChainSiteBytes} * sites.capacity, 0);
        if (splitSite) rec.fill(mem.attnArgs, kSplitSiteOffset, kChainSiteBytes, 0);
        if (sites.capacity > 0 || splitSite)
            rec.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                        VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    }
    const bool lanes = !afterOps && nTokens == 1 && lanesEnabled();  // timed plans time each op alone
    for (size_t i = 0; i < ops.size(); ++i) {
        const graph::LoweredOp& l = ops[i];
        const bool cut = l.lastRowOnly && !allRows;
        ctx.firstRow = cut ? nTokens - 1 : 0;
        ctx.rows = cut ? 1 : nTokens;
        if (const size_t end = lanes ? sharedExpertLaneEnd(ctx, ops, i) : 0) {
            recordSharedExpertLanes(ctx, ops, i, end);
            i = end - 1;
            chain = {};
            if (ctx.chain) ctx.chain->site = 0;
            continue;
        }
        ctx.signalNext = ctx.chain && i + 1 < ops.size() && raisesSite(ops, i);
        recordInChain(ctx, chain, l, !afterOps);  // instrumented plans time each op alone
        ctx.signalNext = false;
        if (l.count == 0) continue;  // a Quantize step: counted with the op it feeds
        if (afterOps) afterOps(ctx, l, rec.dispatches() - dispatched);
        dispatched = rec.dispatches();
    }
    attentionSplits_ = ctx.attnSplitPolicy & 0xFFu;  // split_policy.glsl's stride
    return ctx.firstRow;
}

// Gate and up (Pairing): paired in a prefill batch (its tiled matmuls pair them); in a
// one-token step paired below 8,192 rows (pairBelowRows): H200, bench -p 512 -n 128 -r 2 --gpu-greedy,
// twice (run 147), Qwen3-8B Q4_K_M (12,288 rows) 308.8 / 308.7 tok/s paired, 312.9 / 313.2 apart;
// Qwen3-0.6B (3,072) 776.5 / 776.2 paired, 765.8 / 765.2 apart. In a step of 2 or more
// sequences' rows always apart: the pair (in a staged tile 2 weight units and 2 x 8 sums a
// thread) took longer than the two side by side. Qwen3-8B, bench --sequences N -p 64 -n 128 -r 2,
// twice (run 146): 8 sequences 957.5 / 970.1 paired, 1,025.2 / 1,042.9 apart; 4: 658.7 / 659.3,
// 684.2 / 695.3; 3: 559.2 / 561.4, 601.3 / 608.7; Qwen3-0.6B 8 sequences 2,338.8 -> 2,368.8 (run
// 147). Two rows (a tile run as one token does) too (run 153, twice): Qwen3-8B 440.9 / 446.7
// paired, 452.8 / 458.4 apart; Qwen3-0.6B 966.8 / 960.5, 984.3 / 980.6.
const graph::Lowered& GraphRecorder::loweredFor(int32_t tokens, bool sequenceRows) const {
    // A hybrid's one-row step keeps ssm_conv.comp, which finds the row's slot (MatMulConv's
    // window is slot 0's).
    const bool recurrent = graph::keepsRecurrentState(graph_);
    if (sequenceRows) return tokens >= 2 || recurrent ? tileLowered_ : decodeLowered_;
    return tokens == 1 ? decodeLowered_ : lowered_;
}

bool GraphRecorder::lanesEnabled() {
    const char* v = std::getenv("ZINC_VK_MOE_LANES");  // read per plan: tests compare both
    return !(v && *v == '0');
}

// qwen35moe's FFN lowered for a decode step: MoeRoute, MoeExperts (the routed chain: router and
// top k, the expert pair, its quantize, the expert downs), then the shared expert's ops, then
// MoeSharedAdd (graph::fuse). The shared expert's ops read the FFN input or what they wrote
// themselves and write only buffers of their own, so the two chains may run side by side. The
// index of the MoeSharedAdd where ops[at] starts such a window; 0 where it does not.
size_t GraphRecorder::sharedExpertLaneEnd(const PlanContext& ctx, const std::vector<graph::LoweredOp>& ops, size_t at) const {
    if (ctx.mem.laneSlots == decltype(ctx.mem.laneSlots){} || at + 2 >= ops.size() || ops[at].op.kind != OpKind::MoeRoute ||
        ops[at + 1].op.kind != OpKind::MoeExperts)
        return 0;
    const graph::Op &route = ops[at].op, &experts = ops[at + 1].op;
    const graph::BufferId input = experts.in;
    if (route.in != input) return 0;
    std::vector<graph::BufferId> routed = graph::readsOf(route);
    for (const graph::Op* op : {&route, &experts})
        for (graph::BufferId id : graph::writesOf(*op)) routed.push_back(id);
    for (graph::BufferId id : graph::readsOf(experts)) routed.push_back(id);
    const auto in = [](const std::vector<graph::BufferId>& ids, graph::BufferId id) {
        return std::find(ids.begin(), ids.end(), id) != ids.end();
    };
    std::vector<graph::BufferId> own;  // what the shared expert's ops wrote so far
    for (size_t j = at + 2; j < ops.size(); ++j) {
        const graph::LoweredOp& l = ops[j];
        if (l.op.kind == OpKind::MoeSharedAdd) return j > at + 2 && !l.lastRowOnly ? j : 0;
        const OpKind k = l.op.kind;
        const bool plain = k == OpKind::MatMul || k == OpKind::GateUpSwiGlu || k == OpKind::SwiGlu ||
                           k == OpKind::SwiGluQuantize || k == OpKind::Quantize;
        if (!plain || l.op.bias || l.lastRowOnly) return 0;
        for (graph::BufferId id : graph::readsOf(l.op))
            if (id != input && !in(own, id)) return 0;
        for (graph::BufferId id : graph::writesOf(l.op)) {
            if (id == input || in(routed, id)) return 0;
            own.push_back(id);
        }
    }
    return 0;
}

// The routed chain as lane 0 and the shared expert's as lane 1 (Recorder::beginLane): a step
// then costs the longer chain's barriers. The shared expert quantizes the FFN input again into
// its own slots (DeviceLayout::laneSlots: one dispatch more, beside the router), so that no
// quantize of one lane writes a slot the other reads; the arithmetic is the plain plan's.
void GraphRecorder::recordSharedExpertLanes(PlanContext& ctx, const std::vector<graph::LoweredOp>& ops, size_t at, size_t end) {
    Recorder& rec = ctx.rec;
    rec.beginLane(0);
    for (size_t j = at; j < at + 2; ++j) {
        rec.setLabel(ops[j].op.label);
        recordOp(ctx, ops[j]);
    }
    DeviceLayout laneMem = ctx.mem;
    laneMem.actSlots = ctx.mem.laneSlots;
    ActivationCache laneActs;
    PlanContext lane{rec, ctx.graph, laneMem, ctx.weights, laneActs, ctx.nTokens, ctx.firstRow, ctx.rows};
    rec.beginLane(1);
    Chain chain;
    for (size_t j = at + 2; j < end; ++j) {
        recordInChain(lane, chain, ops[j], true);
        for (graph::BufferId id : graph::writesOf(ops[j].op)) ctx.acts.invalidate(id);
    }
    rec.endLanes();
}

void GraphRecorder::recordRows(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights, int32_t nRows,
                               int32_t wanted, bool ownSlots) {
    ActivationCache acts;
    PlanContext ctx{rec, graph_, mem, weights, acts, nRows, 0, nRows};
    ctx.sequenceRows = true;
    ctx.rowsOwnSlots = ownSlots;
    bool pastLayers = false;
    Chain chain;
    for (const graph::LoweredOp& l : loweredFor(nRows, true).ops) {
        if (l.lastRowOnly && !pastLayers) {
            pastLayers = true;
            if (wanted == 0) return;
            rec.setLabel("gather_rows");
            for (graph::BufferId id : crossingLayerEnd_) gather_.record(ctx, id, static_cast<uint32_t>(wanted));
            acts.invalidateAll();
            ctx.rows = wanted;
            chain = {};
        }
        recordInChain(ctx, chain, l, true);
    }
}

void GraphRecorder::recordInChain(PlanContext& ctx, Chain& chain, const graph::LoweredOp& l, bool overlap) {
    ctx.rec.setLabel(l.op.label);
    const uint32_t before = ctx.rec.dispatches();
    bool overlapPrev = overlap && independent(ctx, chain.prev, chain.dispatches, l);
    ctx.waitSite = chainedSite(ctx, l, overlapPrev);
    // A quantize still running beside the matvecs before l: l overlaps them only if it waits too.
    if (overlapPrev && !ctx.waitSite && siteOpen(ctx)) overlapPrev = false;
    if (overlapPrev || ctx.waitSite) ctx.rec.overlapNext();
    const VkDeviceAddress site = ctx.chain ? ctx.chain->site : 0;
    recordOp(ctx, l);
    ctx.waitSite = 0;
    if (ctx.chain && ctx.chain->site != site) ctx.chain->producer = &l.op;
    chain = {&l, ctx.rec.dispatches() - before};
}

// Whether ops[i] raises a site a one-token matvec may wait on (chainedSite checks the rest when
// it records): a quantize of the matvec's input, or attention whose output the next op (its
// Quantize step: nothing to record where attention.comp quantized) holds for the matvec after
// it. Where attention raises one, its Quantize step does not.
bool GraphRecorder::raisesSite(const std::vector<graph::LoweredOp>& ops, size_t i) const {
    if (i + 1 >= ops.size()) return false;
    const graph::LoweredOp &l = ops[i], &next = ops[i + 1];
    const OpKind q = l.op.kind;
    if (isAttention(q))
        return next.op.kind == OpKind::Quantize && next.op.in == l.op.out && i + 2 < ops.size() &&
               ops[i + 2].op.in == next.op.in && chainable(ops[i + 2], chainAfterAttentionMaxBytes());
    if (q != OpKind::NormQuantize && q != OpKind::Quantize && q != OpKind::SwiGluQuantize && q != OpKind::GatedNormQuantize &&
        q != OpKind::SigmoidGateQuantize)
        return false;
    if (next.op.in != l.op.out && !(q == OpKind::Quantize && next.op.in == l.op.in)) return false;
    return chainable(next, chainMaxBytes());
}

// A plain one-token matvec (no bias) of a matrix of up to chainMaxBytes that matvec_rows_chain
// can run.
bool GraphRecorder::chainable(const graph::LoweredOp& l, uint64_t maxBytes) const {
    const OpKind k = l.op.kind;
    if ((k != OpKind::MatMul && k != OpKind::MatMulAdd && k != OpKind::GateUpSwiGlu) || l.op.bias || l.count == 0) return false;
    const model::WeightRef& w = *l.op.weight;
    return matVec_.waitable(w, k == OpKind::GateUpSwiGlu) && w.rowBytes * static_cast<uint64_t>(w.rows) <= maxBytes;
}

// The site l waits on instead of a barrier (0: none). l is a one-token matvec reading the
// activations the last quantize (or attention's merge) wrote, with no barrier recorded since,
// and either that dispatch was the last or l overlaps matvecs that wait on it; it writes
// nothing the producer's op reads or writes.
VkDeviceAddress GraphRecorder::chainedSite(const PlanContext& ctx, const graph::LoweredOp& l, bool overlapPrev) const {
    const PlanContext::Chain* c = ctx.chain;
    if (!siteOpen(ctx) || !c->producer) return 0;
    if (!overlapPrev && ctx.rec.dispatches() != c->dispatchesAfter) return 0;
    const uint64_t maxBytes = isAttention(c->producer->kind) ? chainAfterAttentionMaxBytes() : chainMaxBytes();
    if (!chainable(l, maxBytes) || !inputReady(ctx, l)) return 0;
    if (ctx.mem.actSlots[static_cast<size_t>(MatVecOp::formatFor(l.op.weight->type))] != c->out) return 0;
    std::vector<graph::BufferId> touched = graph::readsOf(*c->producer);
    for (graph::BufferId id : graph::writesOf(*c->producer)) touched.push_back(id);
    if (sharesBuffer(graph::writesOf(l.op), touched)) return 0;
    return c->site;
}

// The format the lowered op after l quantizes l's output into, if that op is its Quantize step.
std::optional<graph::ActFormat> GraphRecorder::quantizedNext(const graph::LoweredOp& l) const {
    const std::vector<graph::LoweredOp>* holder = &lowered_.ops;
    for (const graph::Lowered* lowered : {&decodeLowered_, &tileLowered_})
        if (&l >= lowered->ops.data() && &l < lowered->ops.data() + lowered->ops.size()) holder = &lowered->ops;
    const std::vector<graph::LoweredOp>& ops = *holder;
    const auto at = static_cast<size_t>(&l - ops.data()) + 1;
    if (at >= ops.size()) return std::nullopt;
    const graph::LoweredOp& next = ops[at];
    if (next.op.kind != OpKind::Quantize || next.op.in != l.op.out) return std::nullopt;
    return next.format;
}

void GraphRecorder::recordOp(PlanContext& ctx, const graph::LoweredOp& l) {
    const graph::Op& op = l.op;
    const auto rows = static_cast<uint32_t>(ctx.rows);
    switch (op.kind) {
        case OpKind::Embed: return embed_.record(ctx, op);
        case OpKind::RmsNorm:
        case OpKind::HeadNorm: return norm_.record(ctx, op);
        case OpKind::NormQuantize: return matVec_.recordNormQuantized(ctx, op, l.format);
        case OpKind::Rope: return rope_.record(ctx, op);
        case OpKind::Attention: return attention_.record(ctx, op, quantizedNext(l));
        case OpKind::QkRopeAttention:
            attention_.recordFused(ctx, op, l.qNorm, l.kNorm, quantizedNext(l));
            ctx.acts.invalidate(op.in);
            ctx.acts.invalidate(op.k);
            return;
        case OpKind::Add:
        case OpKind::SwiGlu: return elementwise_.record(ctx, op);
        case OpKind::SwiGluQuantize: {
            // silu(gate) * up straight into the down projection's quantized input
            const uint32_t k = ctx.width(op.in);
            matVec_.quantize(ctx, l.format, ctx.row0(op.in), ctx.row0(op.up), k, k, rows);
            ctx.acts.slots[static_cast<size_t>(l.format)] = {op.out, ctx.firstRow, ctx.rows};
            return;
        }
        case OpKind::Quantize: matVec_.quantizeInput(ctx, l.format, op.in); return;
        case OpKind::MatMul:
            matVec_.record(ctx, op);
            if (op.bias) elementwise_.recordBias(ctx, op);
            return;
        case OpKind::GateUpSwiGlu:
            // one matvec writing silu(gate · x) * (up · x) to gate's buffer
            matVec_.multiply(ctx, *op.weight, matVec_.input(ctx, *op.weight, op.in), ctx.row0(op.out), ctx.width(op.out), rows,
                             false, nullptr, op.upWeight);
            ctx.acts.invalidate(op.out);
            return;
        case OpKind::MatMulConv: return matVec_.recordConv(ctx, op, static_cast<uint32_t>(graph_.config->hybrid.convKernel));
        case OpKind::MatMulAdd:
            matVec_.multiply(ctx, *op.weight, matVec_.input(ctx, *op.weight, op.in), ctx.row0(op.out), ctx.width(op.out), rows,
                             true);
            ctx.acts.invalidate(op.out);
            return;
        case OpKind::MoeRoute: return moe_.recordRoute(ctx, op);
        case OpKind::MoeFfn: return moe_.recordExperts(ctx, op, false);
        case OpKind::MoeFfnAdd: return moe_.recordExperts(ctx, op, true);
        case OpKind::MoeExperts: return moe_.recordExperts(ctx, op, false, false);
        case OpKind::MoeSharedAdd: return moe_.recordSharedAdd(ctx, op);
        case OpKind::GatedNormQuantize:
        case OpKind::SigmoidGateQuantize: return matVec_.recordGateQuantized(ctx, op, l.format);
        case OpKind::SsmConv:
        case OpKind::DeltaNet:
        case OpKind::GatedNorm:
        case OpKind::SplitGate:
        case OpKind::SigmoidGate: return hybrid_.record(ctx, op);
    }
}

void GraphRecorder::recordArgmax(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights,
                                 VkDeviceAddress logits, bool advance) {
    ActivationCache acts;
    PlanContext ctx{rec, graph_, mem, weights, acts, 1, 0, 1};
    rec.setLabel("argmax");
    argmax_.record(ctx, logits, static_cast<uint32_t>(graph_.config->nVocab), advance);
}

// A pick over `rows` logits rows after a step of rows (argmax_.recordRows, sample_.recordRows).
template <typename RowsOp>
void GraphRecorder::recordRowsPick(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights, VkDeviceAddress logits,
                                   int32_t rows, const char* label, const RowsOp& op) const {
    ActivationCache acts;
    PlanContext ctx{rec, graph_, mem, weights, acts, rows, 0, rows};
    rec.setLabel(label);
    op.recordRows(ctx, logits, static_cast<uint32_t>(graph_.config->nVocab), static_cast<uint32_t>(rows));
}

void GraphRecorder::recordArgmaxRows(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights,
                                     VkDeviceAddress logits, int32_t rows) {
    recordRowsPick(rec, mem, weights, logits, rows, "argmax", argmax_);
}

void GraphRecorder::recordSample(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights,
                                 VkDeviceAddress logits) {
    ActivationCache acts;
    PlanContext ctx{rec, graph_, mem, weights, acts, 1, 0, 1};
    rec.setLabel("sample");
    sample_.record(ctx, logits, static_cast<uint32_t>(graph_.config->nVocab));
}

void GraphRecorder::recordSampleRows(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights,
                                     VkDeviceAddress logits, int32_t rows) {
    recordRowsPick(rec, mem, weights, logits, rows, "sample", sample_);
}

}  // namespace zinc::vk
