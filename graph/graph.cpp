#include "graph/graph.h"

#include <algorithm>

namespace zinc::graph {

const char* opKindName(OpKind kind) {
    switch (kind) {
        case OpKind::Embed: return "embed";
        case OpKind::RmsNorm: return "rms_norm";
        case OpKind::MatMul: return "matmul";
        case OpKind::HeadNorm: return "head_norm";
        case OpKind::Rope: return "rope";
        case OpKind::Attention: return "attention";
        case OpKind::SwiGlu: return "swiglu";
        case OpKind::Add: return "add";
        case OpKind::MoeRoute: return "moe_route";
        case OpKind::MoeFfn: return "moe_ffn";
        case OpKind::SsmConv: return "ssm_conv";
        case OpKind::DeltaNet: return "delta_net";
        case OpKind::GatedNorm: return "gated_norm";
        case OpKind::SplitGate: return "split_gate";
        case OpKind::SigmoidGate: return "sigmoid_gate";
        case OpKind::Quantize: return "quantize";
        case OpKind::MatMulAdd: return "matmul_add";
        case OpKind::MoeFfnAdd: return "moe_ffn_add";
        case OpKind::GateUpSwiGlu: return "gate_up_swiglu";
        case OpKind::SwiGluQuantize: return "swiglu_quantize";
        case OpKind::NormQuantize: return "norm_quantize";
        case OpKind::QkRopeAttention: return "qk_rope_attention";
        case OpKind::GatedNormQuantize: return "gated_norm_quantize";
        case OpKind::SigmoidGateQuantize: return "sigmoid_gate_quantize";
        case OpKind::MoeExperts: return "moe_experts";
        case OpKind::MoeSharedAdd: return "moe_shared_add";
        case OpKind::MatMulConv: return "matmul_conv";
    }
    return "?";
}

BufferId findOrAddBuffer(Graph& graph, const std::string& name, int64_t width, ElemType elem, bool persistent) {
    for (size_t i = 0; i < graph.buffers.size(); ++i)
        if (graph.buffers[i].name == name) return static_cast<BufferId>(i);
    graph.buffers.push_back({name, elem, width, persistent});
    return static_cast<BufferId>(graph.buffers.size() - 1);
}

Op& appendOp(Graph& graph, OpKind kind, int32_t layer, std::string label) {
    graph.ops.push_back(Op{kind, layer, std::move(label)});
    return graph.ops.back();
}

std::vector<BufferId> readsOf(const Op& op) {
    std::vector<BufferId> ids;
    for (BufferId id : {op.in, op.addend, op.up, op.k, op.v, op.state, op.alpha, op.beta})
        if (id != kNoBuffer) ids.push_back(id);
    if (op.gate != kNoBuffer && op.kind != OpKind::SplitGate) ids.push_back(op.gate);
    if (op.kind == OpKind::MoeFfn || op.kind == OpKind::MoeFfnAdd || op.kind == OpKind::MoeExperts)
        ids.insert(ids.end(), {op.expertIds, op.expertWeights});
    if (op.kind == OpKind::MoeSharedAdd) ids.insert(ids.end(), {op.out, op.expertIds, op.expertWeights});
    return ids;
}

std::vector<BufferId> writesOf(const Op& op) {
    if (op.kind == OpKind::MoeRoute) return {op.expertIds, op.expertWeights};
    if (op.kind == OpKind::SplitGate) return {op.out, op.gate};
    if (op.kind == OpKind::SsmConv || op.kind == OpKind::DeltaNet || op.kind == OpKind::MatMulConv) return {op.out, op.state};
    return {op.out};
}

size_t Graph::opsPerLayer() const {
    size_t n = 0;
    for (const auto& op : ops) n += op.layer == 0 ? 1 : 0;
    return n;
}

MemoryPlan planMemory(const Graph& graph, int32_t maxTokens, int32_t stateCopies) {
    MemoryPlan plan;
    plan.maxTokens = maxTokens;
    plan.stateCopies = std::max(1, stateCopies);
    constexpr size_t kAlign = 256;  // keeps every buffer cache-line and GPU friendly
    plan.offsets.resize(graph.buffers.size());
    // Per-token buffers first, then the persistent state in one range (cleared as one).
    for (const bool persistent : {false, true}) {
        if (persistent) plan.stateBegin = plan.arenaBytes;
        for (size_t i = 0; i < graph.buffers.size(); ++i) {
            const auto& b = graph.buffers[i];
            if (b.persistent != persistent) continue;
            plan.offsets[i] = plan.arenaBytes;
            const size_t bytes = static_cast<size_t>(b.width) * 4 * static_cast<size_t>(persistent ? 1 : maxTokens);
            plan.arenaBytes += (bytes + kAlign - 1) / kAlign * kAlign;
        }
    }
    plan.stateStride = plan.arenaBytes - plan.stateBegin;
    plan.arenaBytes += plan.stateStride * static_cast<size_t>(plan.stateCopies - 1);
    plan.stateEnd = plan.arenaBytes;
    return plan;
}

}  // namespace zinc::graph
