#pragma once
// Token sampling on the host: greedy, or the llama.cpp chain — repetition penalty, top-k,
// top-p, min-p, temperature, then a seeded draw. Same seed + same logits = same token.
// The arithmetic is fixed so a GPU can repeat it (vulkan/shaders/sample.comp): candidates in
// (logit desc, id asc) order, sequential float sums, expAccurate, and a counter-based uniform
// of (seed, draw index) instead of a stateful generator.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

namespace zinc::runtime {

struct SamplerParams {
    float temperature = 0.8f;   // <= 0: greedy
    int32_t topK = 40;          // <= 0: off
    float topP = 0.95f;         // >= 1: off
    float minP = 0.05f;         // <= 0: off
    float repeatPenalty = 1.0f; // 1: off
    int32_t repeatLastN = 64;
    uint64_t seed = 0xC0FFEE;

    bool greedy() const { return temperature <= 0.0f; }
    // How many of the history's last tokens the repetition penalty reads: 0 when it is off,
    // SIZE_MAX for all of them (repeatLastN < 0).
    size_t penaltyWindow() const {
        if (repeatPenalty == 1.0f || repeatLastN == 0) return 0;
        return repeatLastN < 0 ? SIZE_MAX : static_cast<size_t>(repeatLastN);
    }
    std::string describe() const;
};

class Sampler {
public:
    explicit Sampler(const SamplerParams& params);
    // history: tokens seen so far (prompt and output), for the repetition penalty.
    int32_t sample(std::span<const float> logits, std::span<const int32_t> history);
    const SamplerParams& params() const { return params_; }
    struct Candidate {
        int32_t id;
        float logit;  // the penalty applied
        float p;
    };
    // What the last sample() drew from (top-k, top-p and min-p applied; p after the
    // temperature), in the chain's order: logit descending, the lower id first on ties.
    // Empty after a greedy pick.
    std::span<const Candidate> candidates() const { return candidates_; }
    // Draws made so far: the index of the next uniform. A tier that samples on the device
    // continues the sequence from here and reports how many it drew (skipDraws).
    uint64_t draws() const { return draws_; }
    void skipDraws(uint64_t n) { draws_ += n; }

private:
    std::unordered_set<int32_t> penalized(std::span<const int32_t> history) const;
    float penalize(float logit) const;
    void applyRepeatPenalty(std::span<const int32_t> history);
    void applyTopK();
    void selectTopK(std::span<const float> logits, std::span<const int32_t> history);
    void softmax(float scale);
    void applyTopP();
    void applyMinP();

    SamplerParams params_;
    uint64_t draws_ = 0;
    std::vector<Candidate> candidates_;
};

// Index of the largest value; the lowest index wins a tie (as ggml's argmax).
int32_t argmax(std::span<const float> logits);

// The uniform in [0, 1) of draw `index` under `seed`: 24 bits of an integer hash, the same on
// the host and in sample.comp.
float uniformDraw(uint64_t seed, uint64_t index);
// exp(x) to about 1 ulp, the polynomial common.glsl's expAccurate uses.
float expAccurate(float x);

}  // namespace zinc::runtime
