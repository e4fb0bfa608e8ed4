// Lowered op -> kernels (graph/lower.h), in the same order and with the same activation formats
// as the cpu tier (kernels/README.md "Numerics"): the lowering's Quantize steps quantize the
// inputs of quantized weights into the format their matvec multiplies against, once per buffer
// and format (q/k/v and gate/up share one quantization), then the matvec of the weight type runs; the MoE chain is the one
// tests/kernels/pocl_ops_test.cpp holds to the cpu tier (MoeExpertsMatchCpuOp).
#include "kfd/tier/graph_recorder.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "graph/batched_step.h"
#include "kernels/kernel_args.h"
#include "kfd/tier/hybrid_ops.h"
#include "runtime/tier.h"

namespace zinc::kfd {
namespace {

using graph::OpKind;
using runtime::TierError;
namespace ka = zinc::kernels;

const char* typeSuffix(const model::WeightRef& w, const char* what) {
    using model::GgmlType;
    switch (w.type) {
        case GgmlType::F32: return "f32";
        case GgmlType::F16: return "f16";
        case GgmlType::Q8_0: return "q8_0";
        case GgmlType::Q4_K: return "q4_k";
        case GgmlType::Q5_K: return "q5_k";
        case GgmlType::Q6_K: return "q6_k";
        case GgmlType::BF16: return "bf16";
        case GgmlType::Q4_0: return "q4_0";
        case GgmlType::Q4_1: return "q4_1";
        case GgmlType::Q5_0: return "q5_0";
        case GgmlType::Q5_1: return "q5_1";
        case GgmlType::Q2_K: return "q2_k";
        case GgmlType::Q3_K: return "q3_k";
        case GgmlType::IQ4_NL: return "iq4_nl";
        case GgmlType::IQ4_XS: return "iq4_xs";
        default:
            throw TierError(fmt::format("kfd tier: {} {} has type {}, which no kfd kernel reads", what, w.name,
                                        model::ggmlTypeName(w.type)));
    }
}

// Gate and up matrices one matvec_<type>_gate_up (or _expert_gate_up) sums side by side.
bool oneTypeAndShape(const model::WeightRef& gate, const model::WeightRef& up) {
    return gate.type == up.type && gate.rows == up.rows && gate.cols == up.cols;
}

// A quantized copy of activations: where it is and how far apart its rows are.
struct Act {
    uint64_t address = 0;
    uint64_t rowBytes = 0;
};

// The up rows of a SwiGluQuantize: the rows quantized are swiglu(x, up).
struct Up {
    uint64_t address = 0;
    graph::BufferId id = graph::kNoBuffer;
};
// The op a quantize kernel runs on the way in (kernels/cl/quantize.cl): graph::fuse's
// NormQuantize (weight), GatedNormQuantize (weight, gate, headDim) or SigmoidGateQuantize (gate),
// and the output row it writes too.
struct Norm {
    uint64_t weight = 0, out = 0;
    int32_t outStride = 0;
    float eps = 0.0f;
    graph::BufferId id = graph::kNoBuffer;
    uint64_t gate = 0;
    int32_t gateStride = 0, headDim = 0, gatePerToken = 0;
    graph::BufferId gateId = graph::kNoBuffer;
    bool any() const { return weight || gate; }
};

class Recorder {
public:
    // `fuse`: also the fusions inside an op's own dispatches (the experts' SwiGLU in the
    // quantization of the down projection's input), as graph::fuse's where the plan takes them.
    Recorder(PlanBuilder& b, const graph::Lowered& l, const TierMemory& m, const PlanShape& shape, bool fuse)
        : b_(b), l_(l), g_(*l.graph), c_(*g_.config), m_(m), shape_(shape), rows_(shape.nTokens), fuse_(fuse) {}

    int32_t record(const AfterOp& afterOp) {
        bool pastLayers = false;
        for (const graph::LoweredOp& l : l_.ops) {
            if (shape_.sequenceRows()) {
                if (l.lastRowOnly && !pastLayers) {
                    pastLayers = true;
                    if (shape_.wantedRows == 0) break;
                    gatherWantedRows();
                }
                firstRow_ = 0;
                rows_ = pastLayers ? shape_.wantedRows : shape_.nTokens;
            } else {
                const bool cut = l.lastRowOnly && !shape_.allRows;
                firstRow_ = cut ? shape_.nTokens - 1 : 0;
                rows_ = cut ? 1 : shape_.nTokens;
            }
            recordOp(l);
            // Each graph op the lowered op carries out, in order (a fused op's first ones own its
            // dispatches in the op marks; the later ones none).
            if (afterOp)
                for (size_t i = l.first; i < l.first + l.count; ++i) afterOp(b_, i, g_.ops[i]);
        }
        if (shape_.argmax) {
            const auto n = static_cast<int32_t>(c_.nVocab);
            b_.launch("argmax", ka::ArgmaxArgs{row(g_.logits, shape_.nTokens - 1), m_.tokens(), n, n}, {1, 1, 1},
                      {g_.logits}, {l_.tokens}, "argmax");
        }
        return firstRow_;
    }

private:
    uint64_t row(graph::BufferId id, int32_t token) const { return m_.at(id, token); }
    // The rows block of a step over several sequences ({position, first KV row} per row), or 0.
    uint64_t rowsBlock() const { return shape_.sequenceRows() ? m_.rows() : 0; }

