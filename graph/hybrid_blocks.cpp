// The layer blocks of Qwen3.5 / Qwen3.6 hybrids (llama.cpp archs qwen35, qwen35moe).
//
// Gated DeltaNet layer, per token t (K key heads, V value heads of dim d; value head h reads
// key head h mod K):
//   qkv = attn_qkv · xn            (q | k | v: K·d, K·d, V·d)
//   z   = attn_gate · xn           (V·d, the output gate)
//   c   = silu(conv1d(qkv))        over the last conv_kernel inputs (window kept in conv_state)
//   q, k = l2norm per head; q /= √d
//   g   = ssm_a · softplus(ssm_alpha · xn + ssm_dt.bias)   (per value head; decay = exp(g) < 1)
//   β   = sigmoid(ssm_beta · xn)
//   S   = exp(g) S;  S += β (v - S k) kᵀ;  o = S q            (S: d x d per value head, kept)
//   out = ssm_out · (rmsnorm_head(o) * ssm_norm * silu(z))
// Gated full attention layer: attn_q gives per head the query then an output gate; QK-norm,
// RoPE on the first rope.dimension_count dims, attention, then out *= sigmoid(gate).
#include <fmt/format.h>

#include "graph/graph.h"

namespace zinc::graph {
namespace {

void matMul(Graph& g, int32_t il, const char* label, BufferId in, BufferId out, const model::WeightRef& w) {
    Op& op = appendOp(g, OpKind::MatMul, il, label);
    op.in = in;
    op.out = out;
    op.weight = &w;
}

void addInto(Graph& g, int32_t il, const char* label, BufferId acc, BufferId b) {
    Op& op = appendOp(g, OpKind::Add, il, label);
    op.in = acc;
    op.addend = b;
    op.out = acc;
}

void sigmoidGate(Graph& g, int32_t il, const char* label, BufferId inOut, BufferId gate) {
    Op& op = appendOp(g, OpKind::SigmoidGate, il, label);
    op.in = inOut;
    op.gate = gate;
    op.out = inOut;
}

void rmsNorm(Graph& g, int32_t il, BufferId in, BufferId out, const model::WeightRef& w) {
    Op& op = appendOp(g, OpKind::RmsNorm, il, "attn_norm");
    op.in = in;
    op.out = out;
    op.weight = &w;
}

}  // namespace

void buildDeltaNetBlock(Graph& g, int32_t il, BufferId x, BufferId xn) {
    const auto& c = *g.config;
    const auto& h = c.hybrid;
    const auto& w = g.weights->layers[static_cast<size_t>(il)].deltaNet;
    const BufferId qkv = findOrAddBuffer(g, "dn_qkv", h.convChannels());
    const BufferId conv = findOrAddBuffer(g, "dn_conv", h.convChannels());
    const BufferId z = findOrAddBuffer(g, "dn_z", h.valueDim());
    const BufferId alpha = findOrAddBuffer(g, "dn_alpha", h.valueHeads);
    const BufferId beta = findOrAddBuffer(g, "dn_beta", h.valueHeads);
    const BufferId o = findOrAddBuffer(g, "dn_out", h.valueDim());
    const BufferId proj = findOrAddBuffer(g, "block_out", c.nEmbd);
    const BufferId convState = findOrAddBuffer(g, fmt::format("conv_state.{}", il),
                                               static_cast<int64_t>(h.convStateFloats()), ElemType::F32, true);
    const BufferId deltaState = findOrAddBuffer(g, fmt::format("delta_state.{}", il),
                                                static_cast<int64_t>(h.deltaStateFloats()), ElemType::F32, true);
    rmsNorm(g, il, x, xn, g.weights->layers[static_cast<size_t>(il)].attnNorm);
    // qkv last of the four projections of xn, right before its conv: graph::fuse may then join
    // the two (MatMulConv) and the four still run side by side (qkv first, then its conv and the
    // other three: 0.25 % slower on the H200, run 186).
    matMul(g, il, "attn_gate", xn, z, w.gate);
    matMul(g, il, "ssm_alpha", xn, alpha, w.alpha);
    matMul(g, il, "ssm_beta", xn, beta, w.beta);
    matMul(g, il, "attn_qkv", xn, qkv, w.qkv);
    Op& cv = appendOp(g, OpKind::SsmConv, il, "ssm_conv");
    cv.in = qkv;
    cv.state = convState;
    cv.out = conv;
    cv.weight = &w.conv;
    Op& dn = appendOp(g, OpKind::DeltaNet, il, "delta_net");
    dn.in = conv;
    dn.alpha = alpha;
    dn.beta = beta;
    dn.out = o;
    dn.state = deltaState;
    dn.weight = &w.a;
    dn.biasWeight = &w.dtBias;
    dn.heads = h.valueHeads;
    Op& gn = appendOp(g, OpKind::GatedNorm, il, "ssm_norm");
    gn.in = o;
    gn.gate = z;
    gn.out = o;
    gn.weight = &w.norm;
    gn.heads = h.valueHeads;
    matMul(g, il, "ssm_out", o, proj, w.out);
    addInto(g, il, "attn_residual", x, proj);
}

void buildGatedAttentionBlock(Graph& g, int32_t il, BufferId x, BufferId xn) {
    const auto& c = *g.config;
    const auto& l = g.weights->layers[static_cast<size_t>(il)];
    const BufferId qg = findOrAddBuffer(g, "q_gate", 2 * c.qDim());
    const BufferId q = findOrAddBuffer(g, "q", c.qDim()), gate = findOrAddBuffer(g, "attn_gate", c.qDim());
    const BufferId k = findOrAddBuffer(g, "k", c.kvDim()), v = findOrAddBuffer(g, "v", c.kvDim());
    const BufferId attn = findOrAddBuffer(g, "attn_out", c.qDim()), proj = findOrAddBuffer(g, "block_out", c.nEmbd);
    rmsNorm(g, il, x, xn, l.attnNorm);
    // q, k and v side by side (three projections of xn in a row), then the split. Measured on
    // the H200 (run 187, Qwen3.6-35B-A3B shape): 297.4 tok/s against 295.2 with the split in
    // attn_q's matvec epilogue (a MatMulSplit, dropped) and q, split, k, v; k, v, q lost ~1 %.
    matMul(g, il, "attn_q", xn, qg, l.wq);
    matMul(g, il, "attn_k", xn, k, l.wk);
    matMul(g, il, "attn_v", xn, v, l.wv);
    Op& split = appendOp(g, OpKind::SplitGate, il, "attn_q_split");
    split.in = qg;
    split.out = q;
    split.gate = gate;
    split.heads = c.nHead;
    for (const auto& [label, buf, heads, norm] :
         {std::tuple{"attn_q_norm", q, c.nHead, &l.qNorm}, std::tuple{"attn_k_norm", k, c.nHeadKv, &l.kNorm}}) {
        Op& op = appendOp(g, OpKind::HeadNorm, il, label);
        op.in = op.out = buf;
        op.heads = heads;
        op.weight = norm;
    }
    for (const auto& [label, buf, heads] : {std::tuple{"rope_q", q, c.nHead}, std::tuple{"rope_k", k, c.nHeadKv}}) {
        Op& op = appendOp(g, OpKind::Rope, il, label);
        op.in = op.out = buf;
        op.heads = heads;
    }
    Op& at = appendOp(g, OpKind::Attention, il, "attention");
    at.in = q;
    at.k = k;
    at.v = v;
    at.out = attn;
    at.heads = c.nHead;
    sigmoidGate(g, il, "attn_output_gate", attn, gate);
    matMul(g, il, "attn_output", attn, proj, l.wo);
    addInto(g, il, "attn_residual", x, proj);
}

void buildSharedExpert(Graph& g, int32_t il, BufferId xn, BufferId moeOut) {
    const auto& c = *g.config;
    const auto& s = g.weights->layers[static_cast<size_t>(il)].shared;
    const BufferId gate = findOrAddBuffer(g, "shexp_gate", c.hybrid.sharedFf);
    const BufferId up = findOrAddBuffer(g, "shexp_up", c.hybrid.sharedFf);
    const BufferId down = findOrAddBuffer(g, "shexp_out", c.nEmbd);
    const BufferId inputGate = findOrAddBuffer(g, "shexp_input_gate", 1);
    matMul(g, il, "ffn_gate_shexp", xn, gate, s.gate);
    matMul(g, il, "ffn_up_shexp", xn, up, s.up);
    Op& sw = appendOp(g, OpKind::SwiGlu, il, "shexp_swiglu");
    sw.in = gate;
    sw.up = up;
    sw.out = gate;
    matMul(g, il, "ffn_down_shexp", gate, down, s.down);
    matMul(g, il, "ffn_gate_inp_shexp", xn, inputGate, s.inputGate);
    sigmoidGate(g, il, "shexp_gate_sigmoid", down, inputGate);
    addInto(g, il, "shexp_add", moeOut, down);
}

}  // namespace zinc::graph
