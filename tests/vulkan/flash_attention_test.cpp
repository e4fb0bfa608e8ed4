// flash_attention.comp (AttentionOp::recordFlash) dispatched alone, off any model: causal
// attention of a batch over an F16 KV cache held to a double-precision softmax of the same f16
// q, K and V, with scores spread wide enough that the softmax is peaked (as a trained model's)
// and the online max moves: head sizes 32, 64 and 128, GQA groups, a batch after earlier
// positions, token counts that are not a multiple of the workgroup's rows, padded row strides
// and q scaled before its rounding (gemma3). Emulated (ZINC_VK_COOPMAT=emulate) everywhere, on
// matrix cores too where the device has them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "model/quant/fp16.h"
#include "tests/vulkan/gpu_fixture.h"
#include "tests/vulkan/vulkan_fixture.h"
#include "vulkan/ops.h"
#include "vulkan/token_state.h"

namespace zinc {
namespace {

struct FlashCase {
    uint32_t headDim, nHead, group, nTok, position0;
    bool preScale;  // gemma3: q * scale rounded to f16, scores unscaled
};

// Rounds through f16, as the cache and the kernel's q fragments hold the values.
float f16(float x) { return model::fp16ToFp32(model::fp32ToFp16(x)); }

class FlashAttentionTest : public testing::TestWithParam<FlashCase> {};

TEST_P(FlashAttentionTest, MatchesDoublePrecisionSoftmax) {
    ZINC_REQUIRE_VULKAN();
    const auto caps = vk::listDevices()[0];
    if (!caps.shaderFloat16) GTEST_SKIP() << "no shaderFloat16 on device 0";
    const FlashCase c = GetParam();
    const uint32_t kvHeads = c.nHead / c.group, kvDim = kvHeads * c.headDim, keys = c.position0 + c.nTok;
    const uint32_t qStride = c.nHead * c.headDim + 16, outStride = c.nHead * c.headDim + 8;
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.headDim));
    const float qScale = c.preScale ? scale : 1.0f, scoreScale = c.preScale ? 1.0f : scale;
    std::mt19937 rng(c.headDim * 131 + c.nTok);
    std::normal_distribution<float> qd(0.0f, 2.0f), kd(0.0f, 1.5f);  // scores of spread ~3 (more with preScale)
    std::uniform_real_distribution<float> vd(-1.0f, 1.0f);
    std::vector<float> q(size_t{c.nTok} * qStride);
    for (auto& x : q) x = qd(rng);
    std::vector<uint16_t> k(size_t{keys} * kvDim), v(k.size());
    for (auto& x : k) x = model::fp32ToFp16(kd(rng));
    for (auto& x : v) x = model::fp32ToFp16(vd(rng));

    // The reference: each (token, head) over keys 0..position0 + t.
    std::vector<double> want(size_t{c.nTok} * outStride, 0.0);
    for (uint32_t t = 0; t < c.nTok; ++t)
        for (uint32_t h = 0; h < c.nHead; ++h) {
            const uint32_t kvCol = (h / c.group) * c.headDim, n = c.position0 + t + 1;
            std::vector<double> s(n);
            double mx = -INFINITY;
            for (uint32_t p = 0; p < n; ++p) {
                double dot = 0;
                for (uint32_t d = 0; d < c.headDim; ++d)
                    dot += double(f16(q[t * qStride + h * c.headDim + d] * qScale)) *
                           model::fp16ToFp32(k[size_t{p} * kvDim + kvCol + d]);
                s[p] = dot * scoreScale;
                mx = std::max(mx, s[p]);
            }
            double sum = 0;
            for (auto& x : s) sum += (x = std::exp(x - mx));
            for (uint32_t d = 0; d < c.headDim; ++d) {
                double o = 0;
                for (uint32_t p = 0; p < n; ++p) o += s[p] * model::fp16ToFp32(v[size_t{p} * kvDim + kvCol + d]);
                want[t * outStride + h * c.headDim + d] = o / sum;
            }
        }