    // Where the layer stack ends in a step over several sequences: the wanted rows (listed after
    // the rows' pairs in the rows block) of each buffer alive there move to rows 0..wanted-1.
    void gatherWantedRows() {
        const uint64_t wanted = m_.rows() + 8 * uint64_t(shape_.nTokens);
        for (graph::BufferId id : graph::buffersCrossingLayerEnd(g_)) {
            const int32_t w = width(id);
            b_.launch("gather_rows", ka::GatherRowsArgs{row(id, 0), wanted, w, w, shape_.wantedRows},
                      {ceilDiv(w, ka::kGatherRowsShape.perGroupX), 1, 1}, {id}, {id}, "gather_rows");
        }
    }
    uint64_t row0(graph::BufferId id) const { return m_.at(id, firstRow_); }
    int32_t width(graph::BufferId id) const { return static_cast<int32_t>(g_.buffer(id).width); }
    uint32_t rows() const { return static_cast<uint32_t>(rows_); }

    void recordOp(const graph::LoweredOp& l) {
        const graph::Op& op = l.op;
        switch (op.kind) {
            case OpKind::Embed: return embed(op);
            case OpKind::RmsNorm: return rmsNorm(op);
            case OpKind::NormQuantize: {
                // rms_norm inside the quantize kernel of the projections' input format
                requireF32(op, *op.weight);
                const int32_t k = width(op.in);
                quantize(l.format, row0(op.in), op.in, k, k, rows(), op.label,
                         {}, Norm{m_.weight(*op.weight), row0(op.out), width(op.out), c_.normEps, op.out});
                return;
            }
            case OpKind::GatedNormQuantize:
            case OpKind::SigmoidGateQuantize: {
                // gated_norm or sigmoid_gate inside the quantize kernel of the next projection's input
                const bool norm = op.kind == OpKind::GatedNormQuantize;
                if (norm) requireF32(op, *op.weight);
                const int32_t k = width(op.in);
                Norm gated{norm ? m_.weight(*op.weight) : 0, row0(op.out), width(op.out), c_.normEps, op.out};
                gated.gate = row0(op.gate);
                gated.gateStride = width(op.gate);
                gated.headDim = norm ? int32_t(op.weight->cols) : 0;
                gated.gatePerToken = !norm && width(op.gate) == 1 ? 1 : 0;
                gated.gateId = op.gate;
                if (norm && k % gated.headDim)
                    throw TierError(fmt::format("kfd tier: op {}: heads of {} do not fill rows of {}", op.label, gated.headDim, k));
                quantize(l.format, row0(op.in), op.in, k, k, rows(), op.label, {}, gated);
                return;
            }
            case OpKind::HeadNorm: return headNorm(op);
            case OpKind::Rope: return rope(op);
            case OpKind::Attention: return attention(l);
            case OpKind::QkRopeAttention: return qkRopeAttention(l);
            case OpKind::Quantize: {
                const int32_t k = width(op.in);
                quantize(l.format, row0(op.in), op.in, k, k, rows(), op.label + ".quantize");
                return;
            }
            case OpKind::MatMul: return matMul(l, false);
            case OpKind::SwiGlu: return elementwise(op, op.gelu ? "geglu" : "swiglu");
            case OpKind::Add: return elementwise(op, "add");
            case OpKind::MoeRoute: return moeRoute(l);
            case OpKind::MoeFfn: return moeFfn(l, false);
            case OpKind::MoeExperts: return moeFfn(l, false, false);
            case OpKind::MoeSharedAdd: return moeSharedAdd(op);
            case OpKind::SsmConv:
            case OpKind::DeltaNet:
            case OpKind::GatedNorm:
            case OpKind::SplitGate:
            case OpKind::SigmoidGate: return recordHybridOp(b_, g_, m_, op, {firstRow_, rows(), rowsBlock(), shape_.rowsOwnSlots});  // hybrid_ops.h
            case OpKind::MatMulAdd: return matMul(l, true);
            case OpKind::MoeFfnAdd: return moeFfn(l, true);
            case OpKind::SwiGluQuantize: {
                // silu(gate) * up straight into the down projection's quantized input
                const int32_t k = width(op.in);
                if (width(op.up) != k) throw TierError(fmt::format("kfd tier: op {}: gate and up rows differ in width", op.label));
                quantize(l.format, row0(op.in), op.in, k, k, rows(), op.label + ".quantize", Up{row0(op.up), op.up});
                return;
            }
            case OpKind::MatMulConv: return matMulConv(l);
            case OpKind::GateUpSwiGlu: return gateUp(l);
        }
        throw TierError(fmt::format("kfd tier: op {} has kind {}, which the recorder has no kernels for", op.label,
                                    graph::opKindName(op.kind)));
    }

