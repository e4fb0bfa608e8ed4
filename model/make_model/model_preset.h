#pragma once
// Model shapes make-model can write: real architectures (from each model's public
// config.json) and tiny ones for tests.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/make_model/hybrid_preset.h"

namespace zinc::model {

struct ModelPreset {
    std::string name;
    std::string description;
    std::string arch;          // general.architecture: "llama", "qwen3", "qwen3moe"
    uint32_t nLayers = 0;
    uint32_t dModel = 0;       // embedding_length
    uint32_t nHeads = 0;
    uint32_t nKvHeads = 0;
    uint32_t headDim = 0;      // key_length = value_length
    uint32_t ffn = 0;          // feed_forward_length (dense FFN; MoE models still record it)
    uint32_t vocab = 0;
    uint32_t contextLength = 0;
    bool tiedEmbeddings = false;  // no output.weight: the output projection reuses token_embd
    bool qkNorm = false;          // attn_q_norm / attn_k_norm per layer (Qwen3)
    float ropeBase = 10000.0f;
    float rmsEps = 1e-5f;
    uint32_t nExperts = 0;        // 0: dense FFN
    uint32_t nExpertsUsed = 0;
    uint32_t expertFfn = 0;
    bool ropeFreqs = false;       // Llama 3.1: a rope_freqs tensor of per-pair divisors
    // gemma3: post-attention / post-FFN norms, sliding-window layers (every 6th global) and
    // linear rope scaling of the global layers.
    bool postNorms = false;
    uint32_t slidingWindow = 0;
    float ropeLinearFactor = 0.0f;  // 0: no rope.scaling keys
    std::string tokenizerPre;     // tokenizer.ggml.pre for the built-in vocabulary
    HybridShape hybrid;           // qwen35 / qwen35moe: gated DeltaNet layers (hybrid_preset.h)

    bool isMoe() const { return nExperts > 0; }
};

const std::vector<ModelPreset>& modelPresets();
// Nullopt when no preset has that name.
std::optional<ModelPreset> findModelPreset(std::string_view name);

}  // namespace zinc::model
