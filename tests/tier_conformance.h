#pragma once
// One body for "this tier computes what the cpu tier computes", shared by every tier's tests
// (tests/vulkan, tests/kfd_tier): the goldens' criterion with the cpu tier as the reference,
// the tolerance each golden model is held to, greedy ids, and the test-name of a model file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "runtime/sampler.h"
#include "runtime/tier.h"

namespace zinc::test {

struct Tolerance {
    float absolute;
    float relative;
};
// stories260K is F32 and trained: 1e-3 like its golden; the quantized random models as their
// goldens (0.1 + 1 %).
inline Tolerance toleranceFor(const std::string& modelFile) {
    return modelFile == "stories260K.gguf" ? Tolerance{1e-3f, 0.0f} : Tolerance{0.1f, 0.01f};
}

// The cpu tier's five largest logits each within absolute + relative * |value|, and the same
// top-1 where the cpu's top-1/top-2 gap is clear. Random-weight models amplify single
// F16-accumulator rounding flips (GPU and CPU exp differ in the last bit), so all logits are
// not held to it.
inline void expectNearCpu(std::span<const float> got, std::span<const float> want, Tolerance tol, const std::string& what) {
    std::vector<int32_t> order(want.size());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                      [&](int32_t a, int32_t b) { return want[size_t(a)] > want[size_t(b)]; });
    for (int i = 0; i < 5; ++i) {
        const auto id = size_t(order[size_t(i)]);
        EXPECT_NEAR(got[id], want[id], tol.absolute + tol.relative * std::fabs(want[id])) << what << ", id " << id;
    }
    if (want[size_t(order[0])] - want[size_t(order[1])] > 0.05f) {
        EXPECT_EQ(runtime::argmax(got), order[0]) << what;
    }
}

// A batched prompt (every row's logits) and three decode steps after it, on `tier` and on the
// cpu tier, compared by expectNearCpu.
inline void expectMatchesCpu(runtime::Tier& tier, runtime::Tier& cpu, int32_t nVocab, const std::string& modelFile) {
    const Tolerance tol = toleranceFor(modelFile);
    const std::vector<int32_t> prompt = {1, 17, 200, 33, 5, 77};
    const auto vocab = size_t(nVocab);
    std::vector<float> all(vocab * prompt.size()), allCpu(all.size());
    tier.evaluate(prompt, 0, runtime::LogitsWanted::All, all);
    cpu.evaluate(prompt, 0, runtime::LogitsWanted::All, allCpu);
    for (size_t t = 0; t < prompt.size(); ++t)
        expectNearCpu(std::span(all).subspan(t * vocab, vocab), std::span(allCpu).subspan(t * vocab, vocab), tol,
                      modelFile + ": prefill row " + std::to_string(t));
    std::vector<float> last(vocab), lastCpu(vocab);
    for (int32_t i = 0; i < 3; ++i) {
        const int32_t t = 4 + 90 * i;
        tier.evaluate({&t, 1}, int32_t(prompt.size()) + i, runtime::LogitsWanted::Last, last);
        cpu.evaluate({&t, 1}, int32_t(prompt.size()) + i, runtime::LogitsWanted::Last, lastCpu);
        expectNearCpu(last, lastCpu, tol, modelFile + ": decode step after token " + std::to_string(t));
    }
}

// Greedy ids from `first`: argmax fed back one evaluate() at a time.
inline std::vector<int32_t> greedyByLogits(runtime::Tier& tier, int32_t nVocab, int32_t first, int32_t n, int32_t startPos = 0) {
    std::vector<int32_t> out;
    std::vector<float> logits(static_cast<size_t>(nVocab));
    int32_t token = first;
    for (int32_t i = 0; i < n; ++i) {
        tier.evaluate({&token, 1}, startPos + i, runtime::LogitsWanted::Last, logits);
        out.push_back(token = runtime::argmax(logits));
    }
    return out;
}

// "qwen3-tiny.gguf" -> "qwen3_tiny", for INSTANTIATE_TEST_SUITE_P.
inline std::string modelParamName(const testing::TestParamInfo<const char*>& info) {
    std::string name = info.param;
    name = name.substr(0, name.find('.'));
    for (auto& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return name;
}

}  // namespace zinc::test