    void embed(const graph::Op& op) {
        const auto& w = *op.weight;
        const std::string kernel = fmt::format("embed_{}", typeSuffix(w, "embedding"));
        b_.launch(kernel, ka::EmbedArgs{m_.weight(w), m_.tokens(), row0(op.out), w.rowBytes, int32_t(w.cols), width(op.out), op.scale},
                  {ceilDiv(w.cols, 256), rows(), 1}, {l_.tokens}, {op.out}, op.label);
    }

    void requireF32(const graph::Op& op, const model::WeightRef& w) const {
        if (w.type != model::GgmlType::F32)
            throw TierError(fmt::format("kfd tier: op {}: norm weight {} is {}, the norm kernels read F32", op.label, w.name,
                                        model::ggmlTypeName(w.type)));
    }

    void rmsNorm(const graph::Op& op) {
        requireF32(op, *op.weight);
        b_.launch("rms_norm",
                  ka::RmsNormArgs{row0(op.in), m_.weight(*op.weight), row0(op.out), width(op.in), c_.normEps, width(op.in), width(op.out)},
                  {1, rows(), 1}, {op.in}, {op.out}, op.label);
    }

    void headNorm(const graph::Op& op) {
        requireF32(op, *op.weight);
        if (op.out != op.in && op.out != graph::kNoBuffer)
            throw TierError(fmt::format("kfd tier: op {}: head_norm works in place", op.label));
        b_.launch("head_norm", ka::HeadNormArgs{row0(op.in), m_.weight(*op.weight), op.heads, c_.headDim, c_.normEps, width(op.in)},
                  {uint32_t(op.heads), rows(), 1}, {op.in}, {op.in}, op.label);
    }

    void rope(const graph::Op& op) {
        const model::RopeParams p = op.window > 0 ? c_.ropeSwa() : c_.rope();  // sliding layers: their own base
        const char* kernel = c_.ropeStyle == model::RopeStyle::Neox ? "rope_neox" : "rope_norm";
        const uint64_t factors = op.weight ? m_.weight(*op.weight) : 0;  // rope_freqs
        b_.launch(kernel, ka::RopeArgs{row0(op.in), m_.state(), op.heads, c_.headDim, c_.ropeDim, p.thetaScale, width(op.in),
                                       factors, p.freqScale, p.extFactor, p.mscale, p.corrLow, p.corrHigh, rowsBlock()},
                  {uint32_t(op.heads), rows(), 1}, {op.in}, {op.in}, op.label);
    }

    // QkRopeAttention: the QK-norms, RoPE of q and k and the KV store in one qk_rope dispatch,
    // then attention as below.
    void qkRopeAttention(const graph::LoweredOp& l) {
        const graph::Op& op = l.op;
        checkAttention(op);
        if (l.qNorm) requireF32(op, *l.qNorm);
        if (l.kNorm) requireF32(op, *l.kNorm);
        const model::RopeParams p = c_.rope();  // the fused op has no sliding window (graph::fuse)
        const int32_t slots = m_.kvLayout().layer(op.layer).slots;
        b_.launch("qk_rope",
                  ka::QkRopeArgs{row0(op.in), row0(op.k), row0(op.v), l.qNorm ? m_.weight(*l.qNorm) : 0, l.kNorm ? m_.weight(*l.kNorm) : 0,
                                 c_.normEps, m_.kCache(op.layer), m_.vCache(op.layer), m_.state(), c_.nHead, c_.nHeadKv, c_.headDim,
                                 c_.ropeDim, p.thetaScale, width(op.in), width(op.k), width(op.v), p.freqScale, p.extFactor, p.mscale,
                                 p.corrLow, p.corrHigh, c_.ropeStyle == model::RopeStyle::Neox ? 1 : 0, slots, rowsBlock()},
                  {uint32_t(c_.nHead + c_.nHeadKv), rows(), 1}, {op.in, op.k, op.v}, {op.in, op.k, l.kvCache}, op.label + ".qk_rope");
        attend(l);
    }

