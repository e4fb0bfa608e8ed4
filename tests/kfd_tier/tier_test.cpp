// The kfd tier on the simulated GPU held to the cpu tier: greedy generation sampled on the GPU
// with tokens queued ahead, batched prefill, and bounded waits that explain a stuck queue.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "kfd/tier/submitter.h"
#include "runtime/sampler.h"
#include "tests/kfd_tier/kfd_tier_fixture.h"

namespace zinc {
namespace {

std::vector<int32_t> cpuGreedy(test::Loaded& cpu, int32_t first, int32_t n) {
    std::vector<int32_t> out;
    int32_t token = first;
    for (int32_t i = 0; i < n; ++i) out.push_back(token = runtime::argmax(cpu.session->step(token)));
    return out;
}

TEST(KfdTier, StoriesGreedyOnTheGpuEqualsCpuFor64Tokens) {
    auto cpu = test::load("stories260K.gguf", false);
    auto gpu = test::load("stories260K.gguf", true);
    const auto want = cpuGreedy(cpu, 1, 64);
    EXPECT_EQ(gpu.tier->generateGreedy(1, 0, 64, cpu.model->config().nVocab), want);
    EXPECT_EQ(gpu.tier->stats().decodeSubmissions, 64);
    std::printf("%s\n", gpu.tier->describe().c_str());
}

}  // namespace
}  // namespace zinc