    std::vector<const char*> modes = {"emulate"};
    if (caps.cooperativeMatrix) modes.push_back("1");
    for (const char* mode : modes) {
        test::Gpu gpu(mode);
        const auto& opened = gpu.device->caps();
        ASSERT_TRUE(opened.flashAttention) << mode << ": " << opened.prefillAttention;
        ASSERT_LE(vk::AttentionOp::flashSharedBytes(c.headDim, vk::AttentionOp::flashSubgroup(opened)),
                  opened.sharedMemoryBytes);
        vk::TokenStateHeader header;
        header.position = static_cast<int32_t>(c.position0);
        header.nTokens = static_cast<int32_t>(c.nTok);
        header.kvLength = static_cast<int32_t>(keys);
        auto state = gpu.buffer(sizeof header, &header);
        auto qBuf = gpu.buffer(q.size() * 4, q.data());
        auto kBuf = gpu.buffer(k.size() * 2, k.data()), vBuf = gpu.buffer(v.size() * 2, v.data());
        const std::vector<float> sentinel(want.size(), 7.0f);  // between heads' rows: must stay
        auto out = gpu.buffer(sentinel.size() * 4, sentinel.data());
        gpu.run([&](vk::Recorder& rec) {
            vk::AttentionOp::recordFlash(rec, gpu.pipelines,
                                         {qBuf.address(), kBuf.address(), vBuf.address(), out.address(), state.address(), c.nTok,
                                          c.nHead, c.group, c.headDim, kvDim, qStride, outStride, scoreScale, qScale});
        });
        const auto* got = static_cast<const float*>(out.mapped());
        double worst = 0;
        for (uint32_t t = 0; t < c.nTok; ++t)
            for (uint32_t i = 0; i < outStride; ++i) {
                const size_t at = size_t{t} * outStride + i;
                if (i >= c.nHead * c.headDim) {
                    ASSERT_EQ(got[at], 7.0f) << "token " << t << " padding " << i << " written";
                    continue;
                }
                const double err = std::fabs(got[at] - want[at]);
                worst = std::max(worst, err);
                // p rounded to f16 (relative 2^-11) against |v| <= 1, and fp32 sums.
                ASSERT_LE(err, 1.5e-3) << mode << ": token " << t << " head " << i / c.headDim << " element " << i % c.headDim
                                       << ": " << got[at] << " want " << want[at];
            }
        std::printf("flash attention (%s) head %u, %u heads / group %u, %u tokens after %u: max |out - fp64| %.3g\n", mode,
                    c.headDim, c.nHead, c.group, c.nTok, c.position0, worst);
    }
}

// describe names the prefill attention; ZINC_VK_FLASH=0 turns flash off, another value is refused.
TEST(VulkanFlashAttention, DescribeNamesThePrefillAttention) {
    ZINC_REQUIRE_VULKAN();
    const auto describeWith = [](const char* coopmat, const char* flash) {
        if (coopmat) ::setenv("ZINC_VK_COOPMAT", coopmat, 1);
        if (flash) ::setenv("ZINC_VK_FLASH", flash, 1);
        std::string d;
        try {
            d = test::load("qwen3-tiny.gguf", true).tier->describe();
        } catch (const std::exception& e) {
            d = e.what();
        }
        ::unsetenv("ZINC_VK_COOPMAT");
        ::unsetenv("ZINC_VK_FLASH");
        return d;
    };
    const auto caps = vk::listDevices()[0];
    const std::string plain = describeWith(nullptr, nullptr);
    EXPECT_NE(plain.find(caps.cooperativeMatrix ? "prefill attention: flash (heads of up to 128, no window), cooperative matrix"
                                                : "prefill attention: split over positions (attention_split; flash needs cooperative matrices)"),
              std::string::npos) << plain;
    EXPECT_NE(describeWith(nullptr, "2").find("ZINC_VK_FLASH=2 is neither 0 nor 1"), std::string::npos);
    if (caps.shaderFloat16) {
        const std::string emulated = describeWith("emulate", nullptr);
        EXPECT_NE(emulated.find("prefill attention: flash (heads of up to 128, no window), 16x16 f16 tiles emulated"), std::string::npos)
            << emulated;
        const std::string off = describeWith("emulate", "0");
        EXPECT_NE(off.find("prefill attention: split over positions (attention_split; flash off: ZINC_VK_FLASH=0)"), std::string::npos)
            << off;
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, FlashAttentionTest,
                         testing::Values(FlashCase{64, 4, 2, 70, 0, false}, FlashCase{128, 4, 2, 80, 37, false},
                                         FlashCase{32, 2, 1, 33, 5, true}),
                         [](const testing::TestParamInfo<FlashCase>& info) {
                             const auto& c = info.param;
                             return "head" + std::to_string(c.headDim) + "_heads" + std::to_string(c.nHead) + "_group" +
                                    std::to_string(c.group) + "_tokens" + std::to_string(c.nTok) + "_after" +
                                    std::to_string(c.position0) + (c.preScale ? "_prescaled" : "");
                         });

}  // namespace
}  // namespace zinc