    void checkAttention(const graph::Op& op) const {
        if (c_.headDim > 256) throw TierError(fmt::format("kfd tier: op {}: head size {} > 256", op.label, c_.headDim));
        if (c_.nHeadKv <= 0 || c_.nHead % c_.nHeadKv)
            throw TierError(fmt::format("kfd tier: op {}: {} query heads do not share {} kv heads evenly", op.label, c_.nHead, c_.nHeadKv));
        if (width(op.k) != width(op.v))
            throw TierError(fmt::format("kfd tier: op {}: k and v rows differ in width", op.label));
    }

    void attention(const graph::LoweredOp& l) {
        const graph::Op& op = l.op;
        checkAttention(op);
        const int32_t kvDim = c_.kvDim();
        const int32_t slots = m_.kvLayout().layer(op.layer).slots;  // a ring on sliding-window layers
        b_.launch("kv_store",
                  ka::KvStoreArgs{row0(op.k), row0(op.v), m_.kCache(op.layer), m_.vCache(op.layer), m_.state(), kvDim, width(op.k), slots,
                                  rowsBlock()},
                  {ceilDiv(kvDim, 256), rows(), 1}, {op.k, op.v}, {l.kvCache}, op.label + ".kv_store");
        attend(l);
    }

    // Attention over the KV cache, its rows stored.
    void attend(const graph::LoweredOp& l) {
        const graph::Op& op = l.op;
        const int32_t kvDim = c_.kvDim();
        const uint64_t kCache = m_.kCache(op.layer), vCache = m_.vCache(op.layer);
        const int32_t slots = m_.kvLayout().layer(op.layer).slots;
        const float scale = 1.0f / std::sqrt(static_cast<float>(c_.headDim));
        // A decode token's attention splits over the KV cache (kernels/cl/attention.cl): a
        // workgroup per (kv head, split) reads each K/V row once for its query heads, then
        // attention_combine merges the splits. Prefill rows have parallelism enough: one split.
        // Rows of several sequences split as each would alone (each row's chunks follow its own
        // length), so a row's bits do not depend on the rows beside it; a step of more rows than
        // the partials hold runs one split.
        const bool split = shape_.sequenceRows() ? rows() <= uint32_t(m_.attentionPartialRows()) : rows() == 1;
        const int32_t splits = split ? std::min(ka::attentionSplits(slots), m_.attentionSplits()) : 1;
        const int32_t perKv = c_.nHead / c_.nHeadKv, groups = c_.nHeadKv * int32_t(ceilDiv(perKv, 8));
        const graph::BufferId partials = attentionPartialsId();
        ka::AttentionArgs args{row0(op.in), kCache, vCache, row0(op.out), m_.state(), m_.attentionPartials(), c_.nHead, c_.nHeadKv,
                               c_.headDim, kvDim, width(op.in), width(op.out), scale, op.window, c_.preScaleQuery ? 1 : 0, slots, splits,
                               rowsBlock()};
        if (splits == 1) {
            b_.launch("attention", args, {uint32_t(groups), rows(), 1}, {op.in, l.kvCache}, {op.out}, op.label);
            return;
        }
        b_.launch("attention", args, {uint32_t(groups), rows(), uint32_t(splits)}, {op.in, l.kvCache}, {partials}, op.label);
        b_.launch("attention_combine",
                  ka::AttentionCombineArgs{m_.attentionPartials(), row0(op.out), m_.state(), c_.nHead, c_.headDim, width(op.out),
                                           op.window, splits, rowsBlock()},
                  {uint32_t(c_.nHead), rows(), 1}, {partials}, {op.out}, op.label + ".combine");
    }

    // The attention partials buffer (TierMemory::attentionPartials) is scratch of this tier
    // only: an id past the lowered graph's buffers, for barrier placement.
    graph::BufferId attentionPartialsId() const { return static_cast<graph::BufferId>(l_.buffers.size()); }
    // TierMemory::expertRowsAct, likewise.
    graph::BufferId expertRowsId() const { return static_cast<graph::BufferId>(l_.buffers.size() + 1); }

