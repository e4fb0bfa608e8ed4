#include "vulkan/graph_recorder.h"

#include <optional>

namespace zinc::vk {
namespace {

using graph::OpKind;

// The residual add right after op i that adds op i's output into the residual stream.
bool addsIntoResidual(const graph::Graph& g, size_t i) {
    if (i + 1 >= g.ops.size()) return false;
    const auto& op = g.ops[i];
    const auto& next = g.ops[i + 1];
    return next.kind == OpKind::Add && next.in2 == op.out && next.out == next.in && next.in != op.out;
}

// Ops i, i + 1, i + 2 are gate and up projections of one input and the SwiGLU of the two.
bool isGateUpSwiGlu(const graph::Graph& g, size_t i) {
    if (i + 2 >= g.ops.size()) return false;
    const auto &gate = g.ops[i], &up = g.ops[i + 1], &glu = g.ops[i + 2];
    return up.kind == OpKind::MatMul && glu.kind == OpKind::SwiGlu && up.in == gate.in && glu.in == gate.out &&
           glu.in2 == up.out && glu.out == gate.out && MatVecOp::pairable(*gate.weight, *up.weight);
}

// QK-norm/RoPE op i belongs to the run [HeadNorm q, HeadNorm k] Rope q, Rope k that ends
// at the next Attention, with each op on that attention's q or k: qk_rope.comp does them all.
bool fusesWithAttention(const graph::Graph& g, size_t i) {
    size_t j = i;
    while (j < g.ops.size() && (g.ops[j].kind == OpKind::HeadNorm || g.ops[j].kind == OpKind::Rope)) ++j;
    if (j == g.ops.size() || g.ops[j].kind != OpKind::Attention) return false;
    const auto& att = g.ops[j];
    int ropes = 0;
    for (size_t h = i; h < j; ++h) {
        if (g.ops[h].in != att.in && g.ops[h].in != att.in2) return false;
        ropes += g.ops[h].kind == OpKind::Rope;
    }
    // The fused shader always rotates: the run must rope both q and k (it may start midway).
    for (size_t h = i; h > 0 && (g.ops[h - 1].kind == OpKind::HeadNorm || g.ops[h - 1].kind == OpKind::Rope); --h)
        ropes += g.ops[h - 1].kind == OpKind::Rope;
    return ropes == 2;
}

// The 8-bit format the first quantized consumer of op i's output multiplies against, if any
// reads it before it is overwritten: the norm can then quantize its output in place.
std::optional<ActMode> consumerMode(const graph::Graph& g, size_t i) {
    const auto out = g.ops[i].out;
    for (size_t j = i + 1; j < g.ops.size(); ++j) {
        const auto& op = g.ops[j];
        if (op.in == out && (op.kind == OpKind::MatMul || op.kind == OpKind::MoeRoute || op.kind == OpKind::MoeFfn))
            for (const model::WeightRef* w : {op.weight, op.weight2})
                if (w) {
                    const ActMode mode = MatVecOp::actMode(w->type);
                    if (mode != ActMode::F32) return mode;
                }
        if (op.out == out || op.out2 == out) return std::nullopt;
    }
    return std::nullopt;
}

}  // namespace

GraphRecorder::GraphRecorder(PipelineFactory& pipelines, const graph::Graph& graph, bool integerDotProduct)
    : graph_(graph),
      embed_(pipelines),
      norm_(pipelines),
      rope_(pipelines),
      attention_(pipelines),
      elementwise_(pipelines),
      matVec_(pipelines, integerDotProduct),
      moe_(pipelines, matVec_, elementwise_),
      argmax_(pipelines),
      sample_(pipelines) {}

int32_t GraphRecorder::record(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights, int32_t nTokens,
                              bool allRows, const OpHook& afterOps) {
    ActivationCache acts;
    PlanContext ctx{rec, graph_, mem, weights, acts, nTokens, 0, nTokens};
    pendingHeadOps_.clear();
    for (size_t i = 0; i < graph_.ops.size(); ++i) {
        const auto& op = graph_.ops[i];
        if (op.layer < 0 && op.kind != OpKind::Embed && !allRows) {
            ctx.firstRow = nTokens - 1;  // after the layer stack only the last token goes on
            ctx.rows = 1;
        }
        rec.setLabel(op.label);
        const size_t first = i;
        const uint32_t dispatched = rec.dispatches();
        recordOp(ctx, i);
        if (afterOps) afterOps(ctx, first, i, rec.dispatches() - dispatched);
    }
    return ctx.firstRow;
}

void GraphRecorder::recordOp(PlanContext& ctx, size_t& i) {
    const auto& op = graph_.ops[i];
    switch (op.kind) {
        case OpKind::Embed: return embed_.record(ctx, op);
        case OpKind::RmsNorm:
            if (const auto mode = consumerMode(graph_, i)) return matVec_.recordNormQuantized(ctx, op, *mode);
            return norm_.record(ctx, op);
        case OpKind::HeadNorm:
        case OpKind::Rope:
            if (fusesWithAttention(graph_, i)) {
                pendingHeadOps_.push_back(&op);
                return;
            }
            return op.kind == OpKind::Rope ? rope_.record(ctx, op) : norm_.record(ctx, op);
        case OpKind::Attention: {
            if (pendingHeadOps_.empty()) return attention_.record(ctx, op);
            const model::WeightRef *qNorm = nullptr, *kNorm = nullptr;
            for (const auto* head : pendingHeadOps_)
                if (head->kind == OpKind::HeadNorm) (head->in == op.in ? qNorm : kNorm) = head->weight;
            pendingHeadOps_.clear();
            attention_.recordFused(ctx, op, qNorm, kNorm);
            ctx.acts.invalidate(op.in);
            ctx.acts.invalidate(op.in2);
            return;
        }
        case OpKind::Add: return elementwise_.record(ctx, op);
        case OpKind::MoeRoute: return moe_.recordRoute(ctx, op);
        case OpKind::SwiGlu: {
            const bool feedsNext = i + 1 < graph_.ops.size() && graph_.ops[i + 1].kind == OpKind::MatMul &&
                                   graph_.ops[i + 1].in == op.out;
            if (feedsNext && MatVecOp::actMode(graph_.ops[i + 1].weight->type) != ActMode::F32) {
                // silu(gate) * up goes straight into the down projection's quantized input.
                const auto& next = graph_.ops[i + 1];
                const ActMode mode = MatVecOp::actMode(next.weight->type);
                const uint32_t k = ctx.width(op.in);
                matVec_.quantize(ctx, mode, ctx.row0(op.in), ctx.row0(op.in2), k, k, static_cast<uint32_t>(ctx.rows));
                ctx.acts.slots[static_cast<size_t>(mode)] = {next.in, ctx.firstRow, ctx.rows};
                return;
            }
            return elementwise_.record(ctx, op);
        }
        case OpKind::MatMul:
            if (op.bias) {
                matVec_.record(ctx, op);
                return elementwise_.recordBias(ctx, op);
            }
            if (isGateUpSwiGlu(graph_, i)) {
                // gate, up and SwiGLU as one matvec writing silu(gate · x) * (up · x) to gate's buffer
                const auto& up = graph_.ops[i + 1];
                i += 2;
                matVec_.multiply(ctx, *op.weight, matVec_.input(ctx, *op.weight, op.in), ctx.row0(op.out),
                                 ctx.width(op.out), static_cast<uint32_t>(ctx.rows), false, nullptr, up.weight);
                ctx.acts.invalidate(op.out);
                return;
            }
            if (addsIntoResidual(graph_, i)) {
                const auto& add = graph_.ops[++i];
                const auto act = matVec_.input(ctx, *op.weight, op.in);
                matVec_.multiply(ctx, *op.weight, act, ctx.row0(add.out), ctx.width(add.out),
                                 static_cast<uint32_t>(ctx.rows), true);
                ctx.acts.invalidate(add.out);
                return;
            }
            return matVec_.record(ctx, op);
        case OpKind::MoeFfn:
            if (addsIntoResidual(graph_, i)) {
                const auto& add = graph_.ops[++i];
                graph::Op fused = op;
                fused.out = add.out;
                return moe_.recordExperts(ctx, fused, true);
            }
            return moe_.recordExperts(ctx, op, false);
    }
}

void GraphRecorder::recordArgmax(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights,
                                 VkDeviceAddress logits, bool advance) {
    ActivationCache acts;
    PlanContext ctx{rec, graph_, mem, weights, acts, 1, 0, 1};
    rec.setLabel("argmax");
    argmax_.record(ctx, logits, static_cast<uint32_t>(graph_.config->nVocab), advance);
}

void GraphRecorder::recordSample(Recorder& rec, const DeviceLayout& mem, const WeightStore& weights,
                                 VkDeviceAddress logits) {
    ActivationCache acts;
    PlanContext ctx{rec, graph_, mem, weights, acts, 1, 0, 1};
    rec.setLabel("sample");
    sample_.record(ctx, logits, static_cast<uint32_t>(graph_.config->nVocab));
}

}  // namespace zinc::vk
