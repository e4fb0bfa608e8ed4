// quantize.comp dispatched alone: rows of activations -> the 8-bit formats, compared with the
// cpu tier's quantizers (model/quant/quantize_activations.h) quant for quant, scale for scale.
// The scales are divisions, which Vulkan lets a device round to within 2.5 ulp: lavapipe's are
// the host's bits, the H200's Q8_K d = 1 / iscale is 1 ulp off for some scales. So a scale
// (and a block sum, d times an integer) may be 1 ulp from the host's; the quants are equal.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "model/quant/fp16.h"
#include "model/quant/quantize_activations.h"
#include "tests/vulkan/gpu_fixture.h"
#include "tests/vulkan/vulkan_fixture.h"

namespace zinc {
namespace {

// vulkan/op_matvec.cpp's QuantizePc.
struct QuantizePc {
    VkDeviceAddress x, x2, out;
    uint32_t k, inStride, outStride, mode, prologue;
    VkDeviceAddress normW, normOut;
    float eps;
    uint32_t norm, x2Stride, aux;
};

// How many floats lie between a and b (0: the same bits).
int64_t ulpsApart(float a, float b) {
    int32_t ia, ib;
    std::memcpy(&ia, &a, 4);
    std::memcpy(&ib, &b, 4);
    const auto ordered = [](int32_t i) { return i < 0 ? int64_t{INT32_MIN} - i : int64_t{i}; };
    return std::abs(ordered(ia) - ordered(ib));
}

TEST(VulkanQuantize, RowsMatchTheCpuTierQuantizers) {
    ZINC_REQUIRE_VULKAN();
    test::Gpu gpu(nullptr);
    std::mt19937 rng(3);
    std::normal_distribution<float> value(0.0f, 2.0f);
    for (const uint32_t k : {256u, 512u, 4096u})
        for (const uint32_t mode : {0u, 2u}) {
            std::vector<float> x(k);
            for (float& v : x) v = value(rng);
            x[k / 3] = 9.0f;        // a block's largest, repeated with its sign flipped
            x[k / 3 + 7] = -9.0f;
            auto in = gpu.buffer(k * 4, x.data());
            const uint32_t words = k / 4 + k / 16;
            auto out = gpu.buffer(words * 4);
            const QuantizePc pc{in.address(), in.address(), out.address(), k, k, words, mode, 0, in.address(), in.address(), 0.0f, 0, 0, 0};
            gpu.run([&](vk::Recorder& rec) { rec.dispatch(gpu.pipelines.get(vk::Shader::Quantize), pc, (k + 255) / 256, 1); });
            const auto* w = static_cast<const uint32_t*>(out.mapped());
            const auto* q = reinterpret_cast<const int8_t*>(w);
            const float* d = reinterpret_cast<const float*>(w + k / 4);
            const float* s = d + k / 32;
            const std::string what = "k " + std::to_string(k) + ", mode " + std::to_string(mode);
            if (mode == 0) {
                std::vector<model::BlockQ8_0> ref(k / 32);
                model::quantizeRowQ8_0(x.data(), ref.data(), k);
                for (uint32_t b = 0; b < k / 32; ++b) {
                    EXPECT_EQ(d[b], model::fp16ToFp32(ref[b].d)) << what << ", block " << b;  // rounded to fp16
                    for (uint32_t i = 0; i < 32; ++i) ASSERT_EQ(q[32 * b + i], ref[b].qs[i]) << what << ", value " << 32 * b + i;
                }
            } else {
                std::vector<model::BlockQ8_K> ref(k / 256);
                model::quantizeRowQ8_K(x.data(), ref.data(), k);
                for (uint32_t b = 0; b < k / 256; ++b) {
                    for (uint32_t i = 0; i < 256; ++i) ASSERT_EQ(q[256 * b + i], ref[b].qs[i]) << what << ", value " << 256 * b + i;
                    for (uint32_t j = 0; j < 8; ++j) {
                        EXPECT_LE(ulpsApart(d[8 * b + j], ref[b].d), 1) << what << ", block " << 8 * b + j << ": " << d[8 * b + j] << " vs " << ref[b].d;
                        const float sum = ref[b].d * static_cast<float>(ref[b].bsums[2 * j] + ref[b].bsums[2 * j + 1]);
                        EXPECT_LE(ulpsApart(s[8 * b + j], sum), 2) << what << ", sum of block " << 8 * b + j;
                    }
                }
            }
        }
}

}  // namespace
}  // namespace zinc