    // `n` rows of k floats (stride floats apart) at `x` into the format's buffer (`expertRows`:
    // into TierMemory::expertRowsAct).
    Act quantize(ActFormat f, uint64_t x, graph::BufferId source, int32_t k, int32_t stride, uint32_t n, const std::string& label,
                 Up up = {}, Norm norm = {}, bool expertRows = false) {
        const uint64_t out = expertRows ? m_.expertRowsAct() : m_.actSlot(f), rowBytes = actRowBytes(f, k);
        const graph::BufferId slot = expertRows ? expertRowsId() : l_.actBuffer[size_t(f)];
        if ((up.address || norm.any()) && !graph::isEightBit(f))
            throw TierError(fmt::format("kfd tier: op {}: no fused quantize kernel for {}", label, graph::actFormatName(f)));
        auto launchQuantize = [&](const char* kernel, uint32_t groupsX) {
            const ka::QuantizeArgs args{x, out, k, stride, rowBytes, up.address, norm.weight, norm.out, norm.outStride, norm.eps,
                                        norm.gate, norm.gateStride, norm.headDim, norm.gatePerToken};
            b_.launch(kernel, args, {groupsX, n, 1}, {source, up.id, norm.gateId}, {slot, norm.id}, label);
        };
        switch (f) {
            case ActFormat::F16:
                b_.launch("quantize_f16", ka::ConvertF16Args{x, out, k, stride, k}, {ceilDiv(k, 256), n, 1}, {source}, {slot}, label);
                break;
            case ActFormat::Q8_0:
                if (k % 32) throw TierError(fmt::format("kfd tier: op {}: {} inputs are not whole Q8_0 blocks", label, k));
                launchQuantize("quantize_q8_0", ceilDiv(k, 256));
                break;
            case ActFormat::Q8_K:
                if (k % 256) throw TierError(fmt::format("kfd tier: op {}: {} inputs are not whole Q8_K blocks", label, k));
                launchQuantize("quantize_q8_k", uint32_t(k / 256));
                break;
            case ActFormat::Q8_1:
                if (k % 32) throw TierError(fmt::format("kfd tier: op {}: {} inputs are not whole Q8_1 blocks", label, k));
                launchQuantize("quantize_q8_1", ceilDiv(k, 256));
                break;
            case ActFormat::BF16:
                b_.launch("quantize_bf16", ka::ConvertF16Args{x, out, k, stride, k}, {ceilDiv(k, 256), n, 1}, {source}, {slot}, label);
                break;
            case ActFormat::F32: return {x, uint64_t(stride) * 4};
        }
        return {out, rowBytes};
    }

    // The input weight `w` reads: `in` as floats, or the quantized copy the lowering's Quantize
    // step wrote into `act`.
    Act input(const model::WeightRef& w, graph::BufferId in, graph::BufferId act) const {
        const int32_t k = width(in);
        if (act == graph::kNoBuffer) return {row0(in), uint64_t(k) * 4};
        return {m_.actSlot(actFormatFor(w)), actRowBytes(actFormatFor(w), k)};
    }
    static graph::BufferId source(graph::BufferId in, graph::BufferId act) { return act == graph::kNoBuffer ? in : act; }

    // MatMul, or MatMulAdd (`accumulate`): the product added into op.out, the residual.
    void matMul(const graph::LoweredOp& l, bool accumulate) {
        const graph::Op& op = l.op;
        const auto& w = *op.weight;
        const Act act = input(w, op.in, l.act);
        const std::string kernel = fmt::format("matvec_{}", typeSuffix(w, "weight"));
        const ka::MatVecArgs args{m_.weight(w), act.address, row0(op.out), w.rowBytes, act.rowBytes, int32_t(w.cols), int32_t(w.rows),
                                  width(op.out), accumulate ? 1 : 0};
        const std::array<uint32_t, 3> groups{ceilDiv(w.rows, ka::kMatVecShape.perGroupX), rows(), 1};
        if (accumulate)
            b_.launch(kernel, args, groups, {source(op.in, l.act), op.out}, {op.out}, op.label);
        else
            b_.launch(kernel, args, groups, {source(op.in, l.act)}, {op.out}, op.label);
        if (op.bias) addBias(op);
    }

    // GateUpSwiGlu: silu(gate · in) * (up · in) from one matvec_<type>_gate_up.
    void gateUp(const graph::LoweredOp& l) {
        const graph::Op& op = l.op;
        const auto &w = *op.weight, &up = *op.upWeight;
        if (!oneTypeAndShape(w, up))
            throw TierError(fmt::format("kfd tier: op {}: gate {} ({} [{} x {}]) and up {} ({} [{} x {}]) differ; matvec_T_gate_up takes "
                                        "one type and shape", op.label, w.name, model::ggmlTypeName(w.type), w.rows, w.cols, up.name,
                                        model::ggmlTypeName(up.type), up.rows, up.cols));
        const Act act = input(w, op.in, l.act);
        b_.launch(fmt::format("matvec_{}_gate_up", typeSuffix(w, "weight")),
                  ka::MatVecGateUpArgs{m_.weight(w), m_.weight(up), act.address, row0(op.out), w.rowBytes, act.rowBytes, int32_t(w.cols),
                                       int32_t(w.rows), width(op.out)},
                  {ceilDiv(w.rows, ka::kMatVecGateUpShape.perGroupX), rows(), 1}, {source(op.in, l.act)}, {op.out}, op.label);
    }

