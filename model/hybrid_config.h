#pragma once
// The gated-DeltaNet half of a Qwen3.5 / Qwen3.6 hybrid model (llama.cpp archs `qwen35`,
// `qwen35moe`): which layers are recurrent and the shapes of their state, read from the
// `{arch}.ssm.*` keys the way llama.cpp's loader reads them.
#include <array>
#include <cstddef>
#include <cstdint>

namespace zinc::model {

class GgufFile;
struct ModelConfig;

struct HybridConfig {
    int32_t fullAttentionInterval = 0;  // every n-th layer is full attention; 0 = not a hybrid model
    int32_t convKernel = 0;             // ssm.conv_kernel: causal conv1d taps
    int32_t headDim = 0;                // ssm.state_size: key and value head dim
    int32_t keyHeads = 0;               // ssm.group_count
    int32_t valueHeads = 0;             // ssm.time_step_rank; value head h reads key head h mod keyHeads
    int32_t sharedFf = 0;               // expert_shared_feed_forward_length (0: no shared expert)
    int32_t mtpLayers = 0;              // nextn_predict_layers: MTP blocks after the stack, not run
    std::array<int32_t, 4> ropeSections{};  // rope.dimension_sections (IMRoPE; text uses one position)

    bool enabled() const { return fullAttentionInterval > 0; }
    bool recurrent(int32_t layer) const {
        return enabled() && (layer + 1) % fullAttentionInterval != 0;
    }
    int32_t keyDim() const { return keyHeads * headDim; }
    int32_t valueDim() const { return valueHeads * headDim; }
    int32_t convChannels() const { return 2 * keyDim() + valueDim(); }  // q | k | v
    // Per recurrent layer: the last convKernel-1 inputs of the conv, and one headDim x headDim
    // matrix per value head (row = value dim, column = key dim).
    size_t convStateFloats() const { return static_cast<size_t>(convKernel - 1) * static_cast<size_t>(convChannels()); }
    size_t deltaStateFloats() const {
        return static_cast<size_t>(valueHeads) * static_cast<size_t>(headDim) * static_cast<size_t>(headDim);
    }
};

// Fills c.hybrid (and the qwen35 overrides of the plain keys) from the file; throws ModelError
// naming the file and key when a key is missing or the shapes do not fit together.
void readHybridConfig(const GgufFile& file, ModelConfig& c);

}  // namespace zinc::model
