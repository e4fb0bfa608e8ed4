#include "model/make_model/quant_mix.h"

namespace zinc::model {
namespace {

// llama_ftype numbers (llama.cpp include/llama.h).
constexpr uint32_t kFtypeAllF32 = 0, kFtypeF16 = 1, kFtypeQ4_0 = 2, kFtypeQ8_0 = 7, kFtypeQ2_K = 10, kFtypeQ3_K_M = 12,
                   kFtypeQ4_K_M = 15, kFtypeQ5_K_M = 17, kFtypeIQ4_XS = 30;

enum class Category { TokenEmbd, Output, AttnQkv, AttnV, AttnK, AttnOutput, FfnDown, Other };

// tensor_get_category in llama-quant.cpp: substring matches on the name.
Category categoryOf(const std::string& name) {
    auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
    if (name == "output.weight") return Category::Output;
    if (name == "token_embd.weight") return Category::TokenEmbd;
    if (has("attn_qkv.weight")) return Category::AttnQkv;
    if (has("attn_v.weight")) return Category::AttnV;
    if (has("attn_k.weight")) return Category::AttnK;
    if (has("attn_output.weight")) return Category::AttnOutput;
    if (has("ffn_down")) return Category::FfnDown;
    return Category::Other;
}

// llama-quant.cpp's use_more_bits: the first and last eighth of the layers and every third
// layer in between get more bits for attn_v and ffn_down.
bool useMoreBits(int layer, int nLayers) {
    return layer < nLayers / 8 || layer >= 7 * nLayers / 8 || (layer - nLayers / 8) % 3 == 2;
}

bool isKMix(uint32_t ftype) { return ftype == kFtypeQ4_K_M || ftype == kFtypeQ5_K_M; }

GgmlType mixRule(const QuantMix& mix, const PlannedTensor& t, const ModelPreset& p) {
    GgmlType type = mix.defaultType;
    const Category cat = categoryOf(t.name);
    const int nLayers = static_cast<int>(p.nLayers);
    // Tensor order is by layer, so llama.cpp's running attn_v / ffn_down counters equal the
    // layer number, and an 8-expert model (Mixtral) gets its special cases.
    const bool eightExperts = p.nExperts == 8;
    const uint32_t gqa = p.nKvHeads > 0 ? p.nHeads / p.nKvHeads : 1;  // n_gqa()
    if (cat == Category::Output || (p.tiedEmbeddings && cat == Category::TokenEmbd)) {
        if (t.ne[0] % traitsOf(type).blockElems != 0) return GgmlType::Q8_0;
        return type == GgmlType::Q8_0 ? type : GgmlType::Q6_K;
    }
    switch (cat) {
    case Category::AttnV:
        if (mix.fileType == kFtypeQ2_K) type = gqa >= 4 ? GgmlType::Q4_K : GgmlType::Q3_K;
        if (mix.fileType == kFtypeQ3_K_M) type = t.layer < 2 ? GgmlType::Q5_K : GgmlType::Q4_K;
        if (mix.fileType == kFtypeIQ4_XS && gqa >= 4) type = GgmlType::Q5_K;
        if (isKMix(mix.fileType) && useMoreBits(t.layer, nLayers)) type = GgmlType::Q6_K;
        if (eightExperts) type = GgmlType::Q8_0;
        break;
    case Category::AttnK:
        if (eightExperts) type = GgmlType::Q8_0;
        break;
    case Category::FfnDown: {
        // With a shared expert both ffn_down_exps and ffn_down_shexp match "ffn_down": the
        // running counter steps twice per layer.
        const bool two = p.hybrid.sharedFfn > 0;
        const int i = two ? 2 * t.layer + (t.name.find("_shexp") != std::string::npos ? 1 : 0) : t.layer;
        if (isKMix(mix.fileType) && useMoreBits(i, two ? 2 * nLayers : nLayers)) type = GgmlType::Q6_K;
        if (mix.fileType == kFtypeQ2_K) type = GgmlType::Q3_K;
        if (mix.fileType == kFtypeQ3_K_M) type = t.layer < nLayers / 16 ? GgmlType::Q5_K : GgmlType::Q4_K;
        if (mix.fileType == kFtypeIQ4_XS && t.layer < nLayers / 8) type = GgmlType::Q5_K;  // no imatrix
        break;
    }
    case Category::AttnQkv:  // the fused q|k|v of DeltaNet layers: one step up in the K mixes
        if (mix.fileType == kFtypeQ3_K_M) type = GgmlType::Q4_K;
        if (mix.fileType == kFtypeQ4_K_M) type = GgmlType::Q5_K;
        if (mix.fileType == kFtypeQ5_K_M) type = GgmlType::Q6_K;
        break;
    case Category::AttnOutput:
        if (eightExperts) {
            if (mix.fileType == kFtypeQ4_K_M || mix.fileType == kFtypeQ2_K || mix.fileType == kFtypeQ3_K_M ||
                mix.fileType == kFtypeIQ4_XS)
                type = GgmlType::Q5_K;
        } else if (mix.fileType == kFtypeQ2_K) {
            type = GgmlType::Q3_K;
        } else if (mix.fileType == kFtypeQ3_K_M) {
            type = GgmlType::Q4_K;
        }
        break;
    default:
        break;
    }
    return type;
}

// tensor_type_fallback: rows that are not whole super-blocks take a 32-block type.
GgmlType fallback(GgmlType type, uint64_t rowLength) {
    if (rowLength % traitsOf(type).blockElems == 0) return type;
    switch (type) {
    case GgmlType::Q2_K:
    case GgmlType::Q3_K: type = GgmlType::Q4_0; break;
    case GgmlType::IQ4_XS: type = GgmlType::IQ4_NL; break;
    case GgmlType::Q4_K: type = GgmlType::Q5_0; break;
    case GgmlType::Q5_K: type = GgmlType::Q5_1; break;
    case GgmlType::Q6_K: type = GgmlType::Q8_0; break;
    default: break;
    }
    return rowLength % traitsOf(type).blockElems == 0 ? type : GgmlType::F16;
}

}  // namespace

const std::vector<QuantMix>& quantMixes() {
    static const std::vector<QuantMix> mixes = {
        {"q4_k_m", "llama.cpp Q4_K_M: Q4_K; Q6_K output and attn_v/ffn_down on use_more_bits layers",
         kFtypeQ4_K_M, GgmlType::Q4_K, true},
        {"q5_k_m", "llama.cpp Q5_K_M: Q5_K; Q6_K output and attn_v/ffn_down on use_more_bits layers",
         kFtypeQ5_K_M, GgmlType::Q5_K, true},
        {"q3_k_m", "llama.cpp Q3_K_M: Q3_K; Q4_K attn_output/ffn_down (Q5_K in the first 16th), attn_v Q5_K in "
                   "layers 0-1 else Q4_K, output Q6_K",
         kFtypeQ3_K_M, GgmlType::Q3_K, true},
        {"q2_k", "llama.cpp Q2_K: Q2_K; Q3_K attn_output/ffn_down, attn_v Q4_K (Q3_K below 4 query heads per kv "
                 "head), output Q6_K",
         kFtypeQ2_K, GgmlType::Q2_K, true},
        {"iq4_xs", "llama.cpp IQ4_XS (no imatrix): IQ4_XS; Q5_K ffn_down in the first 8th and attn_v at 4+ query "
                   "heads per kv head, output Q6_K",
         kFtypeIQ4_XS, GgmlType::IQ4_XS, true},
        {"q8_0", "llama.cpp Q8_0: every matrix Q8_0", kFtypeQ8_0, GgmlType::Q8_0, true},
        {"q4_0", "llama.cpp Q4_0: Q4_0, output Q6_K", kFtypeQ4_0, GgmlType::Q4_0, true},
        {"f16", "every matrix F16 (as convert_hf_to_gguf --outtype f16)", kFtypeF16, GgmlType::F16, false},
        {"f32", "everything F32", kFtypeAllF32, GgmlType::F32, false},
    };
    return mixes;
}

std::optional<QuantMix> findQuantMix(std::string_view name) {
    for (const auto& m : quantMixes())
        if (m.name == name) return m;
    return std::nullopt;
}

GgmlType chooseTensorType(const QuantMix& mix, const PlannedTensor& t, const ModelPreset& p) {
    // tensor_allows_quantization: 1-D tensors, norms and the router are never quantized and
    // the converter writes them as F32.
    if (t.role == TensorRole::Norm || t.role == TensorRole::Router || t.nDims < 2) return GgmlType::F32;
    if (!mix.quantized) return mix.defaultType;
    return fallback(mixRule(mix, t, p), t.ne[0]);
}

}  // namespace zinc::model