    // MatMulConv: the projection into the conv, one matvec_<type>_conv (hybrid_ops.h).
    void matMulConv(const graph::LoweredOp& l) {
        const graph::Op& op = l.op;
        const auto& w = *op.weight;
        const Act act = input(w, op.in, l.act);
        recordMatMulConv(b_, g_, m_, op, {firstRow_, rows(), rowsBlock(), shape_.rowsOwnSlots},
                         {fmt::format("matvec_{}_conv", typeSuffix(w, "weight")), m_.weight(w), w.rowBytes, int32_t(w.cols),
                          int32_t(w.rows), act.address, act.rowBytes, source(op.in, l.act)});
    }

    void addBias(const graph::Op& op) {
        requireF32(op, *op.bias);
        const int32_t n = width(op.out);
        if (op.bias->cols != n)
            throw TierError(fmt::format("kfd tier: op {}: bias {} has {} values for rows of {}", op.label, op.bias->name,
                                        op.bias->cols, n));
        b_.launch("add_bias", ka::AddBiasArgs{row0(op.out), m_.weight(*op.bias), n, n}, {ceilDiv(n, 256), rows(), 1}, {op.out},
                  {op.out}, op.label + ".bias");
    }

    void elementwise(const graph::Op& op, const char* kernel) {
        const int32_t n = width(op.in);
        const graph::BufferId second = op.kind == OpKind::Add ? op.addend : op.up;
        if (width(second) != n || width(op.out) != n)
            throw TierError(fmt::format("kfd tier: op {}: operands of different widths", op.label));
        if (std::string_view(kernel) == "add")
            b_.launch(kernel, ka::AddArgs{row0(op.in), row0(second), row0(op.out), n, n}, {ceilDiv(n, 256), rows(), 1}, {op.in, second},
                      {op.out}, op.label);
        else
            b_.launch(kernel, ka::SwiGluArgs{row0(op.in), row0(second), row0(op.out), n, n}, {ceilDiv(n, 256), rows(), 1},
                      {op.in, second}, {op.out}, op.label);
    }

    void moeRoute(const graph::LoweredOp& l) {
        const graph::Op& op = l.op;
        const auto& w = *op.weight;
        const int32_t nExpert = c_.nExpert, nUsed = c_.nExpertUsed;
        if (nExpert > 512) throw TierError(fmt::format("kfd tier: op {}: {} experts (moe_topk takes up to 512)", op.label, nExpert));
        const Act act = input(w, op.in, l.act);
        b_.launch(fmt::format("matvec_{}", typeSuffix(w, "router")),
                  ka::MatVecArgs{m_.weight(w), act.address, m_.routerLogits(), w.rowBytes, act.rowBytes, int32_t(w.cols), nExpert, nExpert},
                  {ceilDiv(nExpert, ka::kMatVecShape.perGroupX), rows(), 1}, {source(op.in, l.act)}, {l_.routerLogits}, op.label + ".logits");
        b_.launch("moe_topk",
                  ka::MoeTopkArgs{m_.routerLogits(), row0(op.expertIds), row0(op.expertWeights), nExpert, nUsed, nExpert,
                                  width(op.expertIds), c_.normTopkProb ? 1 : 0},
                  {1, rows(), 1}, {l_.routerLogits}, {op.expertIds, op.expertWeights}, op.label);
    }

    // One expert matvec: slot k of token t multiplies expert ids[t][k] of `w`.
    void expertMatVec(const graph::Op& op, const model::WeightRef& w, Act act, uint64_t actSlotStride, graph::BufferId source,
                      uint64_t y, graph::BufferId out, const std::string& label) {
        const int32_t nUsed = c_.nExpertUsed, m = int32_t(w.rows);
        b_.launch(fmt::format("matvec_{}_expert", typeSuffix(w, "expert weight")),
                  ka::MatVecExpertArgs{m_.weight(w), act.address, y, row0(op.expertIds), w.rowBytes, act.rowBytes, actSlotStride,
                                       w.rowBytes * uint64_t(w.rows), int32_t(w.cols), m, nUsed * m, m, width(op.expertIds)},
                  {ceilDiv(m, ka::kMatVecShape.perGroupX), rows(), uint32_t(nUsed)}, {source, op.expertIds}, {out}, label);
    }

