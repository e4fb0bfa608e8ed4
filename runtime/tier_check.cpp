#include "runtime/tier_check.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <vector>

#include "runtime/capture.h"
#include "runtime/sampler.h"
#include "runtime/tier.h"

namespace zinc::runtime {
namespace {

std::vector<float> oneToken(Tier& tier, int32_t token, int32_t nVocab) {
    std::vector<float> logits(static_cast<size_t>(nVocab));
    tier.evaluate({&token, 1}, 0, LogitsWanted::Last, logits);
    return logits;
}

}  // namespace

std::string checkOneToken(Tier& reference, Tier& tier, int32_t token, int32_t nVocab) {
    const std::vector<float> want = oneToken(reference, token, nVocab), got = oneToken(tier, token, nVocab);
    float maxDiff = 0, maxRef = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        maxDiff = std::max(maxDiff, std::fabs(got[i] - want[i]));
        maxRef = std::max(maxRef, std::fabs(want[i]));
    }
    if (argmax(got) != argmax(want) || maxDiff > 1e-3f * std::max(1.0f, maxRef))
        throw std::runtime_error(fmt::format("token {} at position 0: {} top-1 {} {} top-1 {}, max |logit diff| {:.3g} (limit 1e-3 x {:.3g})",
                                             token, tier.name(), argmax(got), reference.name(), argmax(want), maxDiff,
                                             std::max(1.0f, maxRef)));
    return fmt::format("top-1 {} on both, max |logit diff| {:.3g}", argmax(got), maxDiff);
}

std::string checkEveryOp(Tier& reference, Tier& tier, const graph::Graph& graph, int32_t token, double tolerance) {
    const int32_t nVocab = graph.config->nVocab;
    Capture want = Capture::everyOp(graph), got = Capture::everyOp(graph);
    {
        CaptureScope scope(reference, want);
        oneToken(reference, token, nVocab);
    }
    {
        CaptureScope scope(tier, got);
        oneToken(tier, token, nVocab);
    }
    if (got.steps != 1 || want.steps != 1)
        throw std::runtime_error(fmt::format("{} tier captured {} steps, {} tier {}; 1 expected", tier.name(), got.steps,
                                             reference.name(), want.steps));
    size_t compared = 0, exact = 0, unseen = 0;
    double worst = 0;
    std::string worstOp = "none";
    for (size_t i = 0; i < graph.ops.size(); ++i) {
        const std::vector<float>&g = got.at(i), &w = want.at(i);
        if (g.empty()) {
            ++unseen;  // fused away on this tier
            continue;
        }
        if (g.size() != w.size())
            throw std::runtime_error(fmt::format("op {} {}: {} values on {}, {} on {}", i, graph.ops[i].label, g.size(), tier.name(),
                                                 w.size(), reference.name()));
        double maxDiff = 0, maxRef = 0;
        size_t at = 0;
        for (size_t j = 0; j < g.size(); ++j) {
            const double d = std::fabs(double(g[j]) - double(w[j]));
            if (d > maxDiff || std::isnan(d)) maxDiff = std::isnan(d) ? INFINITY : d, at = j;
            maxRef = std::max(maxRef, std::fabs(double(w[j])));
        }
        const double relative = maxDiff / std::max(1.0, maxRef);
        const graph::Op& op = graph.ops[i];
        const std::string name = fmt::format("op {} {} (layer {}, {})", i, op.label, op.layer, graph::opKindName(op.kind));
        if (!(relative <= tolerance))
            throw std::runtime_error(fmt::format("first op that differs: {}: element {} is {} on {}, {} on {} "
                                                 "(max |diff| {:.3g} of max |value| {:.3g}); {} earlier ops agreed",
                                                 name, at, g[at], tier.name(), w[at], reference.name(), maxDiff, maxRef, compared));
        if (maxDiff == 0) ++exact;
        if (relative > worst) worst = relative, worstOp = name;
        ++compared;
    }
    return fmt::format("{} op outputs of token {} compared, {} bit-identical{}; largest difference {:.3g} (relative) at {}", compared,
                       token, exact, unseen ? fmt::format(", {} fused away", unseen) : "", worst, worstOp);
}

std::string checkGreedy(Tier& reference, Tier& tier, int32_t n, int32_t nVocab) {
    oneToken(tier, 1, nVocab);  // position 0, as the reference has it below
    const auto start = std::chrono::steady_clock::now();
    const std::vector<int32_t> got = tier.generateGreedy(1, 1, n, nVocab);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<int32_t> want;
    std::vector<float> logits(static_cast<size_t>(nVocab));
    const int32_t bos = 1;
    reference.evaluate({&bos, 1}, 0, LogitsWanted::Last, logits);  // position 0 as the tier has it
    int32_t token = 1;
    for (int32_t i = 0; i < n; ++i) {
        reference.evaluate({&token, 1}, 1 + i, LogitsWanted::Last, logits);
        want.push_back(token = argmax(logits));
    }
    for (int32_t i = 0; i < n; ++i)
        if (got[size_t(i)] != want[size_t(i)])
            throw std::runtime_error(fmt::format("greedy token {} (position {}): {} {} {} {}", i, i + 1, tier.name(), got[size_t(i)],
                                                 reference.name(), want[size_t(i)]));
    return fmt::format("{} greedy tokens sampled on the device equal the {} tier's, {:.1f} tok/s, {} dispatches/token", n,
                       reference.name(), n / seconds, tier.stats().dispatchesPerToken);
}

}  // namespace zinc::runtime
