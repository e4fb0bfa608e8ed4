#include "runtime/sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

namespace zinc::runtime {

// std::max_element's answer (the first largest; NaNs are never larger, and a NaN in front
// is kept), in two passes a compiler vectorizes: the maximum over 16 running lanes, then the
// first index holding it. A vocabulary of logits per sampled row (8 rows a step in a batched
// decode step) took ~0.2 ms a row with max_element's compare-and-branch.
int32_t argmax(std::span<const float> logits) {
    constexpr size_t kLanes = 16;
    const size_t n = logits.size();
    if (n < 4 * kLanes || std::isnan(logits[0]))
        return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    float lane[kLanes];
    std::fill(lane, lane + kLanes, -std::numeric_limits<float>::infinity());
    size_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (size_t j = 0; j < kLanes; ++j) lane[j] = logits[i + j] > lane[j] ? logits[i + j] : lane[j];
    float best = logits[0];
    for (float v : lane) best = v > best ? v : best;
    for (; i < n; ++i) best = logits[i] > best ? logits[i] : best;
    for (size_t k = 0;; ++k)
        if (logits[k] == best) return static_cast<int32_t>(k);
}

std::string SamplerParams::describe() const {
    if (greedy()) return "greedy";
    return fmt::format("temp {} top-k {} top-p {} min-p {} repeat-penalty {} (last {}) seed {}", temperature, topK,
                       topP, minP, repeatPenalty, repeatLastN, seed);
}

namespace {

// C. Wellons' lowbias32 integer hash.
uint32_t lowbias32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

}  // namespace

float uniformDraw(uint64_t seed, uint64_t index) {
    const uint32_t h = lowbias32(static_cast<uint32_t>(seed) ^
                                 lowbias32(static_cast<uint32_t>(seed >> 32) ^ lowbias32(static_cast<uint32_t>(index))));
    return static_cast<float>(h >> 8) * (1.0f / 16777216.0f);
}

// Cody-Waite reduction and a degree-7 polynomial; see common.glsl.
float expAccurate(float x) {
    if (x < -103.0f) return 0.0f;
    if (x > 88.7f) return std::numeric_limits<float>::infinity();
    const float k = std::nearbyint(x * 1.44269504f);
    float r = std::fma(-k, 0.693145752f, x);
    r = std::fma(-k, 1.42860677e-6f, r);
    float p = 1.98412698e-4f;
    for (float c : {1.38888889e-3f, 8.33333333e-3f, 4.16666667e-2f, 1.66666667e-1f, 0.5f, 1.0f, 1.0f}) p = std::fma(p, r, c);
    return std::ldexp(p, static_cast<int>(k));
}

Sampler::Sampler(const SamplerParams& params) : params_(params) {}

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> history) {
    candidates_.clear();
    if (params_.greedy() && params_.repeatPenalty == 1.0f) return argmax(logits);
    if (!params_.greedy() && params_.topK > 0 && static_cast<size_t>(params_.topK) < logits.size()) {
        selectTopK(logits, history);
    } else {
        candidates_.resize(logits.size());
        for (size_t i = 0; i < logits.size(); ++i) candidates_[i] = {static_cast<int32_t>(i), logits[i], 0.0f};
        applyRepeatPenalty(history);
        if (params_.greedy()) {
            const int32_t id = std::max_element(candidates_.begin(), candidates_.end(),
                                                [](const Candidate& a, const Candidate& b) { return a.logit < b.logit; })
                                   ->id;
            candidates_.clear();
            return id;
        }
        applyTopK();
    }
    applyTopP();
    applyMinP();
    softmax(1.0f / params_.temperature);
    const float r = uniformDraw(params_.seed, draws_++);
    float acc = 0.0f;
    for (const auto& c : candidates_) {
        acc += c.p;
        if (r < acc) return c.id;
    }
    return candidates_.back().id;
}