    // MoeFfn, or MoeFfnAdd (`accumulate`): moe_combine adds into op.out, the residual.
    // `sum` false: MoeExperts, the expert rows only (moeSharedAdd sums them).
    void moeFfn(const graph::LoweredOp& l, bool accumulate, bool sum = true) {
        const graph::Op& op = l.op;
        const int32_t nUsed = c_.nExpertUsed, ff = c_.nFfExpert, n = c_.nEmbd;
        const uint32_t slots = rows() * uint32_t(nUsed);
        const model::WeightRef &gate = *op.weight, &up = *op.upWeight;
        // Gate and up of one type and shape: one matvec_<type>_expert_gate_up writes their SwiGLU.
        const bool gateUpFused = fuse_ && oneTypeAndShape(gate, up) && l.act == l.upAct;
        if (gateUpFused) {
            const Act act = input(gate, op.in, l.act);
            const int32_t m = int32_t(gate.rows);
            b_.launch(fmt::format("matvec_{}_expert_gate_up", typeSuffix(gate, "expert weight")),
                      ka::MatVecExpertGateUpArgs{m_.weight(gate), m_.weight(up), act.address, m_.gateSlots(), row0(op.expertIds),
                                                 gate.rowBytes, act.rowBytes, 0, gate.rowBytes * uint64_t(gate.rows), int32_t(gate.cols),
                                                 m, nUsed * m, m, width(op.expertIds)},
                      {ceilDiv(m, ka::kMatVecGateUpShape.perGroupX), rows(), uint32_t(nUsed)}, {source(op.in, l.act), op.expertIds},
                      {l_.expertGate}, op.label + ".gate_up");
        } else {
            expertMatVec(op, gate, input(gate, op.in, l.act), 0, source(op.in, l.act), m_.gateSlots(), l_.expertGate, op.label + ".gate");
            expertMatVec(op, up, input(up, op.in, l.upAct), 0, source(op.in, l.upAct), m_.upSlots(), l_.expertUp, op.label + ".up");
        }
        Act hidden{m_.gateSlots(), uint64_t(ff) * 4};
        graph::BufferId hiddenId = l_.expertGate;
        // Else SwiGLU of the expert rows inside the quantization of the down projection's input
        // (the quantize kernel given the up rows: zk_swiglu, the swiglu kernel's expression).
        const bool swigluInQuantize = fuse_ && graph::isEightBit(l.downFormat) && !gateUpFused;
        if (!swigluInQuantize && !gateUpFused)
            b_.launch("swiglu", ka::SwiGluArgs{m_.gateSlots(), m_.upSlots(), m_.gateSlots(), ff, ff}, {ceilDiv(ff, 256), slots, 1},
                      {l_.expertGate, l_.expertUp}, {l_.expertGate}, op.label + ".swiglu");
        if (l.downFormat != ActFormat::F32) {
            hidden = quantize(l.downFormat, m_.gateSlots(), l_.expertGate, ff, ff, slots, op.label + ".quantize_down",
                              swigluInQuantize ? Up{m_.upSlots(), l_.expertUp} : Up{}, {}, true);
            hiddenId = expertRowsId();
        }
        const Act down{hidden.address, hidden.rowBytes * uint64_t(nUsed)};
        expertMatVec(op, *op.downWeight, down, hidden.rowBytes, hiddenId, m_.downSlots(), l_.expertDown, op.label + ".down");
        if (!sum) return;
        const ka::MoeCombineArgs combine{m_.downSlots(), row0(op.expertIds), row0(op.expertWeights), row0(op.out), n, nUsed, nUsed * n,
                                         n, width(op.expertIds), width(op.out), accumulate ? 1 : 0};
        const std::array<uint32_t, 3> groups{ceilDiv(n, 256), rows(), 1};
        if (accumulate)
            b_.launch("moe_combine", combine, groups, {l_.expertDown, op.expertIds, op.expertWeights, op.out}, {op.out},
                      op.label + ".combine");
        else
            b_.launch("moe_combine", combine, groups, {l_.expertDown, op.expertIds, op.expertWeights}, {op.out}, op.label + ".combine");
    }

    // MoeSharedAdd: the expert rows' weighted sum, the shared expert times the sigmoid of its
    // input gate (one F32 row) and the residual add, in one moe_shared_add dispatch.
    void moeSharedAdd(const graph::Op& op) {
        const model::WeightRef& gate = *op.weight;
        if (gate.type != model::GgmlType::F32 || gate.rows != 1 || int64_t(gate.cols) != width(op.in))
            throw TierError(fmt::format("kfd tier: op {}: the shared expert's gate {} is {} [{} x {}], moe_shared_add takes one F32 "
                                        "row of the FFN input's {}", op.label, gate.name, model::ggmlTypeName(gate.type), gate.rows,
                                        gate.cols, width(op.in)));
        const int32_t nUsed = c_.nExpertUsed, n = c_.nEmbd;
        b_.launch("moe_shared_add",
                  ka::MoeSharedAddArgs{m_.downSlots(), row0(op.expertIds), row0(op.expertWeights), row0(op.addend), m_.weight(gate),
                                       row0(op.in), row0(op.out), n, nUsed, nUsed * n, n, width(op.expertIds), width(op.addend),
                                       width(op.in), width(op.in), width(op.out)},
                  {ceilDiv(n, ka::kMoeSharedAddShape.perGroupX), rows(), 1},
                  {l_.expertDown, op.expertIds, op.expertWeights, op.addend, op.in, op.out}, {op.out}, op.label);
    }

