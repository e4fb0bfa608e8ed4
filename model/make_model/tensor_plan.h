#pragma once
// The tensors of a preset, named and shaped as llama.cpp's converters write them
// (convert_hf_to_gguf.py / gguf-py tensor names; llama.cpp src/llama-arch.cpp), in the order
// of ../shared/models/qwen3-tiny.gguf: token_embd, output_norm, output, then per layer the
// norms, attention and feed-forward weights.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/make_model/model_preset.h"

namespace zinc::model {

enum class TensorRole {
    TokenEmbedding,  // rows of RMS ~1
    Output,          // the LM head
    Norm,            // RMSNorm gains, 1 +- small noise, always F32
    Router,          // MoE gate (ffn_gate_inp), always F32
    Weight,          // any other projection, std 1/sqrt(fan-in)
};

struct PlannedTensor {
    std::string name;
    TensorRole role;
    uint32_t nDims;
    std::array<uint64_t, 4> ne;  // ggml order: ne[0] = fan-in (row length)
    int layer = -1;              // -1 outside the blocks
    uint64_t elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

std::vector<PlannedTensor> planTensors(const ModelPreset& preset);

}  // namespace zinc::model
