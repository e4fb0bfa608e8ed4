// moe_topk.comp dispatched alone, off any model: the experts each token routes to, in rank order
// (the higher probability first, the lower id on ties, as the cpu tier's partial_sort), and their
// weights, for 60 to 512 experts; the largest logit shared by experts in one subgroup, in others
// and in one thread's slots (ids t, t + 128, ...). Both of its modes: logits given (one
// workgroup a token), and F32 router rows (a workgroup per expert row; the last of a token ranks,
// through the counter it resets).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "tests/vulkan/gpu_fixture.h"
#include "tests/vulkan/vulkan_fixture.h"
#include "vulkan/ops.h"

namespace zinc {
namespace {

// vulkan/op_moe.cpp's TopKPc.
struct TopKPc {
    VkDeviceAddress logits, ids, weights, w, x, done;
    uint32_t nExpert, nUsed, normalize, k, xStride, matThreads, computes;
};

struct Routed {
    std::vector<int32_t> ids;
    std::vector<float> weights;
};

// The experts of each token by (logit desc, id asc): softmax keeps that order, and equal logits
// give equal probabilities. The weights in double, softmax then (normalize) the chosen's share.
Routed expected(const std::vector<float>& logits, uint32_t nExpert, uint32_t nUsed, uint32_t tokens, bool normalize) {
    Routed r;
    for (uint32_t t = 0; t < tokens; ++t) {
        const float* l = logits.data() + size_t(t) * nExpert;
        std::vector<int32_t> order(nExpert);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return l[a] > l[b]; });
        const double m = l[order[0]];
        double sum = 0, chosen = 0;
        for (uint32_t e = 0; e < nExpert; ++e) sum += std::exp(double(l[e]) - m);
        for (uint32_t k = 0; k < nUsed; ++k) chosen += std::exp(double(l[order[k]]) - m) / sum;
        for (uint32_t k = 0; k < nUsed; ++k) {
            const double p = std::exp(double(l[order[k]]) - m) / sum;
            r.ids.push_back(order[k]);
            r.weights.push_back(static_cast<float>(normalize ? p / chosen : p));
        }
    }
    return r;
}

// Logits a spread apart (no two within 0.01 but the ties placed on purpose), the largest
// shared by experts `tied`.
std::vector<float> routerLogits(uint32_t nExpert, uint32_t tokens, const std::vector<uint32_t>& tied, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<float> logits;
    for (uint32_t t = 0; t < tokens; ++t) {
        std::vector<float> l(nExpert);
        for (uint32_t e = 0; e < nExpert; ++e) l[e] = 0.02f * static_cast<float>(e) - 4.0f;
        std::shuffle(l.begin(), l.end(), rng);
        for (uint32_t e : tied)
            if (e < nExpert) l[e] = 10.0f;
        logits.insert(logits.end(), l.begin(), l.end());
    }
    return logits;
}

void expectRouted(const Routed& got, const Routed& want, const std::string& what) {
    ASSERT_EQ(got.ids, want.ids) << what;
    for (size_t i = 0; i < want.weights.size(); ++i)
        EXPECT_NEAR(got.weights[i], want.weights[i], 1e-5 * want.weights[i] + 1e-9) << what << ", slot " << i;
}

TEST(VulkanMoeTopK, ExpertsInRankOrderWithTiesToTheLowerId) {
    ZINC_REQUIRE_VULKAN();
    test::Gpu gpu(nullptr);
    const VkPipeline topK = gpu.pipelines.get(vk::Shader::MoeTopK);
    // Lanes of one subgroup (5, 2), other subgroups, other slots of a thread (131 = 3 + 128, ...).
    const std::vector<uint32_t> tied = {200, 5, 131, 64, 2, 35, 259, 387};
    for (const uint32_t nExpert : {60u, 128u, 256u, 512u})
        for (const uint32_t nUsed : {1u, 4u, 8u})
            for (const uint32_t normalize : {0u, 1u}) {
                const uint32_t tokens = 3;
                const auto logits = routerLogits(nExpert, tokens, tied, nExpert + nUsed);
                auto logitsBuf = gpu.buffer(logits.size() * 4, logits.data());
                auto ids = gpu.buffer(tokens * nUsed * 4);
                auto weights = gpu.buffer(tokens * nUsed * 4);
                const TopKPc pc{logitsBuf.address(), ids.address(), weights.address(), 0, 0, 0, nExpert, nUsed, normalize, 0, 0, 0, 0};
                gpu.run([&](vk::Recorder& rec) { rec.dispatch(topK, pc, tokens); });
                const auto* i = static_cast<const int32_t*>(ids.mapped());
                const auto* w = static_cast<const float*>(weights.mapped());
                expectRouted({{i, i + tokens * nUsed}, {w, w + tokens * nUsed}},
                             expected(logits, nExpert, nUsed, tokens, normalize != 0),
                             std::to_string(nExpert) + " experts, " + std::to_string(nUsed) + " used, normalize " +
                                 std::to_string(normalize));
            }
}

TEST(VulkanMoeTopK, RouterRowsComputedInTheSameDispatch) {
    ZINC_REQUIRE_VULKAN();
    test::Gpu gpu(nullptr);
    const uint32_t nExpert = 256, nUsed = 8, k = 64, tokens = 2;
    std::mt19937 rng(11);
    std::normal_distribution<float> value(0.0f, 1.0f);
    std::vector<float> w(size_t(nExpert) * k), x(size_t(tokens) * k);
    for (float& v : w) v = value(rng);
    for (float& v : x) v = value(rng);
    // Experts 7, 70 and 200 hold the same row, x0 + x1: the same logit bits, the largest (~64
    // against ~N(0, 64)) for both tokens, a three-way tie at the top.
    for (uint32_t e : {7u, 70u, 200u})
        for (uint32_t j = 0; j < k; ++j) w[e * k + j] = x[j] + x[k + j];
    auto wBuf = gpu.buffer(w.size() * 4, w.data());
    auto xBuf = gpu.buffer(x.size() * 4, x.data());
    auto logitsBuf = gpu.buffer(size_t(tokens) * nExpert * 4);
    auto ids = gpu.buffer(tokens * nUsed * 4);
    auto weights = gpu.buffer(tokens * nUsed * 4);
    auto done = gpu.buffer(tokens * 4);
    const TopKPc pc{logitsBuf.address(), ids.address(), weights.address(), wBuf.address(), xBuf.address(), done.address(),
                    nExpert, nUsed, 1, k, k, vk::MatVecOp::matVecThreads(k), 1};
    for (int round = 0; round < 2; ++round) {  // the counter is back at 0 for the next router
        gpu.run([&](vk::Recorder& rec) { rec.dispatch(gpu.pipelines.get(vk::Shader::MoeTopK), pc, nExpert, tokens); });
        const auto* l = static_cast<const float*>(logitsBuf.mapped());
        const std::vector<float> logits(l, l + size_t(tokens) * nExpert);
        ASSERT_EQ(logits[7], logits[70]);
        ASSERT_EQ(logits[7], logits[200]);
        const auto* i = static_cast<const int32_t*>(ids.mapped());
        const auto* wt = static_cast<const float*>(weights.mapped());
        const auto want = expected(logits, nExpert, nUsed, tokens, true);
        expectRouted({{i, i + tokens * nUsed}, {wt, wt + tokens * nUsed}}, want, "round " + std::to_string(round));
        const auto* counts = static_cast<const uint32_t*>(done.mapped());
        EXPECT_EQ(counts[0] + counts[1], 0u) << "the last workgroup of each token resets its count";
    }
}

}  // namespace
}  // namespace zinc
