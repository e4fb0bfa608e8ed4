#pragma once
// The Qwen3.5 / Qwen3.6 hybrid shapes make-model writes (archs qwen35, qwen35moe): gated
// DeltaNet layers with full attention every fullAttentionInterval-th layer, and for the MoE
// a sigmoid-gated shared expert. No MTP (nextn) block is written (as convert's --no-mtp).
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace zinc::model {

class GgufWriter;
struct ModelPreset;
struct PlannedTensor;
struct WeightInit;

struct HybridShape {
    uint32_t fullAttentionInterval = 0;  // 0: not a hybrid
    uint32_t ropeDim = 0;                // rotated dims of the attention heads (partial RoPE)
    std::array<int32_t, 4> ropeSections{};
    uint32_t convKernel = 0;
    uint32_t headDim = 0;                // DeltaNet key = value head dim (ssm.state_size)
    uint32_t keyHeads = 0, valueHeads = 0;
    uint32_t sharedFfn = 0;              // MoE shared expert width (0: none)

    bool enabled() const { return fullAttentionInterval > 0; }
    bool recurrent(uint32_t layer) const { return enabled() && (layer + 1) % fullAttentionInterval != 0; }
};

// One layer's tensors, named and shaped as llama.cpp's qwen35 loaders bind them.
void planHybridLayer(const ModelPreset& p, int layer, std::vector<PlannedTensor>& out);
// The {arch}.ssm.*, full_attention_interval, rope and shared-expert keys.
void writeHybridMetadata(GgufWriter& w, const ModelPreset& p);
// Tensors whose values must keep a sign or range: ssm_a = -exp(A_log) < 0 (a decay), dt bias.
std::optional<WeightInit> hybridInit(const PlannedTensor& t);

}  // namespace zinc::model
