#include "model/model_weights.h"

#include <fmt/format.h>

#include "model/gguf/gguf_file.h"
#include "model/model_config.h"
#include "model/model_error.h"
#include "model/hybrid_weights.h"
#include "model/weight_binding.h"

namespace zinc::model {
namespace {

std::string shapeText(const GgufTensorInfo& t) {
    std::string s = "{";
    for (uint32_t i = 0; i < t.nDims; ++i) s += fmt::format("{}{}", i ? ", " : "", t.ne[i]);
    return s + "}";
}

}  // namespace

WeightRef bindTensor(const GgufFile& file, const std::string& name, std::initializer_list<int64_t> shape) {
    const GgufTensorInfo* t = file.findTensor(name);
    if (!t) throw ModelError(fmt::format("{}: missing tensor {}", file.path(), name));
    std::array<uint64_t, 4> want{1, 1, 1, 1};
    size_t i = 0;
    for (int64_t d : shape) want[i++] = static_cast<uint64_t>(d);
    if (t->ne != want) {
        std::string expected = "{";
        i = 0;
        for (int64_t d : shape) expected += fmt::format("{}{}", i++ ? ", " : "", d);
        throw ModelError(fmt::format("{}: tensor {} has shape {}, expected {}", file.path(), name,
                                     shapeText(*t), expected + "}"));
    }
    const auto& traits = traitsOf(t->type);
    if (!traits.computable)
        throw ModelError(fmt::format("{}: tensor {} has type {}, which zinc-rt does not support "
                                     "(supported: F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS)",
                                     file.path(), name, traits.name));
    WeightRef w;
    w.name = name;
    w.type = t->type;
    w.cols = static_cast<int64_t>(t->ne[0]);
    w.rows = static_cast<int64_t>(t->ne[1]);
    w.stack = static_cast<int64_t>(t->ne[2]);
    w.rowBytes = rowBytes(t->type, t->ne[0]);
    w.data = t->data;
    w.fileOffset = file.dataOffset() + t->offset;
    w.nbytes = t->nbytes;
    return w;
}

// Norm weights, biases and rope_freqs are applied element-wise in fp32.
WeightRef bindNorm(const GgufFile& file, const std::string& name, int64_t n) {
    WeightRef w = bindTensor(file, name, {n});
    if (w.type != GgmlType::F32)
        throw ModelError(fmt::format("{}: tensor {} has type {}, expected F32 (an element-wise vector)", file.path(), name,
                                     ggmlTypeName(w.type)));
    return w;
}

namespace {

LayerWeights bindLayer(const GgufFile& file, const ModelConfig& c, int il) {
    if (c.hybrid.enabled()) return bindHybridLayer(file, c, il);
    const std::string p = fmt::format("blk.{}.", il);
    LayerWeights l;
    l.attnNorm = bindNorm(file, p + "attn_norm.weight", c.nEmbd);
    l.wq = bindTensor(file, p + "attn_q.weight", {c.nEmbd, c.qDim()});
    l.wk = bindTensor(file, p + "attn_k.weight", {c.nEmbd, c.kvDim()});
    l.wv = bindTensor(file, p + "attn_v.weight", {c.nEmbd, c.kvDim()});
    l.wo = bindTensor(file, p + "attn_output.weight", {c.qDim(), c.nEmbd});
    if (c.qkvBias) {
        l.bq = bindNorm(file, p + "attn_q.bias", c.qDim());
        l.bk = bindNorm(file, p + "attn_k.bias", c.kvDim());
        l.bv = bindNorm(file, p + "attn_v.bias", c.kvDim());
    }
    if (c.qkNorm) {
        l.qNorm = bindNorm(file, p + "attn_q_norm.weight", c.headDim);
        l.kNorm = bindNorm(file, p + "attn_k_norm.weight", c.headDim);
    }
    l.ffnNorm = bindNorm(file, p + "ffn_norm.weight", c.nEmbd);
    if (c.postNorms) {
        l.postAttnNorm = bindNorm(file, p + "post_attention_norm.weight", c.nEmbd);
        l.postFfnNorm = bindNorm(file, p + "post_ffw_norm.weight", c.nEmbd);
    }
    if (c.isMoe()) {
        l.router = bindTensor(file, p + "ffn_gate_inp.weight", {c.nEmbd, c.nExpert});
        l.gateExps = bindTensor(file, p + "ffn_gate_exps.weight", {c.nEmbd, c.nFfExpert, c.nExpert});
        l.upExps = bindTensor(file, p + "ffn_up_exps.weight", {c.nEmbd, c.nFfExpert, c.nExpert});
        l.downExps = bindTensor(file, p + "ffn_down_exps.weight", {c.nFfExpert, c.nEmbd, c.nExpert});
    } else {
        l.ffnGate = bindTensor(file, p + "ffn_gate.weight", {c.nEmbd, c.nFf});
        l.ffnUp = bindTensor(file, p + "ffn_up.weight", {c.nEmbd, c.nFf});
        l.ffnDown = bindTensor(file, p + "ffn_down.weight", {c.nFf, c.nEmbd});
    }
    return l;
}

}  // namespace

ModelWeights ModelWeights::bind(const GgufFile& file, const ModelConfig& c) {
    ModelWeights w;
    w.tokenEmbd = bindTensor(file, "token_embd.weight", {c.nEmbd, c.nVocab});
    w.outputNorm = bindNorm(file, "output_norm.weight", c.nEmbd);
    w.output = c.tiedEmbeddings ? w.tokenEmbd : bindTensor(file, "output.weight", {c.nEmbd, c.nVocab});
    if (file.findTensor("rope_freqs.weight")) w.ropeFreqs = bindNorm(file, "rope_freqs.weight", c.ropeDim / 2);
    w.layers.reserve(static_cast<size_t>(c.nLayer));
    for (int il = 0; il < c.nLayer; ++il) w.layers.push_back(bindLayer(file, c, il));
    return w;
}

uint64_t ModelWeights::totalBytes() const {
    uint64_t total = tokenEmbd.nbytes + outputNorm.nbytes + ropeFreqs.nbytes + (output.data == tokenEmbd.data ? 0 : output.nbytes);
    for (const auto& l : layers)
        for (const WeightRef* r : {&l.attnNorm, &l.wq, &l.wk, &l.wv, &l.wo, &l.bq, &l.bk, &l.bv, &l.postAttnNorm, &l.postFfnNorm, &l.qNorm, &l.kNorm, &l.ffnNorm,
                                   &l.ffnGate, &l.ffnUp, &l.ffnDown, &l.router, &l.gateExps, &l.upExps,
                                   &l.downExps, &l.deltaNet.qkv, &l.deltaNet.gate, &l.deltaNet.conv,
                                   &l.deltaNet.dtBias, &l.deltaNet.a, &l.deltaNet.alpha, &l.deltaNet.beta,
                                   &l.deltaNet.norm, &l.deltaNet.out, &l.shared.gate, &l.shared.up, &l.shared.down,
                                   &l.shared.inputGate})
            total += r->nbytes;
    return total;
}

}  // namespace zinc::model
