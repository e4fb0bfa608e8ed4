#pragma once
// A/B between two tiers (or two devices, or two model files of one architecture): the same
// prompt through both. A generates greedily; B is fed A's tokens (teacher forcing, so one flip
// does not derail the rest) and its argmax is compared at every step. Reports how many agree,
// the flips at near ties (both choices within a tolerance on either side's logits, as the
// goldens allow), the first real divergence, and at that step (or at the last step when there is
// none) the residual stream after every layer on both sides — max |a - b|, cosine, and the first
// layer whose difference exceeds the tolerance — plus both decode speeds. Validate mode dumps
// every op's output of that step from both sides as .npy with a JSON index, for offline diffing.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "runtime/tier.h"

namespace zinc::trace {

struct AbSide {
    std::string label;  // "cpu", "vulkan device 1", ...
    runtime::Tier* tier = nullptr;
    const graph::Graph* graph = nullptr;
};

struct AbOptions {
    std::vector<int32_t> prompt;   // at least one token
    int32_t tokens = 16;           // steps compared (A's greedy tokens)
    // A layer differs when max |a - b| > tolerance x max |a|. Tiers differ by up to ~1.5 % in
    // the residual of the quantized golden models (a last-bit difference flips an 8-bit
    // activation rounding); a broken layer by far more.
    double layerTolerance = 0.05;
    double tieTolerance = 0.05;    // logit gap under which differing choices are a near tie
    std::string validateDir;       // non-empty: dump every op output of the compared step there
};

struct LayerDiff {
    int32_t layer = 0;
    double maxAbs = 0;    // max |a - b| over the residual
    double relative = 0;  // maxAbs / max |a|
    double cosine = 1;
};

struct AbReport {
    std::string labelA, labelB;
    std::vector<int32_t> prompt, tokensA, tokensB;  // tokensB: B's argmax fed A's tokens
    int32_t agreed = 0;              // steps where both chose the same token
    std::vector<int32_t> nearTies;   // steps where they differ at a near tie
    int32_t firstDivergence = -1;    // first step that differs beyond a near tie; -1: none
    double tieTolerance = 0;
    int32_t comparedPosition = 0; // KV position of the step compared layer by layer
    int32_t comparedToken = 0;    // the token fed at that step
    std::vector<LayerDiff> layers;
    int32_t firstDivergingLayer = -1;  // -1: every layer within the tolerance
    double layerTolerance = 0;
    double logitsMaxAbs = 0;      // at the compared step
    double top2GapA = 0, top2GapB = 0;  // top-1 minus top-2 logit there (small: a near tie)
    double decodeTokPerSecA = 0, decodeTokPerSecB = 0;
    double speedRatio = 0;        // B / A decode speed
    std::vector<std::string> dumped;  // validate mode: tensor names written for both sides
};

// Throws TierError from the tiers, std::runtime_error when the sides' graphs differ in shape.
AbReport runAb(const AbSide& a, const AbSide& b, const AbOptions& options);
std::string formatAb(const AbReport& report);
nlohmann::json abJson(const AbReport& report);

}  // namespace zinc::trace