namespace {

// The candidates' order: logit descending, the lower id first on ties. Later steps rely on it.
bool ranksBefore(const Sampler::Candidate& a, const Sampler::Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

}  // namespace

// The ids the penalty applies to: the last repeatLastN of the history, once each.
std::unordered_set<int32_t> Sampler::penalized(std::span<const int32_t> history) const {
    const size_t n = std::min(history.size(), params_.penaltyWindow());
    if (n == 0) return {};
    return {history.end() - static_cast<ptrdiff_t>(n), history.end()};
}

// llama.cpp's penalty: divide positive logits, multiply negative ones.
float Sampler::penalize(float logit) const { return logit > 0 ? logit / params_.repeatPenalty : logit * params_.repeatPenalty; }

void Sampler::applyRepeatPenalty(std::span<const int32_t> history) {
    for (int32_t id : penalized(history)) {
        if (id < 0 || static_cast<size_t>(id) >= candidates_.size()) continue;
        float& l = candidates_[static_cast<size_t>(id)].logit;
        l = penalize(l);
    }
}

// Sorts every candidate (top-k off); selectTopK makes the top k without them.
void Sampler::applyTopK() { std::sort(candidates_.begin(), candidates_.end(), ranksBefore); }

// The top k candidates (the penalty applied first), sorted: what building every candidate,
// penalising and std::partial_sort give, without the 152k-entry array. One pass keeps the k best
// in a heap whose front is the worst kept; past the first k a logit enters only if it beats
// that one (an equal logit has a higher id than every kept one, so it never does). The
// penalised ids skip the pass and are offered afterwards with their penalised logits. Qwen3's
// vocabulary, top-k 40: ~1.2 ms a row with the partial sort, a few tenths with this pass.
void Sampler::selectTopK(std::span<const float> logits, std::span<const int32_t> history) {
    const auto k = static_cast<size_t>(params_.topK);
    const std::unordered_set<int32_t> skip = penalized(history);
    candidates_.clear();
    const auto offer = [&](Candidate c) {
        if (candidates_.size() < k) {
            candidates_.push_back(c);
            std::push_heap(candidates_.begin(), candidates_.end(), ranksBefore);
        } else if (ranksBefore(c, candidates_.front())) {
            std::pop_heap(candidates_.begin(), candidates_.end(), ranksBefore);
            candidates_.back() = c;
            std::push_heap(candidates_.begin(), candidates_.end(), ranksBefore);
        }
    };
    float worst = -std::numeric_limits<float>::infinity();
    for (size_t i = 0; i < logits.size(); ++i) {
        const float x = logits[i];
        if (candidates_.size() == k && !(x > worst)) continue;
        const auto id = static_cast<int32_t>(i);
        if (!skip.empty() && skip.count(id)) continue;
        offer({id, x, 0.0f});
        if (candidates_.size() == k) worst = candidates_.front().logit;
    }
    for (int32_t id : skip)
        if (id >= 0 && static_cast<size_t>(id) < logits.size()) offer({id, penalize(logits[static_cast<size_t>(id)]), 0.0f});
    std::sort_heap(candidates_.begin(), candidates_.end(), ranksBefore);
}

// p_i = exp((logit_i - logit_0) * scale) / sum, summed in order (sample.comp does the same).
void Sampler::softmax(float scale) {
    const float maxLogit = candidates_.front().logit;
    float sum = 0.0f;
    for (auto& c : candidates_) sum += (c.p = expAccurate((c.logit - maxLogit) * scale));
    for (auto& c : candidates_) c.p /= sum;
}

void Sampler::applyTopP() {
    if (params_.topP >= 1.0f) return;
    softmax(1.0f);
    float acc = 0.0f;
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
    softmax(1.0f);
    const float threshold = candidates_.front().p * params_.minP;
    size_t keep = 1;
    while (keep < candidates_.size() && candidates_[keep].p >= threshold) ++keep;
    candidates_.resize(keep);
}

}  // namespace zinc::runtime
