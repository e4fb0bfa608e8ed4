#pragma once
// The hyper-parameters of one model, read once from GGUF metadata (keys as llama.cpp's
// converters write them: `{arch}.block_count`, `{arch}.attention.head_count`, ...).
#include <cstdint>
#include <string>

#include "model/hybrid_config.h"
#include "model/rope_scaling.h"

namespace zinc::model {

class GgufFile;

enum class Arch { Llama, Qwen2, Qwen3, Qwen3Moe, Gemma3, Qwen35, Qwen35Moe };
// How RoPE pairs dimensions: Norm rotates (2i, 2i+1) (llama); Neox rotates (i, i + d/2) (qwen2, qwen3).
enum class RopeStyle { Norm, Neox };

struct ModelConfig {
    Arch arch = Arch::Llama;
    std::string archName;
    std::string name;
    int32_t nLayer = 0;
    int32_t nEmbd = 0;
    int32_t nHead = 0;
    int32_t nHeadKv = 0;
    int32_t headDim = 0;       // key_length (== value_length for the archs we run)
    int32_t nFf = 0;           // dense FFN width
    int32_t nVocab = 0;
    int32_t nCtxTrain = 0;
    int32_t nExpert = 0;       // 0 for dense models
    int32_t nExpertUsed = 0;
    int32_t nFfExpert = 0;
    bool normTopkProb = true;  // renormalise the top-k router weights (qwen3moe always does)
    bool qkNorm = false;       // per-head RMSNorm of q and k before RoPE (qwen3)
    bool qkvBias = false;      // biases added to q, k and v before RoPE (qwen2)
    // gemma3: input embeddings times sqrt(d), RMSNorm after attention and after the FFN,
    // GELU-tanh gate, and sliding-window layers with their own unscaled rope base.
    float embedScale = 1.0f;
    bool postNorms = false;
    bool geluFfn = false;
    int32_t slidingWindow = 0;   // 0: every layer global
    int32_t slidingPeriod = 0;   // layer il is global when (il + 1) % period == 0
    float ropeBaseSwa = 10000.0f;
    bool preScaleQuery = false;  // q times 1/sqrt(head_dim) before attention, not the scores after
    bool tiedEmbeddings = false;
    float normEps = 1e-5f;
    float ropeBase = 10000.0f;
    int32_t ropeDim = 0;       // rotated dims per head (== headDim here)
    RopeStyle ropeStyle = RopeStyle::Norm;
    HybridConfig hybrid;       // qwen35 / qwen35moe: gated DeltaNet layers (model/hybrid_config.h)
    RopeScaling ropeScaling;   // linear / yarn from the rope.scaling keys (rope_freqs is a tensor)

    int32_t qDim() const { return nHead * headDim; }
    int32_t kvDim() const { return nHeadKv * headDim; }
    bool isMoe() const { return nExpert > 0; }
    RopeParams rope() const { return ropeParams(ropeBase, ropeDim, ropeScaling); }
    // Sliding-window layers turn by their own base, never scaled (llama.cpp's *_swa hparams).
    RopeParams ropeSwa() const { return ropeParams(ropeBaseSwa, ropeDim, RopeScaling{}); }
    bool slidingLayer(int32_t il) const {
        return slidingWindow > 0 && (slidingPeriod <= 0 || (il + 1) % slidingPeriod != 0);
    }

    // Throws ModelError naming the file and key when a required key is missing, an
    // architecture is not supported, or the numbers do not fit together.
    static ModelConfig fromGguf(const GgufFile& file);
    std::string summary() const;
};

const char* archName(Arch arch);

}  // namespace zinc::model
