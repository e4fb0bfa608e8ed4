#pragma once
// The tensors of a model, bound by name and checked against the config once at load time
// (shape and type), so the tiers never look a tensor up by string again.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/gguf/ggml_type.h"

namespace zinc::model {

class GgufFile;
struct ModelConfig;

// A 2-D weight (or a stack of them, for experts) mapping `cols` inputs to `rows` outputs.
struct WeightRef {
    std::string name;
    GgmlType type = GgmlType::F32;
    int64_t cols = 0;       // ne[0]: inputs, contiguous
    int64_t rows = 0;       // ne[1]: outputs
    int64_t stack = 1;      // ne[2]: experts (1 for a plain matrix)
    size_t rowBytes = 0;
    const uint8_t* data = nullptr;
    uint64_t fileOffset = 0;  // of the first byte, from the start of the GGUF file
    uint64_t nbytes = 0;

    bool present() const { return data != nullptr; }
    const uint8_t* row(int64_t r, int64_t slice = 0) const {
        return data + (static_cast<size_t>(slice) * static_cast<size_t>(rows) + static_cast<size_t>(r)) * rowBytes;
    }
};

// Gated DeltaNet layer of a qwen35 hybrid (names as in the GGUF: attn_qkv, attn_gate, ssm_*).
struct DeltaNetWeights {
    WeightRef qkv, gate, conv, dtBias, a, alpha, beta, norm, out;
};
// Shared expert of qwen35moe, scaled per token by sigmoid(inputGate · x).
struct SharedExpertWeights {
    WeightRef gate, up, down, inputGate;
};

struct LayerWeights {
    WeightRef attnNorm, wq, wk, wv, wo, qNorm, kNorm;  // qwen35: wq holds query and output gate per head
    WeightRef bq, bk, bv;                                 // q/k/v biases (qwen2), F32
    WeightRef postAttnNorm, postFfnNorm;                  // gemma3: norms of the block outputs
    WeightRef ffnNorm, ffnGate, ffnUp, ffnDown;           // dense FFN
    WeightRef router, gateExps, upExps, downExps;         // MoE
    DeltaNetWeights deltaNet;                             // qwen35 recurrent layers
    SharedExpertWeights shared;                           // qwen35moe
};

struct ModelWeights {
    WeightRef tokenEmbd, outputNorm, output;  // output aliases tokenEmbd when embeddings are tied
    WeightRef ropeFreqs;  // rope_freqs: F32 per-pair angle divisors shared by every layer (Llama 3.1+), optional
    std::vector<LayerWeights> layers;

    // Throws ModelError naming the file and tensor on a missing tensor, a wrong shape or a
    // tensor type zinc-rt cannot compute.
    static ModelWeights bind(const GgufFile& file, const ModelConfig& config);
    uint64_t totalBytes() const;
};

}  // namespace zinc::model
