#pragma once
// Debug capture (zinc-rt ab): copies of chosen ops' outputs for the last token of a decode
// step, so two tiers can be compared layer by layer (the residual stream after each layer) or
// tensor by tensor (--validate). A tier given a Capture (Tier::setCapture) fills it on every
// one-token evaluate(); batched calls are not captured. GPU tiers record a capture variant of
// their decode plan (the same kernels plus copies), used only while a capture is set.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace zinc::runtime {

// The F32 buffer an op leaves its result in (MoeRoute: the expert weights; its ids are I32).
inline graph::BufferId capturedBuffer(const graph::Op& op) {
    if (op.kind == graph::OpKind::MoeRoute) return op.expertWeights;
    return op.out != graph::kNoBuffer ? op.out : op.in;
}

// The op that ends each layer (its residual add): its output is the residual after the layer.
inline std::vector<size_t> layerEndOps(const graph::Graph& g) {
    std::vector<size_t> ends;
    for (size_t i = 0; i < g.ops.size(); ++i) {
        const int32_t layer = g.ops[i].layer;
        if (layer < 0) continue;
        if (ends.size() <= static_cast<size_t>(layer)) ends.resize(static_cast<size_t>(layer) + 1);
        ends[static_cast<size_t>(layer)] = i;
    }
    return ends;
}

// "blk.3.attn_q" for layer ops, the label for ops outside the layer stack ("lm_head").
inline std::string tensorName(const graph::Op& op) {
    return op.layer >= 0 ? "blk." + std::to_string(op.layer) + "." + op.label : op.label;
}

class Capture {
public:
    Capture(const graph::Graph& graph, std::vector<size_t> ops) : wanted_(graph.ops.size(), false) {
        for (size_t i : ops) wanted_.at(i) = true;
        values_.resize(graph.ops.size());
    }
    static Capture residuals(const graph::Graph& graph) { return Capture(graph, layerEndOps(graph)); }
    static Capture everyOp(const graph::Graph& graph) {
        std::vector<size_t> all(graph.ops.size());
        for (size_t i = 0; i < all.size(); ++i) all[i] = i;
        return Capture(graph, all);
    }

    bool wants(size_t op) const { return op < wanted_.size() && wanted_[op]; }
    const std::vector<bool>& wanted() const { return wanted_; }
    // Filled by the tier: op i's output row of the last captured step (empty when the tier
    // could not see it: an intermediate a fused dispatch never writes).
    std::vector<float>& at(size_t op) { return values_.at(op); }
    const std::vector<float>& at(size_t op) const { return values_.at(op); }
    int32_t steps = 0;  // captured steps so far
    void clearValues() {
        for (auto& v : values_) v.clear();
    }

private:
    std::vector<bool> wanted_;
    std::vector<std::vector<float>> values_;
};

}  // namespace zinc::runtime
