#include "model/rope_scaling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "model/gguf/gguf_file.h"
#include "model/model_error.h"

namespace zinc::model {
namespace {

// ggml_rope_yarn_corr_dim: the dim at which `nRot` full turns fit in the original context.
float yarnCorrDim(int32_t dims, int32_t nCtxOrig, float nRot, float base) {
    return static_cast<float>(dims) *
           std::log(static_cast<float>(nCtxOrig) / (nRot * 2.0f * std::numbers::pi_v<float>)) /
           (2.0f * std::log(base));
}

float yarnRamp(float low, float high, int32_t pair) {
    const float y = (static_cast<float>(pair) - low) / std::max(0.001f, high - low);
    return 1.0f - std::min(1.0f, std::max(0.0f, y));
}

}  // namespace

const char* ropeScalingName(RopeScalingType type) {
    switch (type) {
        case RopeScalingType::None: return "none";
        case RopeScalingType::Linear: return "linear";
        case RopeScalingType::Yarn: return "yarn";
    }
    return "?";
}

RopeScaling RopeScaling::fromGguf(const GgufFile& file, const std::string& arch, int32_t nCtxTrain) {
    const std::string k = arch + ".rope.";
    RopeScaling s;
    // llama.cpp: the factor key, else the older scale_linear; 0 or absent means unscaled.
    float factor = file.findF32(k + "scaling.factor").value_or(0.0f);
    if (factor == 0.0f) factor = file.findF32(k + "scale_linear").value_or(0.0f);
    s.factor = factor == 0.0f ? 1.0f : factor;
    const std::string type = file.findString(k + "scaling.type").value_or(factor == 0.0f ? "none" : "linear");
    if (type == "none") s.type = RopeScalingType::None;
    else if (type == "linear") s.type = RopeScalingType::Linear;
    else if (type == "yarn") s.type = RopeScalingType::Yarn;
    else
        throw ModelError(fmt::format("{}: rope scaling type '{}' ({}scaling.type) is not supported; supported: none, linear, yarn",
                                     file.path(), type, k));
    if (!(s.factor > 0.0f) || !std::isfinite(s.factor))
        throw ModelError(fmt::format("{}: key {}scaling.factor = {} is not a positive number", file.path(), k, s.factor));
    s.attnFactor = file.findF32(k + "scaling.attn_factor").value_or(1.0f);
    s.betaFast = file.findF32(k + "scaling.yarn_beta_fast").value_or(32.0f);
    s.betaSlow = file.findF32(k + "scaling.yarn_beta_slow").value_or(1.0f);
    const auto orig = file.findU64(k + "scaling.original_context_length");
    s.nCtxOrig = static_cast<int32_t>(orig.value_or(static_cast<uint64_t>(nCtxTrain)));
    if (orig && s.type != RopeScalingType::None)
        s.scaledContext = static_cast<int32_t>(std::min(2147483647.0, std::floor(static_cast<double>(*orig) * s.factor)));
    return s;
}

RopeParams ropeParams(float base, int32_t dims, const RopeScaling& scaling) {
    RopeParams p;
    p.dims = dims;
    p.thetaScale = std::pow(base, -2.0f / static_cast<float>(dims));
    // llama.cpp never scales when the type is none, whatever factor the file holds.
    p.freqScale = scaling.type == RopeScalingType::None ? 1.0f : 1.0f / scaling.factor;
    p.mscale = scaling.attnFactor;
    if (scaling.type == RopeScalingType::Yarn) {
        p.extFactor = 1.0f;
        p.mscale *= 1.0f + 0.1f * std::log(1.0f / p.freqScale);
        const float lo = std::floor(yarnCorrDim(dims, scaling.nCtxOrig, scaling.betaFast, base));
        const float hi = std::ceil(yarnCorrDim(dims, scaling.nCtxOrig, scaling.betaSlow, base));
        p.corrLow = std::max(0.0f, lo);
        p.corrHigh = std::min(static_cast<float>(dims - 1), hi);
    }
    return p;
}

void ropeCosSin(const RopeParams& p, const float* freqFactors, int32_t pos, float* cos, float* sin) {
    float theta = static_cast<float>(pos);
    for (int32_t i = 0; i < p.dims / 2; ++i) {
        const float extrap = freqFactors ? theta / freqFactors[i] : theta;
        const float interp = p.freqScale * extrap;
        float angle = interp;
        if (p.extFactor != 0.0f) {
            const float mix = yarnRamp(p.corrLow, p.corrHigh, i) * p.extFactor;
            angle = interp * (1.0f - mix) + extrap * mix;
        }
        cos[i] = std::cos(angle) * p.mscale;
        sin[i] = std::sin(angle) * p.mscale;
        theta *= p.thetaScale;
    }
}

}  // namespace zinc::model
