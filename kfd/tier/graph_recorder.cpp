// Graph op -> kernels, in the same order and with the same activation formats as the cpu tier
// (kernels/README.md "Numerics"): inputs of quantized weights are first quantized into the
// format their matvec multiplies against, once per buffer and format (q/k/v and gate/up share
// one quantization), then the matvec of the weight type runs; the MoE chain is the one
// tests/kernels/pocl_ops_test.cpp holds to the cpu tier (MoeExpertsMatchCpuOp).
#include "kfd/tier/graph_recorder.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

#include "kernels/kernel_args.h"
#include "runtime/tier.h"

namespace zinc::kfd {
namespace {

using graph::OpKind;
using runtime::TierError;
namespace ka = zinc::kernels;

uint32_t ceilDiv(int64_t a, int64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

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

// A quantized copy of activations: where it is and how far apart its rows are.
struct Act {
    uint64_t address = 0;
    uint64_t rowBytes = 0;
};

class Recorder {
public:
    Recorder(PlanBuilder& b, const graph::Graph& g, const TierMemory& m, const PlanShape& shape)
        : b_(b), g_(g), c_(*g.config), m_(m), shape_(shape), rows_(shape.nTokens) {}

    int32_t record(const AfterOp& afterOp) {
        for (size_t i = 0; i < g_.ops.size(); ++i) {
            const graph::Op& op = g_.ops[i];
            if (op.layer < 0 && op.kind != OpKind::Embed && !shape_.allRows) {
                firstRow_ = shape_.nTokens - 1;  // after the layer stack only the last token goes on
                rows_ = 1;
            }
            recordOp(op);
            if (afterOp) afterOp(b_, i, op);
        }
        if (shape_.argmax) {
            const auto n = static_cast<int32_t>(c_.nVocab);
            b_.launch("argmax", ka::ArgmaxArgs{row(g_.logits, shape_.nTokens - 1), m_.tokens(), n, n}, {1, 1, 1},
                      {g_.logits}, {resource::kTokens}, "argmax");
        }
        return firstRow_;
    }

private:
    uint64_t row(graph::BufferId id, int32_t token) const { return m_.at(id, token); }
    uint64_t row0(graph::BufferId id) const { return m_.at(id, firstRow_); }
    int32_t width(graph::BufferId id) const { return static_cast<int32_t>(g_.buffer(id).width); }
    uint32_t rows() const { return static_cast<uint32_t>(rows_); }

    void recordOp(const graph::Op& op) {
        switch (op.kind) {
            case OpKind::Embed: return embed(op);
            case OpKind::RmsNorm: return rmsNorm(op);
            case OpKind::HeadNorm: return headNorm(op);
            case OpKind::Rope: return rope(op);
            case OpKind::Attention: return attention(op);
            case OpKind::MatMul: return matMul(op);
            case OpKind::SwiGlu: return elementwise(op, op.gelu ? "geglu" : "swiglu");
            case OpKind::Add: return elementwise(op, "add");
            case OpKind::MoeRoute: return moeRoute(op);
            case OpKind::MoeFfn: return moeFfn(op);
        }
        throw TierError(fmt::format("kfd tier: op {} has a kind the recorder does not know", op.label));
    }

    void written(graph::BufferId id) {
        for (auto& e : cache_)
            if (e.buffer == id) e = {};
    }

    void embed(const graph::Op& op) {
        const auto& w = *op.weight;
        const std::string kernel = fmt::format("embed_{}", typeSuffix(w, "embedding"));
        b_.launch(kernel, ka::EmbedArgs{m_.weight(w), m_.tokens(), row0(op.out), w.rowBytes, int32_t(w.cols), width(op.out), op.scale},
                  {ceilDiv(w.cols, 256), rows(), 1}, {resource::kTokens}, {op.out}, op.label);
        written(op.out);
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
        written(op.out);
    }

    void headNorm(const graph::Op& op) {
        requireF32(op, *op.weight);
        if (op.out != op.in && op.out != graph::kNoBuffer)
            throw TierError(fmt::format("kfd tier: op {}: head_norm works in place", op.label));
        b_.launch("head_norm", ka::HeadNormArgs{row0(op.in), m_.weight(*op.weight), op.heads, c_.headDim, c_.normEps, width(op.in)},
                  {uint32_t(op.heads), rows(), 1}, {op.in}, {op.in}, op.label);
        written(op.in);
    }

    void rope(const graph::Op& op) {
        const model::RopeParams p = op.window > 0 ? c_.ropeSwa() : c_.rope();  // sliding layers: their own base
        const char* kernel = c_.ropeStyle == model::RopeStyle::Neox ? "rope_neox" : "rope_norm";
        const uint64_t factors = op.weight ? m_.weight(*op.weight) : 0;  // rope_freqs
        b_.launch(kernel, ka::RopeArgs{row0(op.in), m_.state(), op.heads, c_.headDim, c_.ropeDim, p.thetaScale, width(op.in),
                                       factors, p.freqScale, p.extFactor, p.mscale, p.corrLow, p.corrHigh},
                  {uint32_t(op.heads), rows(), 1}, {op.in}, {op.in}, op.label);
        written(op.in);
    }

    void attention(const graph::Op& op) {
        const int32_t kvDim = c_.kvDim();
        if (c_.headDim > 256) throw TierError(fmt::format("kfd tier: op {}: head size {} > 256", op.label, c_.headDim));
        if (width(op.in2) != width(op.in3))
            throw TierError(fmt::format("kfd tier: op {}: k and v rows differ in width", op.label));
        const uint64_t kCache = m_.kCache(op.layer), vCache = m_.vCache(op.layer);
        const auto cache = resource::kvCache(op.layer);
        b_.launch("kv_store", ka::KvStoreArgs{row0(op.in2), row0(op.in3), kCache, vCache, m_.state(), kvDim, width(op.in2)},
                  {ceilDiv(kvDim, 256), rows(), 1}, {op.in2, op.in3}, {cache}, op.label + ".kv_store");
        const float scale = 1.0f / std::sqrt(static_cast<float>(c_.headDim));
        b_.launch("attention",
                  ka::AttentionArgs{row0(op.in), kCache, vCache, row0(op.out), m_.state(), c_.nHead, c_.nHeadKv, c_.headDim, kvDim,
                                    width(op.in), width(op.out), scale, op.window, c_.preScaleQuery ? 1 : 0},
                  {uint32_t(c_.nHead), rows(), 1}, {op.in, cache}, {op.out}, op.label);
        written(op.out);
    }

    // `n` rows of k floats (stride floats apart) at `x` into the format's slot.
    Act quantize(ActFormat f, uint64_t x, graph::BufferId source, int32_t k, int32_t stride, uint32_t n, const std::string& label) {
        const uint64_t out = m_.actSlot(f), rowBytes = actRowBytes(f, k);
        const auto slot = resource::actSlot(f);
        switch (f) {
            case ActFormat::F16:
                b_.launch("quantize_f16", ka::ConvertF16Args{x, out, k, stride, k}, {ceilDiv(k, 256), n, 1}, {source}, {slot}, label);
                break;
            case ActFormat::Q8_0:
                if (k % 32) throw TierError(fmt::format("kfd tier: op {}: {} inputs are not whole Q8_0 blocks", label, k));
                b_.launch("quantize_q8_0", ka::QuantizeArgs{x, out, k, stride, rowBytes}, {ceilDiv(k, 256), n, 1}, {source}, {slot}, label);
                break;
            case ActFormat::Q8_K:
                if (k % 256) throw TierError(fmt::format("kfd tier: op {}: {} inputs are not whole Q8_K blocks", label, k));
                b_.launch("quantize_q8_k", ka::QuantizeArgs{x, out, k, stride, rowBytes}, {uint32_t(k / 256), n, 1}, {source}, {slot}, label);
                break;
            case ActFormat::Q8_1:
                if (k % 32) throw TierError(fmt::format("kfd tier: op {}: {} inputs are not whole Q8_1 blocks", label, k));
                b_.launch("quantize_q8_1", ka::QuantizeArgs{x, out, k, stride, rowBytes}, {ceilDiv(k, 256), n, 1}, {source}, {slot}, label);
                break;
            case ActFormat::BF16:
                b_.launch("quantize_bf16", ka::ConvertF16Args{x, out, k, stride, k}, {ceilDiv(k, 256), n, 1}, {source}, {slot}, label);
                break;
            case ActFormat::F32: return {x, uint64_t(stride) * 4};
        }
        cache_[size_t(f)] = {};
        return {out, rowBytes};
    }

    // The input of weight `w` for buffer `in` over the current rows, quantized once per format.
    Act input(const model::WeightRef& w, graph::BufferId in, const std::string& label) {
        const ActFormat f = actFormatFor(w);
        const int32_t k = width(in);
        if (f == ActFormat::F32) return {row0(in), uint64_t(k) * 4};
        Cached& e = cache_[size_t(f)];
        if (e.buffer == in && e.firstRow == firstRow_ && e.rows == rows_) return {m_.actSlot(f), actRowBytes(f, k)};
        const Act act = quantize(f, row0(in), in, k, k, rows(), label + ".quantize");
        e = {in, firstRow_, rows_};
        return act;
    }

    void matMul(const graph::Op& op) {
        const auto& w = *op.weight;
        const Act act = input(w, op.in, op.label);
        const std::string kernel = fmt::format("matvec_{}", typeSuffix(w, "weight"));
        const ResourceKey source = actFormatFor(w) == ActFormat::F32 ? ResourceKey(op.in) : resource::actSlot(actFormatFor(w));
        b_.launch(kernel, ka::MatVecArgs{m_.weight(w), act.address, row0(op.out), w.rowBytes, act.rowBytes, int32_t(w.cols), int32_t(w.rows), width(op.out)},
                  {ceilDiv(w.rows, 8), rows(), 1}, {source}, {op.out}, op.label);
        if (op.bias) addBias(op);
        written(op.out);
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
        if (width(op.in2) != n || width(op.out) != n)
            throw TierError(fmt::format("kfd tier: op {}: operands of different widths", op.label));
        if (std::string_view(kernel) == "add")
            b_.launch(kernel, ka::AddArgs{row0(op.in), row0(op.in2), row0(op.out), n, n}, {ceilDiv(n, 256), rows(), 1}, {op.in, op.in2},
                      {op.out}, op.label);
        else
            b_.launch(kernel, ka::SwiGluArgs{row0(op.in), row0(op.in2), row0(op.out), n, n}, {ceilDiv(n, 256), rows(), 1},
                      {op.in, op.in2}, {op.out}, op.label);
        written(op.out);
    }

    void moeRoute(const graph::Op& op) {
        const auto& w = *op.weight;
        const int32_t nExpert = c_.nExpert, nUsed = c_.nExpertUsed;
        if (nExpert > 512) throw TierError(fmt::format("kfd tier: op {}: {} experts (moe_topk takes up to 512)", op.label, nExpert));
        const Act act = input(w, op.in, op.label);
        const ResourceKey source = actFormatFor(w) == ActFormat::F32 ? ResourceKey(op.in) : resource::actSlot(actFormatFor(w));
        b_.launch(fmt::format("matvec_{}", typeSuffix(w, "router")),
                  ka::MatVecArgs{m_.weight(w), act.address, m_.routerLogits(), w.rowBytes, act.rowBytes, int32_t(w.cols), nExpert, nExpert},
                  {ceilDiv(nExpert, 8), rows(), 1}, {source}, {resource::kRouterLogits}, op.label + ".logits");
        b_.launch("moe_topk",
                  ka::MoeTopkArgs{m_.routerLogits(), row0(op.out), row0(op.out2), nExpert, nUsed, nExpert, width(op.out),
                                  c_.normTopkProb ? 1 : 0},
                  {1, rows(), 1}, {resource::kRouterLogits}, {op.out, op.out2}, op.label);
        written(op.out);
        written(op.out2);
    }

    // One expert matvec: slot k of token t multiplies expert ids[t][k] of `w`.
    void expertMatVec(const graph::Op& op, const model::WeightRef& w, Act act, uint64_t actSlotStride, ResourceKey source,
                      uint64_t y, ResourceKey out, const std::string& label) {
        const int32_t nUsed = c_.nExpertUsed, m = int32_t(w.rows);
        b_.launch(fmt::format("matvec_{}_expert", typeSuffix(w, "expert weight")),
                  ka::MatVecExpertArgs{m_.weight(w), act.address, y, row0(op.in2), w.rowBytes, act.rowBytes, actSlotStride,
                                       w.rowBytes * uint64_t(w.rows), int32_t(w.cols), m, nUsed * m, m, width(op.in2)},
                  {ceilDiv(m, 8), rows(), uint32_t(nUsed)}, {source, op.in2}, {out}, label);
    }

    void moeFfn(const graph::Op& op) {
        const int32_t nUsed = c_.nExpertUsed, ff = c_.nFfExpert, n = c_.nEmbd;
        const uint32_t slots = rows() * uint32_t(nUsed);
        auto sourceOf = [&](const model::WeightRef& w) {
            return actFormatFor(w) == ActFormat::F32 ? ResourceKey(op.in) : resource::actSlot(actFormatFor(w));
        };
        const Act gateAct = input(*op.weight, op.in, op.label + ".gate");
        expertMatVec(op, *op.weight, gateAct, 0, sourceOf(*op.weight), m_.gateSlots(), resource::kGate, op.label + ".gate");
        const Act upAct = input(*op.weight2, op.in, op.label + ".up");
        expertMatVec(op, *op.weight2, upAct, 0, sourceOf(*op.weight2), m_.upSlots(), resource::kUp, op.label + ".up");
        b_.launch("swiglu", ka::SwiGluArgs{m_.gateSlots(), m_.upSlots(), m_.gateSlots(), ff, ff}, {ceilDiv(ff, 256), slots, 1},
                  {resource::kGate, resource::kUp}, {resource::kGate}, op.label + ".swiglu");
        const ActFormat downFormat = actFormatFor(*op.weight3);
        Act hidden{m_.gateSlots(), uint64_t(ff) * 4};
        ResourceKey hiddenKey = resource::kGate;
        if (downFormat != ActFormat::F32) {
            // The quantized slot is about to hold expert rows, not op.in: drop what it cached.
            hidden = quantize(downFormat, m_.gateSlots(), resource::kGate, ff, ff, slots, op.label + ".quantize_down");
            hiddenKey = resource::actSlot(downFormat);
        }
        const Act down{hidden.address, hidden.rowBytes * uint64_t(nUsed)};
        expertMatVec(op, *op.weight3, down, hidden.rowBytes, hiddenKey, m_.downSlots(), resource::kDown, op.label + ".down");
        b_.launch("moe_combine",
                  ka::MoeCombineArgs{m_.downSlots(), row0(op.in2), row0(op.in3), row0(op.out), n, nUsed, nUsed * n, n, width(op.in2),
                                     width(op.out)},
                  {ceilDiv(n, 256), rows(), 1}, {resource::kDown, op.in2, op.in3}, {op.out}, op.label + ".combine");
        written(op.out);
    }

    struct Cached {
        graph::BufferId buffer = graph::kNoBuffer;
        int32_t firstRow = 0, rows = 0;
    };

    PlanBuilder& b_;
    const graph::Graph& g_;
    const model::ModelConfig& c_;
    const TierMemory& m_;
    PlanShape shape_;
    int32_t firstRow_ = 0;
    int32_t rows_;
    std::array<Cached, kActFormats> cache_{};
};

}  // namespace

RecordedPlan recordGraph(Device& device, KernelTable& kernels, const graph::Graph& graph, const TierMemory& memory,
                         const PlanShape& shape, const AfterOp& afterOp, uint32_t extraDispatches) {
    // Dispatches per op: at most 8 (MoE: 2 quantize + 3 experts + swiglu + quantize + combine).
    PlanBuilder builder(device, kernels, uint32_t(graph.ops.size()) * 8 + 8 + extraDispatches);
    Recorder recorder(builder, graph, memory, shape);
    RecordedPlan plan;
    plan.shape = shape;
    plan.firstLogitsRow = recorder.record(afterOp);
    plan.built = builder.finish(fmt::format("{}-token plan", shape.nTokens));
    return plan;
}

}  // namespace zinc::kfd