    PlanBuilder& b_;
    const graph::Lowered& l_;
    const graph::Graph& g_;
    const model::ModelConfig& c_;
    const TierMemory& m_;
    PlanShape shape_;
    int32_t firstRow_ = 0;
    int32_t rows_;
    bool fuse_;
};

// The fused ops of graph::fuse the kernels carry out (tiers.md "How a token is lowered" has the
// table): the residual adds, by the matvec and moe_combine accumulating into the residual;
// SwiGLU, RMSNorm, the gated norm and the sigmoid gate into an 8-bit quantization (the quantize
// kernels computing them on the way in); qwen35moe's shared-expert tail (MoeExperts +
// MoeSharedAdd: moe_shared_add); gate and up of one type and shape in one matvec
// (GateUpSwiGlu); and the DeltaNet conv in attn_qkv's matvec (MatMulConv) in the plans whose
// shape allows it.
bool acceptsFused(const graph::LoweredOp& l, const PlanShape& shape) {
    const bool eightBit = graph::isEightBit(l.format);
    switch (l.op.kind) {
        case OpKind::MatMulAdd:
        case OpKind::MoeFfnAdd:
        case OpKind::MoeExperts: return true;
        case OpKind::GateUpSwiGlu: return oneTypeAndShape(*l.op.weight, *l.op.upWeight) && l.act == l.upAct;
        case OpKind::MoeSharedAdd: return l.op.weight->type == model::GgmlType::F32 && l.op.weight->rows == 1;
        case OpKind::SwiGluQuantize:
        case OpKind::SigmoidGateQuantize: return eightBit;
        // No rope_freqs, no sliding window (graph::fuse keeps those apart); heads up to 256, as
        // attention takes (qk_rope holds one in LDS).
        case OpKind::QkRopeAttention: return true;
        // The conv inside the matvec steps a row's window where the row's sum lands, so no row
        // may wait on another's: decode rows (one, or each in a sequence slot of its own).
        case OpKind::MatMulConv: return shape.sequenceRows() ? shape.rowsOwnSlots : shape.nTokens == 1;
        // The norm's output is written by every workgroup of the row while the others read its
        // input: not in place.
        case OpKind::NormQuantize: return eightBit && l.op.out != l.op.in && l.op.bias == nullptr;
        // Gated norms whose heads (a power of two up to 128) tile the 256 values a quantize
        // workgroup holds.
        case OpKind::GatedNormQuantize: {
            const auto n = l.op.weight ? l.op.weight->cols : 0;
            return eightBit && n > 0 && n <= 128 && (n & (n - 1)) == 0;
        }
        default: return false;
    }
}

}  // namespace

RecordedPlan recordGraph(Device& device, KernelTable& kernels, const graph::Graph& graph, const TierMemory& memory,
                         const PlanShape& shape, const AfterOp& afterOp, uint32_t extraDispatches, const SamplerBlock* sampler,
                         bool fuseOps) {
    // The MoE op quantizes the expert rows into a buffer of their own (TierMemory::expertRowsAct).
    graph::Lowered lowered = graph::lower(graph, actFormatFor);
    if (fuseOps) graph::fuse(lowered, [&](const graph::LoweredOp& l) { return acceptsFused(l, shape); });
    // Dispatches per op: at most 8 (MoE: 2 quantize + 3 experts + swiglu + quantize + combine).
    PlanBuilder builder(device, kernels, uint32_t(graph.ops.size()) * 8 + 8 + extraDispatches);
    Recorder recorder(builder, lowered, memory, shape, fuseOps);
    RecordedPlan plan;
    plan.shape = shape;
    plan.firstLogitsRow = recorder.record(afterOp);
    if (shape.sample) {
        if (!sampler) throw TierError("kfd tier: a sampling plan needs the sampler block");
        const auto n = static_cast<int32_t>(graph.config->nVocab);
        builder.launch("sample_token",
                       ka::SampleArgs{memory.at(graph.logits, shape.nTokens - 1), sampler->scratch(), memory.state(), memory.tokens(),
                                      sampler->ring(), sampler->chain(), n, int32_t(SamplerBlock::kRingCapacity)},
                       {1, 1, 1}, {graph.logits}, {lowered.tokens}, "sample");
    }
    plan.built = builder.finish(fmt::format("{}-token plan", shape.nTokens));
    return plan;
}

}  // namespace zinc::kfd
