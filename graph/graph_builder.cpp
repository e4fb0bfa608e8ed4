#include <fmt/format.h>

#include "graph/graph.h"

namespace zinc::graph {
namespace {

class Builder {
public:
    Builder(const model::ModelConfig& c, const model::ModelWeights& w) : c_(c) {
        g_.config = &c;
        g_.weights = &w;
    }

    Graph build() {
        const auto& w = *g_.weights;
        const BufferId tokens = buffer("tokens", 1, ElemType::I32);
        x_ = buffer("x", c_.nEmbd);
        xn_ = buffer("x_norm", c_.nEmbd);
        g_.residual = x_;
        Op embed{OpKind::Embed, -1, "token_embd", tokens};
        embed.out = x_;
        embed.weight = &w.tokenEmbd;
        embed.scale = c_.embedScale;
        g_.ops.push_back(embed);
        for (int il = 0; il < c_.nLayer; ++il) {
            if (c_.hybrid.recurrent(il))
                buildDeltaNetBlock(g_, il, x_, xn_);
            else if (c_.hybrid.enabled())
                buildGatedAttentionBlock(g_, il, x_, xn_);
            else
                attentionBlock(il, w.layers[static_cast<size_t>(il)]);
            if (c_.isMoe())
                moeBlock(il, w.layers[static_cast<size_t>(il)]);
            else
                denseFfnBlock(il, w.layers[static_cast<size_t>(il)]);
        }
        norm(-1, "output_norm", x_, xn_, w.outputNorm);
        g_.logits = buffer("logits", c_.nVocab);
        matMul(-1, "lm_head", xn_, g_.logits, w.output);
        return std::move(g_);
    }

private:
    BufferId buffer(const std::string& name, int64_t width, ElemType elem = ElemType::F32) {
        return findOrAddBuffer(g_, name, width, elem);
    }
    Op& push(OpKind kind, int il, std::string label) { return appendOp(g_, kind, il, std::move(label)); }
    void norm(int il, std::string label, BufferId in, BufferId out, const model::WeightRef& weight) {
        Op& op = push(OpKind::RmsNorm, il, std::move(label));
        op.in = in;
        op.out = out;
        op.weight = &weight;
    }
    void matMul(int il, std::string label, BufferId in, BufferId out, const model::WeightRef& weight,
                const model::WeightRef* bias = nullptr) {
        Op& op = push(OpKind::MatMul, il, std::move(label));
        op.in = in;
        op.out = out;
        op.weight = &weight;
        op.bias = bias && bias->present() ? bias : nullptr;
    }
    void add(int il, std::string label, BufferId a, BufferId b) {
        Op& op = push(OpKind::Add, il, std::move(label));
        op.in = a;
        op.addend = b;
        op.out = a;
    }
    Op& headOp(OpKind kind, int il, std::string label, BufferId buf, int heads, const model::WeightRef* weight) {
        Op& op = push(kind, il, std::move(label));
        op.in = buf;
        op.out = buf;
        op.heads = heads;
        op.weight = weight;
        return op;
    }

    void attentionBlock(int il, const model::LayerWeights& l) {
        const BufferId q = buffer("q", c_.qDim()), k = buffer("k", c_.kvDim()), v = buffer("v", c_.kvDim());
        const BufferId attn = buffer("attn_out", c_.qDim()), proj = buffer("block_out", c_.nEmbd);
        norm(il, "attn_norm", x_, xn_, l.attnNorm);
        matMul(il, "attn_q", xn_, q, l.wq, &l.bq);
        matMul(il, "attn_k", xn_, k, l.wk, &l.bk);
        matMul(il, "attn_v", xn_, v, l.wv, &l.bv);
        if (c_.qkNorm) {
            headOp(OpKind::HeadNorm, il, "attn_q_norm", q, c_.nHead, &l.qNorm);
            headOp(OpKind::HeadNorm, il, "attn_k_norm", k, c_.nHeadKv, &l.kNorm);
        }
        const model::WeightRef* freqs = g_.weights->ropeFreqs.present() ? &g_.weights->ropeFreqs : nullptr;
        const int32_t window = c_.slidingLayer(il) ? c_.slidingWindow : 0;
        if (window > 0) freqs = nullptr;  // rope_freqs belong to the global layers' rope
        headOp(OpKind::Rope, il, "rope_q", q, c_.nHead, freqs).window = window;
        headOp(OpKind::Rope, il, "rope_k", k, c_.nHeadKv, freqs).window = window;
        Op& op = push(OpKind::Attention, il, "attention");
        op.in = q;
        op.k = k;
        op.v = v;
        op.out = attn;
        op.heads = c_.nHead;
        op.window = window;
        matMul(il, "attn_output", attn, proj, l.wo);
        if (c_.postNorms) norm(il, "post_attention_norm", proj, proj, l.postAttnNorm);
        add(il, "attn_residual", x_, proj);
    }

    void denseFfnBlock(int il, const model::LayerWeights& l) {
        const BufferId gate = buffer("ffn_gate", c_.nFf), up = buffer("ffn_up", c_.nFf);
        const BufferId proj = buffer("block_out", c_.nEmbd);
        norm(il, "ffn_norm", x_, xn_, l.ffnNorm);
        matMul(il, "ffn_gate", xn_, gate, l.ffnGate);
        matMul(il, "ffn_up", xn_, up, l.ffnUp);
        Op& op = push(OpKind::SwiGlu, il, c_.geluFfn ? "ffn_geglu" : "ffn_swiglu");
        op.in = gate;
        op.up = up;
        op.out = gate;
        op.gelu = c_.geluFfn;
        matMul(il, "ffn_down", gate, proj, l.ffnDown);
        if (c_.postNorms) norm(il, "post_ffw_norm", proj, proj, l.postFfnNorm);
        add(il, "ffn_residual", x_, proj);
    }

    void moeBlock(int il, const model::LayerWeights& l) {
        const BufferId ids = buffer("moe_ids", c_.nExpertUsed, ElemType::I32);
        const BufferId weights = buffer("moe_weights", c_.nExpertUsed);
        const BufferId proj = buffer("block_out", c_.nEmbd);
        norm(il, "ffn_norm", x_, xn_, l.ffnNorm);
        Op& route = push(OpKind::MoeRoute, il, "moe_router");
        route.in = xn_;
        route.expertIds = ids;
        route.expertWeights = weights;
        route.weight = &l.router;
        Op& ffn = push(OpKind::MoeFfn, il, "moe_experts");
        ffn.in = xn_;
        ffn.expertIds = ids;
        ffn.expertWeights = weights;
        ffn.out = proj;
        ffn.weight = &l.gateExps;
        ffn.upWeight = &l.upExps;
        ffn.downWeight = &l.downExps;
        if (l.shared.up.present()) buildSharedExpert(g_, il, xn_, proj);
        add(il, "ffn_residual", x_, proj);
    }

    const model::ModelConfig& c_;
    Graph g_;
    BufferId x_ = kNoBuffer, xn_ = kNoBuffer;
};

}  // namespace

Graph buildDecodeGraph(const model::ModelConfig& config, const model::ModelWeights& weights) {
    return Builder(config, weights).build();
}

}  // namespace zinc::graph
