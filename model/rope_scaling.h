#pragma once
// RoPE frequency scaling as llama.cpp reads it from GGUF and ggml applies it (rope_yarn):
// pair i of a head turns by theta_i = pos * base^(-2i/dims) / freq_factor[i], then
// - linear: theta_i * freq_scale (freq_scale = 1 / `rope.scaling.factor`);
// - yarn: a per-pair mix of that and the unscaled angle (a ramp between the "correction dims"
//   that beta_fast / beta_slow give), and cos/sin scaled by 1 + 0.1 ln(1 / freq_scale).
// freq_factor comes from the `rope_freqs` tensor (Llama 3.1+), 1 without it. Every tier builds
// its angles from ropeParams() + ropeCosSin() (or, on GPU, from the same numbers).
#include <cstdint>
#include <string>

namespace zinc::model {

class GgufFile;

enum class RopeScalingType { None, Linear, Yarn };
const char* ropeScalingName(RopeScalingType type);

// What the GGUF says (keys `{arch}.rope.scaling.*`).
struct RopeScaling {
    RopeScalingType type = RopeScalingType::None;
    float factor = 1.0f;      // rope.scaling.factor (or the older rope.scale_linear)
    float attnFactor = 1.0f;  // rope.scaling.attn_factor
    float betaFast = 32.0f, betaSlow = 1.0f;
    int32_t nCtxOrig = 0;     // rope.scaling.original_context_length (default: context_length)
    // The context the scaling reaches: original_context_length x factor when the GGUF names the
    // original length (context_length is then the pre-scaling one), else 0 (context_length is it).
    int32_t scaledContext = 0;

    // Throws ModelError naming the file and key for a scaling type zinc-rt does not implement.
    static RopeScaling fromGguf(const GgufFile& file, const std::string& arch, int32_t nCtxTrain);
};

// The resolved numbers one kind of layer computes its angles from.
struct RopeParams {
    int32_t dims = 0;          // rotated dims per head
    float thetaScale = 1.0f;   // base^(-2/dims), computed in float as ggml does
    float freqScale = 1.0f;    // 1 / factor for linear and yarn, else 1
    float extFactor = 0.0f;    // 1 for yarn
    float mscale = 1.0f;       // attn_factor, times yarn's magnitude correction
    float corrLow = 0.0f, corrHigh = 0.0f;  // yarn's ramp, in pairs
};
RopeParams ropeParams(float base, int32_t dims, const RopeScaling& scaling);

// cos/sin of every pair at `pos` (ggml's rope cache: theta by repeated float multiplication,
// divided by freqFactors[i] when given). cos and sin hold dims / 2 floats each.
void ropeCosSin(const RopeParams& p, const float* freqFactors, int32_t pos, float* cos, float* sin);

}  // namespace zinc::model
