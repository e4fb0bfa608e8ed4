#pragma once
// Continuous batching's reference (tests/cpu and tests/vulkan sequence_rows_test): one sequence
// alone on a tier through runtime::Session, its logits after every count of tokens fed.
#include <span>
#include <vector>

#include "model/model_config.h"
#include "runtime/session.h"
#include "runtime/tier.h"

namespace zinc::test {

// `wantAfter`: increasing counts of tokens fed (each at most tokens.size()).
inline std::vector<std::vector<float>> logitsAlone(const model::ModelConfig& config, runtime::Tier& tier,
                                                   const std::vector<int32_t>& tokens, const std::vector<size_t>& wantAfter) {
    runtime::Session session(config, tier);
    std::vector<std::vector<float>> out;
    size_t fed = 0;
    for (size_t upTo : wantAfter) {
        auto logits = session.feed(std::span(tokens).subspan(fed, upTo - fed));
        out.emplace_back(logits.begin(), logits.end());
        fed = upTo;
    }
    return out;
}

}  // namespace zinc::test
