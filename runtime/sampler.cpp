#include "runtime/sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_set>

namespace zinc::runtime {

int32_t argmax(std::span<const float> logits) {
    return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

std::string SamplerParams::describe() const {
    if (greedy()) return "greedy";
    return fmt::format("temp {} top-k {} top-p {} min-p {} repeat-penalty {} (last {}) seed {}", temperature, topK,
                       topP, minP, repeatPenalty, repeatLastN, seed);
}

Sampler::Sampler(const SamplerParams& params) : params_(params), rng_(params.seed) {}

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> history) {
    if (params_.greedy() && params_.repeatPenalty == 1.0f) return argmax(logits);
    candidates_.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) candidates_[i] = {static_cast<int32_t>(i), logits[i], 0.0f};
    applyRepeatPenalty(history);
    if (params_.greedy())
        return std::max_element(candidates_.begin(), candidates_.end(),
                                [](const Candidate& a, const Candidate& b) { return a.logit < b.logit; })
            ->id;
    applyTopK();
    applyTopP();
    applyMinP();
    for (auto& c : candidates_) c.logit /= params_.temperature;
    softmax();
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    double r = uniform(rng_), acc = 0.0;
    for (const auto& c : candidates_) {
        acc += c.p;
        if (r < acc) return c.id;
    }
    return candidates_.back().id;
}

// llama.cpp's penalty: divide positive logits, multiply negative ones.
void Sampler::applyRepeatPenalty(std::span<const int32_t> history) {
    if (params_.repeatPenalty == 1.0f || params_.repeatLastN == 0) return;
    const size_t n = params_.repeatLastN < 0 ? history.size()
                                              : std::min(history.size(), static_cast<size_t>(params_.repeatLastN));
    std::unordered_set<int32_t> seen(history.end() - static_cast<ptrdiff_t>(n), history.end());
    for (int32_t id : seen) {
        if (id < 0 || static_cast<size_t>(id) >= candidates_.size()) continue;
        float& l = candidates_[static_cast<size_t>(id)].logit;
        l = l > 0 ? l / params_.repeatPenalty : l * params_.repeatPenalty;
    }
}

// Leaves the candidates sorted by logit, descending; later steps rely on it.
void Sampler::applyTopK() {
    const auto byLogit = [](const Candidate& a, const Candidate& b) { return a.logit > b.logit; };
    if (params_.topK > 0 && static_cast<size_t>(params_.topK) < candidates_.size()) {
        std::partial_sort(candidates_.begin(), candidates_.begin() + params_.topK, candidates_.end(), byLogit);
        candidates_.resize(static_cast<size_t>(params_.topK));
    } else {
        std::sort(candidates_.begin(), candidates_.end(), byLogit);
    }
}

void Sampler::softmax() {
    const float maxLogit = candidates_.front().logit;
    double sum = 0.0;
    for (auto& c : candidates_) sum += (c.p = std::exp(c.logit - maxLogit));
    for (auto& c : candidates_) c.p = static_cast<float>(c.p / sum);
}

void Sampler::applyTopP() {
    if (params_.topP >= 1.0f) return;
    softmax();
    double acc = 0.0;
    size_t keep = candidates_.size();
    for (size_t i = 0; i < candidates_.size(); ++i) {
        acc += candidates_[i].p;
        if (acc >= params_.topP) {
            keep = i + 1;
            break;
        }
    }
    candidates_.resize(std::max<size_t>(1, keep));
}

void Sampler::applyMinP() {
    if (params_.minP <= 0.0f) return;
    softmax();
    const float threshold = candidates_.front().p * params_.minP;
    size_t keep = 1;
    while (keep < candidates_.size() && candidates_[keep].p >= threshold) ++keep;
    candidates_.resize(keep);
}

}  // namespace zinc::runtime
