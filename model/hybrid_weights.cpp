#include "model/hybrid_weights.h"

#include <fmt/format.h>

#include "model/gguf/gguf_file.h"
#include "model/model_config.h"
#include "model/model_error.h"
#include "model/weight_binding.h"

namespace zinc::model {
namespace {

// Vectors and the conv kernel are read element-wise in fp32.
WeightRef bindF32(const GgufFile& file, const std::string& name, std::initializer_list<int64_t> shape) {
    WeightRef w = bindTensor(file, name, shape);
    if (w.type != GgmlType::F32)
        throw ModelError(fmt::format("{}: tensor {} has type {}, expected F32", file.path(), name, ggmlTypeName(w.type)));
    return w;
}

DeltaNetWeights bindDeltaNet(const GgufFile& file, const ModelConfig& c, const std::string& p) {
    const HybridConfig& h = c.hybrid;
    DeltaNetWeights d;
    d.qkv = bindTensor(file, p + "attn_qkv.weight", {c.nEmbd, h.convChannels()});
    d.gate = bindTensor(file, p + "attn_gate.weight", {c.nEmbd, h.valueDim()});
    d.conv = bindF32(file, p + "ssm_conv1d.weight", {h.convKernel, h.convChannels()});
    d.dtBias = bindF32(file, p + "ssm_dt.bias", {h.valueHeads});
    d.a = bindF32(file, p + "ssm_a", {h.valueHeads});
    d.alpha = bindTensor(file, p + "ssm_alpha.weight", {c.nEmbd, h.valueHeads});
    d.beta = bindTensor(file, p + "ssm_beta.weight", {c.nEmbd, h.valueHeads});
    d.norm = bindNorm(file, p + "ssm_norm.weight", h.headDim);
    d.out = bindTensor(file, p + "ssm_out.weight", {h.valueDim(), c.nEmbd});
    return d;
}

}  // namespace

LayerWeights bindHybridLayer(const GgufFile& file, const ModelConfig& c, int il) {
    const std::string p = fmt::format("blk.{}.", il);
    LayerWeights l;
    l.attnNorm = bindNorm(file, p + "attn_norm.weight", c.nEmbd);
    if (c.hybrid.recurrent(il)) {
        l.deltaNet = bindDeltaNet(file, c, p);
    } else {
        l.wq = bindTensor(file, p + "attn_q.weight", {c.nEmbd, 2 * c.qDim()});
        l.wk = bindTensor(file, p + "attn_k.weight", {c.nEmbd, c.kvDim()});
        l.wv = bindTensor(file, p + "attn_v.weight", {c.nEmbd, c.kvDim()});
        l.wo = bindTensor(file, p + "attn_output.weight", {c.qDim(), c.nEmbd});
        l.qNorm = bindNorm(file, p + "attn_q_norm.weight", c.headDim);
        l.kNorm = bindNorm(file, p + "attn_k_norm.weight", c.headDim);
    }
    // The residual stream's second norm: named post_attention_norm, applied before the FFN.
    l.ffnNorm = bindNorm(file, p + "post_attention_norm.weight", c.nEmbd);
    if (!c.isMoe()) {
        l.ffnGate = bindTensor(file, p + "ffn_gate.weight", {c.nEmbd, c.nFf});
        l.ffnUp = bindTensor(file, p + "ffn_up.weight", {c.nEmbd, c.nFf});
        l.ffnDown = bindTensor(file, p + "ffn_down.weight", {c.nFf, c.nEmbd});
        return l;
    }
    l.router = bindTensor(file, p + "ffn_gate_inp.weight", {c.nEmbd, c.nExpert});
    l.gateExps = bindTensor(file, p + "ffn_gate_exps.weight", {c.nEmbd, c.nFfExpert, c.nExpert});
    l.upExps = bindTensor(file, p + "ffn_up_exps.weight", {c.nEmbd, c.nFfExpert, c.nExpert});
    l.downExps = bindTensor(file, p + "ffn_down_exps.weight", {c.nFfExpert, c.nEmbd, c.nExpert});
    if (c.hybrid.sharedFf > 0) {
        const int64_t ff = c.hybrid.sharedFf;
        l.shared.gate = bindTensor(file, p + "ffn_gate_shexp.weight", {c.nEmbd, ff});
        l.shared.up = bindTensor(file, p + "ffn_up_shexp.weight", {c.nEmbd, ff});
        l.shared.down = bindTensor(file, p + "ffn_down_shexp.weight", {ff, c.nEmbd});
        l.shared.inputGate = bindTensor(file, p + "ffn_gate_inp_shexp.weight", {c.nEmbd});
    }
    return l;
}

}  // namespace zinc::model
