#include "model/make_model/hybrid_preset.h"

#include <string>

#include "model/gguf/gguf_writer.h"
#include "model/make_model/model_preset.h"
#include "model/make_model/tensor_plan.h"
#include "model/make_model/weight_gen.h"

namespace zinc::model {
namespace {

struct LayerTensors {
    const std::string blk;
    int layer;
    std::vector<PlannedTensor>& out;
    void add(const std::string& name, TensorRole role, std::initializer_list<uint64_t> ne) {
        PlannedTensor t{blk + name, role, static_cast<uint32_t>(ne.size()), {1, 1, 1, 1}, layer};
        size_t d = 0;
        for (uint64_t n : ne) t.ne[d++] = n;
        out.push_back(std::move(t));
    }
};

}  // namespace

void planHybridLayer(const ModelPreset& p, int layer, std::vector<PlannedTensor>& out) {
    const HybridShape& h = p.hybrid;
    LayerTensors l{"blk." + std::to_string(layer) + ".", layer, out};
    const uint64_t d = p.dModel;
    l.add("attn_norm.weight", TensorRole::Norm, {d});
    l.add("post_attention_norm.weight", TensorRole::Norm, {d});
    if (h.recurrent(static_cast<uint32_t>(layer))) {
        const uint64_t keyDim = uint64_t{h.keyHeads} * h.headDim, valueDim = uint64_t{h.valueHeads} * h.headDim;
        l.add("attn_qkv.weight", TensorRole::Weight, {d, 2 * keyDim + valueDim});
        l.add("attn_gate.weight", TensorRole::Weight, {d, valueDim});
        // llama-quantize leaves ssm_conv1d in F32 (a small 2-D tensor); Router role = F32.
        l.add("ssm_conv1d.weight", TensorRole::Router, {h.convKernel, 2 * keyDim + valueDim});
        l.add("ssm_dt.bias", TensorRole::Norm, {h.valueHeads});
        l.add("ssm_a", TensorRole::Norm, {h.valueHeads});
        l.add("ssm_beta.weight", TensorRole::Weight, {d, h.valueHeads});
        l.add("ssm_alpha.weight", TensorRole::Weight, {d, h.valueHeads});
        l.add("ssm_norm.weight", TensorRole::Norm, {h.headDim});
        l.add("ssm_out.weight", TensorRole::Weight, {valueDim, d});
    } else {
        const uint64_t qDim = uint64_t{p.nHeads} * p.headDim, kvDim = uint64_t{p.nKvHeads} * p.headDim;
        l.add("attn_q.weight", TensorRole::Weight, {d, 2 * qDim});  // query and output gate per head
        l.add("attn_k.weight", TensorRole::Weight, {d, kvDim});
        l.add("attn_v.weight", TensorRole::Weight, {d, kvDim});
        l.add("attn_output.weight", TensorRole::Weight, {qDim, d});
        l.add("attn_q_norm.weight", TensorRole::Norm, {p.headDim});
        l.add("attn_k_norm.weight", TensorRole::Norm, {p.headDim});
    }
    if (!p.isMoe()) {
        l.add("ffn_gate.weight", TensorRole::Weight, {d, p.ffn});
        l.add("ffn_up.weight", TensorRole::Weight, {d, p.ffn});
        l.add("ffn_down.weight", TensorRole::Weight, {p.ffn, d});
        return;
    }
    const uint64_t f = p.expertFfn, e = p.nExperts;
    l.add("ffn_gate_inp.weight", TensorRole::Router, {d, e});
    l.add("ffn_gate_exps.weight", TensorRole::Weight, {d, f, e});
    l.add("ffn_up_exps.weight", TensorRole::Weight, {d, f, e});
    l.add("ffn_down_exps.weight", TensorRole::Weight, {f, d, e});
    if (h.sharedFfn > 0) {
        l.add("ffn_gate_inp_shexp.weight", TensorRole::Router, {d});
        l.add("ffn_gate_shexp.weight", TensorRole::Weight, {d, h.sharedFfn});
        l.add("ffn_up_shexp.weight", TensorRole::Weight, {d, h.sharedFfn});
        l.add("ffn_down_shexp.weight", TensorRole::Weight, {h.sharedFfn, d});
    }
}

void writeHybridMetadata(GgufWriter& w, const ModelPreset& p) {
    const HybridShape& h = p.hybrid;
    const std::string a = p.arch + ".";
    w.addU32(a + "full_attention_interval", h.fullAttentionInterval);
    w.addU32(a + "rope.dimension_count", h.ropeDim);
    w.addI32Array(a + "rope.dimension_sections", {h.ropeSections.begin(), h.ropeSections.end()});
    w.addU32(a + "ssm.conv_kernel", h.convKernel);
    w.addU32(a + "ssm.state_size", h.headDim);
    w.addU32(a + "ssm.group_count", h.keyHeads);
    w.addU32(a + "ssm.time_step_rank", h.valueHeads);
    w.addU32(a + "ssm.inner_size", h.valueHeads * h.headDim);
    if (h.sharedFfn > 0) w.addU32(a + "expert_shared_feed_forward_length", h.sharedFfn);
}

std::optional<WeightInit> hybridInit(const PlannedTensor& t) {
    const auto endsWith = [&](const char* s) {
        const std::string_view n(t.name), suffix(s);
        return n.size() >= suffix.size() && n.substr(n.size() - suffix.size()) == suffix;
    };
    if (endsWith(".ssm_a")) return WeightInit{-1.0f, 0.3f};        // decay exp(a * softplus(.)) in (0, 1)
    if (endsWith(".ssm_dt.bias")) return WeightInit{0.0f, 0.5f};
    if (endsWith(".ssm_conv1d.weight")) return WeightInit{0.0f, 0.5f};  // 4 taps
    return std::nullopt;
}

}  // namespace zinc::model
