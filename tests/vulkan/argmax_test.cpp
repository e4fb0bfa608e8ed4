// argmax.comp dispatched alone, off any model: the first index of the largest logit for
// vocabularies of every length modulo 4 (the 16-byte loads' tail), logits at 16-byte
// boundaries and not (the 4-byte path), the largest value repeated later (the first wins) and
// at either end; the id lands in the token state and the ring as the greedy loop reads them.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/sampler.h"
#include "tests/vulkan/gpu_fixture.h"
#include "tests/vulkan/vulkan_fixture.h"
#include "vulkan/token_state.h"

namespace zinc {
namespace {

// vulkan/op_argmax.cpp's push constants.
struct ArgmaxPc {
    VkDeviceAddress logits, state, ring;
    uint32_t n, ringCapacity, advance;
};

// The id argmax.comp writes for `logits`, placed `offsetFloats` into its buffer.
int32_t gpuArgmax(test::Gpu& gpu, const std::vector<float>& logits, uint32_t offsetFloats) {
    std::vector<float> padded(offsetFloats, 0.0f);
    padded.insert(padded.end(), logits.begin(), logits.end());
    auto buffer = gpu.buffer(padded.size() * sizeof(float), padded.data());
    auto state = gpu.buffer(vk::tokenStateBytes(1));
    auto ring = gpu.buffer(16 * sizeof(int32_t));
    const ArgmaxPc pc{buffer.address() + 4u * offsetFloats, state.address(), ring.address(), static_cast<uint32_t>(logits.size()), 16, 0};
    gpu.run([&](vk::Recorder& rec) { rec.dispatch(gpu.pipelines.get(vk::Shader::Argmax), pc, 1); });
    const auto* ints = static_cast<const int32_t*>(state.mapped());
    EXPECT_EQ(static_cast<const int32_t*>(ring.mapped())[0], ints[8]) << "the ring's first id is the state's";
    return ints[8];  // kStateTokens
}

TEST(VulkanArgmax, FirstLargestLogitForEveryLengthAndAlignment) {
    ZINC_REQUIRE_VULKAN();
    test::Gpu gpu(nullptr);
    std::mt19937 rng(7);
    std::normal_distribution<float> logit(0.0f, 3.0f);
    for (const uint32_t n : {1u, 3u, 4u, 5u, 1027u, 8194u, 151937u})
        for (const uint32_t offset : {0u, 1u})  // 16-byte aligned (the arena's rows) or not
            for (int where = 0; where < 3; ++where) {
                std::vector<float> logits(n);
                for (float& l : logits) l = logit(rng);
                // The largest at the front, the back or the middle, repeated after it where there is room.
                const uint32_t at = where == 0 ? 0u : where == 1 ? n - 1 : n / 2;
                logits[at] = 100.0f;
                if (at + 5 < n) logits[at + 5] = 100.0f;
                if (at + 4u * 256u < n) logits[at + 4u * 256u] = 100.0f;  // the same thread's later quad
                const int32_t want = runtime::argmax(logits);
                ASSERT_EQ(want, static_cast<int32_t>(at));
                EXPECT_EQ(gpuArgmax(gpu, logits, offset), want)
                    << n << " logits, " << (offset ? "not " : "") << "16-byte aligned, largest at " << at;
            }
}

}  // namespace
}  // namespace zinc
