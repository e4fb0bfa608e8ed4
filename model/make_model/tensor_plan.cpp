#include "model/make_model/tensor_plan.h"

namespace zinc::model {
namespace {

PlannedTensor tensor(std::string name, TensorRole role, std::initializer_list<uint64_t> ne, int layer = -1) {
    PlannedTensor t{std::move(name), role, static_cast<uint32_t>(ne.size()), {1, 1, 1, 1}, layer};
    size_t d = 0;
    for (uint64_t n : ne) t.ne[d++] = n;
    return t;
}

void planLayer(const ModelPreset& p, int layer, std::vector<PlannedTensor>& out) {
    if (p.hybrid.enabled()) return planHybridLayer(p, layer, out);
    const std::string blk = "blk." + std::to_string(layer) + ".";
    const uint64_t d = p.dModel;
    const uint64_t qDim = uint64_t{p.nHeads} * p.headDim;
    const uint64_t kvDim = uint64_t{p.nKvHeads} * p.headDim;
    out.push_back(tensor(blk + "attn_norm.weight", TensorRole::Norm, {d}, layer));
    out.push_back(tensor(blk + "ffn_norm.weight", TensorRole::Norm, {d}, layer));
    if (p.qkNorm) {
        out.push_back(tensor(blk + "attn_q_norm.weight", TensorRole::Norm, {p.headDim}, layer));
        out.push_back(tensor(blk + "attn_k_norm.weight", TensorRole::Norm, {p.headDim}, layer));
    }
    if (p.postNorms) {
        out.push_back(tensor(blk + "post_attention_norm.weight", TensorRole::Norm, {d}, layer));
        out.push_back(tensor(blk + "post_ffw_norm.weight", TensorRole::Norm, {d}, layer));
    }
    // A weight mapping K inputs to N outputs has ne = {K, N}.
    out.push_back(tensor(blk + "attn_q.weight", TensorRole::Weight, {d, qDim}, layer));
    out.push_back(tensor(blk + "attn_k.weight", TensorRole::Weight, {d, kvDim}, layer));
    out.push_back(tensor(blk + "attn_v.weight", TensorRole::Weight, {d, kvDim}, layer));
    out.push_back(tensor(blk + "attn_output.weight", TensorRole::Weight, {qDim, d}, layer));
    if (p.isMoe()) {
        const uint64_t f = p.expertFfn, e = p.nExperts;
        out.push_back(tensor(blk + "ffn_gate_inp.weight", TensorRole::Router, {d, e}, layer));
        out.push_back(tensor(blk + "ffn_gate_exps.weight", TensorRole::Weight, {d, f, e}, layer));
        out.push_back(tensor(blk + "ffn_up_exps.weight", TensorRole::Weight, {d, f, e}, layer));
        out.push_back(tensor(blk + "ffn_down_exps.weight", TensorRole::Weight, {f, d, e}, layer));
    } else {
        const uint64_t f = p.ffn;
        out.push_back(tensor(blk + "ffn_gate.weight", TensorRole::Weight, {d, f}, layer));
        out.push_back(tensor(blk + "ffn_up.weight", TensorRole::Weight, {d, f}, layer));
        out.push_back(tensor(blk + "ffn_down.weight", TensorRole::Weight, {f, d}, layer));
    }
}

}  // namespace

std::vector<PlannedTensor> planTensors(const ModelPreset& p) {
    std::vector<PlannedTensor> out;
    out.push_back(tensor("token_embd.weight", TensorRole::TokenEmbedding, {p.dModel, p.vocab}));
    out.push_back(tensor("output_norm.weight", TensorRole::Norm, {p.dModel}));
    if (!p.tiedEmbeddings) out.push_back(tensor("output.weight", TensorRole::Output, {p.dModel, p.vocab}));
    // Divisors near 1 (a norm's init), not Llama 3's values: the shape and the code path it takes.
    if (p.ropeFreqs) out.push_back(tensor("rope_freqs.weight", TensorRole::Norm, {p.headDim / 2}));
    for (uint32_t layer = 0; layer < p.nLayers; ++layer) planLayer(p, static_cast<int>(layer), out);
    return out;
}

}  // namespace zinc::model
