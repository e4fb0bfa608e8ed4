#pragma once
// Token sampling on the host: greedy, or the llama.cpp chain — repetition penalty, top-k,
// top-p, min-p, temperature, then a seeded draw. Same seed + same logits = same token.
#include <cstdint>
#include <random>
#include <span>
#include <string>
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
    std::string describe() const;
};

class Sampler {
public:
    explicit Sampler(const SamplerParams& params);
    // history: tokens seen so far (prompt and output), for the repetition penalty.
    int32_t sample(std::span<const float> logits, std::span<const int32_t> history);
    const SamplerParams& params() const { return params_; }

private:
    struct Candidate {
        int32_t id;
        float logit;
        float p;
    };
    void applyRepeatPenalty(std::span<const int32_t> history);
    void applyTopK();
    void softmax();
    void applyTopP();
    void applyMinP();

    SamplerParams params_;
    std::mt19937_64 rng_;
    std::vector<Candidate> candidates_;
};

// Index of the largest value; the lowest index wins a tie (as ggml's argmax).
int32_t argmax(std::span<const float> logits);

}  // namespace zinc::runtime
