// Activation quantizers against hand-derived bytes. Q8_0/Q8_1 must follow ggml's x86 AVX
// branch (id = 127/amax, ties to even), Q8_K ggml's quantize_row_q8_K_ref (iscale =
// -127/max, ties to even); the Reference variants follow ggml-quants.c's _ref (roundf).
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <vector>

#include "model/model_error.h"
#include "model/quant/blocks.h"
#include "model/quant/quantize_activations.h"

namespace zinc::model {
namespace {

std::vector<int> quants(const int8_t* qs, int n) { return std::vector<int>(qs, qs + n); }

// 127 fixes d = 1 and id = 1 in both variants, so only the rounding of ties differs.
std::vector<float> tieBlock() {
    std::vector<float> x(32, 0.0f);
    x[0] = 127.0f, x[1] = 62.5f, x[2] = -62.5f, x[3] = 0.5f, x[4] = 1.5f, x[5] = -2.5f;
    return x;
}

// amax = 1 + 2^-19: 127/amax = 0x1.fbffcp+6 but 1/(amax/127) = 0x1.fbffc2p+6, and
// x = 0x1.2244aep-5 lands exactly on 4.5 with the first and just above it with the second.
std::vector<float> inverseScaleBlock() {
    std::vector<float> x(32, 0.0f);
    x[0] = 0x1.00002p+0f, x[1] = 0x1.2244aep-5f;
    return x;
}

TEST(QuantizeActivations, Q8_0RoundsTiesToEvenLikeGgmlX86) {
    BlockQ8_0 b;
    quantizeRowQ8_0(tieBlock().data(), &b, 32);
    EXPECT_EQ(b.d, 0x3c00);
    EXPECT_EQ(quants(b.qs, 6), (std::vector<int>{127, 62, -62, 0, 2, -2}));
    quantizeRowQ8_0Reference(tieBlock().data(), &b, 32);
    EXPECT_EQ(b.d, 0x3c00);
    EXPECT_EQ(quants(b.qs, 6), (std::vector<int>{127, 63, -63, 1, 2, -3}));
}

TEST(QuantizeActivations, Q8_0UsesInverseScale127OverAmax) {
    BlockQ8_0 b;
    quantizeRowQ8_0(inverseScaleBlock().data(), &b, 32);
    EXPECT_EQ(b.d, 0x2008);  // fp16(amax / 127)
    EXPECT_EQ(quants(b.qs, 3), (std::vector<int>{127, 4, 0}));
    quantizeRowQ8_0Reference(inverseScaleBlock().data(), &b, 32);
    EXPECT_EQ(b.d, 0x2008);
    EXPECT_EQ(quants(b.qs, 3), (std::vector<int>{127, 5, 0}));
}

TEST(QuantizeActivations, Q8_1StoresScaledSumOfQuants) {
    auto x = tieBlock();
    x[6] = -100.0f;
    BlockQ8_1 b;
    quantizeRowQ8_1(x.data(), &b, 32);
    EXPECT_EQ(b.d, 0x3c00);
    EXPECT_EQ(quants(b.qs, 7), (std::vector<int>{127, 62, -62, 0, 2, -2, -100}));
    EXPECT_EQ(b.s, 0x4ec0);  // 27.0 = 127 + 62 - 62 + 0 + 2 - 2 - 100
}

TEST(QuantizeActivations, Q8_KScalesByTheSignedMaximum) {
    std::vector<float> x(512, 0.0f);
    // Block 0: the first element of largest magnitude is -2 (the later +2 does not replace it).
    x[0] = 1.0f, x[1] = -2.0f, x[2] = 0.5f, x[3] = -1.0f, x[4] = 2.0f, x[5] = 1.5f, x[17] = 0.25f;
    // Block 1: +3 comes first, so iscale = -127/3 and the quants flip sign.
    x[256] = 3.0f, x[257] = -3.0f, x[258] = 1.0f;
    BlockQ8_K b[2];
    quantizeRowQ8_K(x.data(), b, 512);
    // iscale = -127 / -2 = 63.5: 63.5 -> 64 and -63.5 -> -64 (ties to even), 95.25 -> 95.
    EXPECT_EQ(quants(b[0].qs, 6), (std::vector<int>{64, -127, 32, -64, 127, 95}));
    EXPECT_EQ(b[0].qs[17], 16);  // 15.875
    EXPECT_EQ(std::bit_cast<uint32_t>(b[0].d), 0x3c810204u);  // 1 / 63.5
    EXPECT_EQ(b[0].bsums[0], 64 - 127 + 32 - 64 + 127 + 95);
    EXPECT_EQ(b[0].bsums[1], 16);
    EXPECT_EQ(b[0].bsums[2], 0);
    EXPECT_EQ(quants(b[1].qs, 4), (std::vector<int>{-127, 127, -42, 0}));  // -42.33 -> -42
    EXPECT_EQ(std::bit_cast<uint32_t>(b[1].d), 0xbcc18306u);                // 1 / (-127/3)
    EXPECT_EQ(b[1].bsums[0], -42);
}

TEST(QuantizeActivations, Q8_KZeroBlockIsAllZero) {
    std::vector<float> x(256, 0.0f);
    BlockQ8_K b;
    std::memset(&b, 0x5a, sizeof(b));
    quantizeRowQ8_K(x.data(), &b, 256);
    EXPECT_EQ(b.d, 0.0f);
    for (int j = 0; j < 256; ++j) ASSERT_EQ(b.qs[j], 0);
    for (int j = 0; j < 16; ++j) ASSERT_EQ(b.bsums[j], 0);
}

TEST(QuantizeActivations, HalfConversionsRoundToNearestEven) {
    const float x[5] = {1.0f, 1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, -65504.0f, 1.0f + 0x1p-8f};
    uint16_t h[5];
    convertRowF16(x, h, 5);
    EXPECT_EQ(h[0], 0x3c00);
    EXPECT_EQ(h[1], 0x3c00);  // tie -> even
    EXPECT_EQ(h[2], 0x3c02);  // tie -> even (up)
    EXPECT_EQ(h[3], 0xfbff);
    convertRowBF16(x, h, 5);
    EXPECT_EQ(h[0], 0x3f80);
    EXPECT_EQ(h[4], 0x3f80);  // 1 + 2^-8 is a bf16 tie -> even
}

TEST(QuantizeActivations, RejectsPartialBlocks) {
    std::vector<float> x(300, 1.0f);
    BlockQ8_K b[2];
    EXPECT_THROW(quantizeRowQ8_K(x.data(), b, 300), ModelError);
    BlockQ8_0 c[10];
    EXPECT_THROW(quantizeRowQ8_0(x.data(), c, 33), ModelError);
}

}  // namespace
}  // namespace zinc::model
