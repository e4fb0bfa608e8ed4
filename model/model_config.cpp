#include "model/model_config.h"

#include <fmt/format.h>

#include <cmath>

#include "model/gguf/gguf_file.h"

namespace zinc::model {
namespace {

Arch parseArch(const GgufFile& file, const std::string& name) {
    if (name == "llama") return Arch::Llama;
    if (name == "qwen2") return Arch::Qwen2;
    if (name == "qwen3") return Arch::Qwen3;
    if (name == "qwen3moe") return Arch::Qwen3Moe;
    if (name == "gemma3") return Arch::Gemma3;
    if (name == "qwen35") return Arch::Qwen35;
    if (name == "qwen35moe") return Arch::Qwen35Moe;
    throw ModelError(fmt::format(
        "{}: unsupported architecture '{}' (general.architecture); supported: llama, qwen2, qwen3, qwen3moe, gemma3, qwen35, qwen35moe",
        file.path(), name));
}

int32_t positive(const GgufFile& file, const std::string& key, uint64_t value, uint64_t limit) {
    if (value == 0 || value > limit)
        throw ModelError(fmt::format("{}: key {} = {} is out of range (1..{})", file.path(), key, value, limit));
    return static_cast<int32_t>(value);
}

// The embedding table is the truth (tokenizer vocabularies may be shorter than the padded
// table, never longer); `{arch}.vocab_size` serves files whose table is checked later.
int32_t vocabSize(const GgufFile& file, const std::string& arch) {
    if (const auto* embd = file.findTensor("token_embd.weight"))
        return positive(file, "token_embd.weight ne[1]", embd->ne[1], 1u << 24);
    if (auto n = file.findU64(arch + ".vocab_size")) return positive(file, arch + ".vocab_size", *n, 1u << 24);
    throw ModelError(fmt::format("{}: missing tensor token_embd.weight", file.path()));
}

void checkConsistency(const GgufFile& file, const ModelConfig& c) {
    if (c.nHead % c.nHeadKv != 0)
        throw ModelError(fmt::format("{}: head_count {} is not a multiple of head_count_kv {}",
                                     file.path(), c.nHead, c.nHeadKv));
    if (c.headDim % 2 != 0 || c.ropeDim > c.headDim || c.ropeDim % 2 != 0)
        throw ModelError(fmt::format("{}: head dim {} / rope dims {} do not fit RoPE", file.path(),
                                     c.headDim, c.ropeDim));
    if (c.isMoe() && (c.nExpertUsed <= 0 || c.nExpertUsed > c.nExpert))
        throw ModelError(fmt::format("{}: expert_used_count {} must be in 1..expert_count {}",
                                     file.path(), c.nExpertUsed, c.nExpert));
}

// gemma3 as llama.cpp's loader reads it: sliding_window_pattern (default 6: every 6th layer
// global), the sliding layers' rope base (freq_base_swa, default 1e4).
void readGemma3(const GgufFile& file, const std::string& a, ModelConfig& c) {
    c.embedScale = std::sqrt(static_cast<float>(c.nEmbd));
    c.postNorms = true;
    c.geluFfn = true;
    c.preScaleQuery = true;
    c.slidingWindow = static_cast<int32_t>(file.findU64(a + "attention.sliding_window").value_or(0));
    c.slidingPeriod = positive(file, a + "attention.sliding_window_pattern",
                               file.findU64(a + "attention.sliding_window_pattern").value_or(6), 4096);
    c.ropeBaseSwa = file.findF32(a + "rope.freq_base_swa").value_or(10000.0f);
}

}  // namespace

const char* archName(Arch arch) {
    switch (arch) {
        case Arch::Llama: return "llama";
        case Arch::Qwen2: return "qwen2";
        case Arch::Qwen3: return "qwen3";
        case Arch::Qwen3Moe: return "qwen3moe";
        case Arch::Qwen35: return "qwen35";
        case Arch::Qwen35Moe: return "qwen35moe";
        case Arch::Gemma3: return "gemma3";
    }
    return "?";
}

ModelConfig ModelConfig::fromGguf(const GgufFile& file) {
    ModelConfig c;
    c.archName = file.getString("general.architecture");
    c.arch = parseArch(file, c.archName);
    c.name = file.findString("general.name").value_or(c.archName);
    const std::string a = c.archName + ".";
    constexpr uint64_t kBig = 1u << 20;
    c.nLayer = positive(file, a + "block_count", file.getU64(a + "block_count"), 4096);
    c.nEmbd = positive(file, a + "embedding_length", file.getU64(a + "embedding_length"), kBig);
    c.nHead = positive(file, a + "attention.head_count", file.getU64(a + "attention.head_count"), 4096);
    c.nHeadKv = positive(file, a + "attention.head_count_kv",
                         file.findU64(a + "attention.head_count_kv").value_or(c.nHead), 4096);
    c.headDim = positive(file, a + "attention.key_length",
                         file.findU64(a + "attention.key_length").value_or(c.nEmbd / c.nHead), 4096);
    if (auto v = file.findU64(a + "attention.value_length"); v && *v != static_cast<uint64_t>(c.headDim))
        throw ModelError(fmt::format("{}: value_length {} differs from key_length {} (not supported)",
                                     file.path(), *v, c.headDim));
    c.nCtxTrain = positive(file, a + "context_length", file.findU64(a + "context_length").value_or(2048), 1u << 24);
    c.normEps = file.findF32(a + "attention.layer_norm_rms_epsilon").value_or(1e-5f);
    c.ropeBase = file.findF32(a + "rope.freq_base").value_or(10000.0f);
    c.ropeDim = positive(file, a + "rope.dimension_count",
                         file.findU64(a + "rope.dimension_count").value_or(c.headDim), 4096);
    c.ropeScaling = RopeScaling::fromGguf(file, c.archName, c.nCtxTrain);
    c.nVocab = vocabSize(file, c.archName);
    c.tiedEmbeddings = file.findTensor("output.weight") == nullptr;
    c.qkNorm = c.arch == Arch::Qwen3 || c.arch == Arch::Qwen3Moe || c.arch == Arch::Gemma3 || c.arch == Arch::Qwen35 ||
               c.arch == Arch::Qwen35Moe;
    c.qkvBias = c.arch == Arch::Qwen2;
    c.ropeStyle = c.arch == Arch::Llama ? RopeStyle::Norm : RopeStyle::Neox;
    if (c.arch == Arch::Gemma3) readGemma3(file, a, c);
    if (c.arch == Arch::Qwen3Moe || c.arch == Arch::Qwen35Moe) {
        c.nExpert = positive(file, a + "expert_count", file.getU64(a + "expert_count"), 4096);
        c.nExpertUsed = positive(file, a + "expert_used_count", file.getU64(a + "expert_used_count"), 4096);
        c.nFfExpert = positive(file, a + "expert_feed_forward_length",
                               file.getU64(a + "expert_feed_forward_length"), kBig);
        c.normTopkProb = file.findBool(a + "expert_weights_norm").value_or(true);
        c.nFf = static_cast<int32_t>(file.findU64(a + "feed_forward_length").value_or(0));
    } else {
        c.nFf = positive(file, a + "feed_forward_length", file.getU64(a + "feed_forward_length"), kBig);
    }
    if (c.arch == Arch::Qwen35 || c.arch == Arch::Qwen35Moe) readHybridConfig(file, c);
    checkConsistency(file, c);
    return c;
}

std::string ModelConfig::summary() const {
    std::string s = fmt::format("{} ({}): {} layers, d={}, heads {}/{} x {}, ffn {}, vocab {}", name,
                                archName, nLayer, nEmbd, nHead, nHeadKv, headDim, nFf, nVocab);
    if (isMoe()) s += fmt::format(", experts {} (top {}, ffn {})", nExpert, nExpertUsed, nFfExpert);
    if (hybrid.enabled())
        s += fmt::format(", gated DeltaNet {}/{} heads x {} (full attention every {})", hybrid.keyHeads,
                         hybrid.valueHeads, hybrid.headDim, hybrid.fullAttentionInterval);
    if (hybrid.sharedFf > 0) s += fmt::format(", shared expert ffn {}", hybrid.sharedFf);
    if (tiedEmbeddings) s += ", tied embeddings";
    if (slidingWindow > 0) s += fmt::format(", sliding window {} (every {}th layer global)", slidingWindow, slidingPeriod);
    if (ropeScaling.type != RopeScalingType::None)
        s += fmt::format(", rope scaling {} x{}", ropeScalingName(ropeScaling.type), ropeScaling.factor);
    return s;
}

}  // namespace zinc::model
