// dequantizeRow against per-element formulas written from the block layouts (ggml-common.h)
// independently of model/quant/dequantize.cpp, and against hand-built blocks whose values
// are known.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>
#include <vector>

#include "model/model_error.h"
#include "model/quant/blocks.h"
#include "model/quant/dequantize.h"
#include "model/quant/fp16.h"
#include "tests/quant/quant_test_support.h"

namespace zinc::model {
namespace {

float h2f(uint16_t h) { return fp16ToFp32(h); }

// 6-bit scale and min of sub-block s (0..7) of a Q4_K/Q5_K block, one index at a time.
void scaleMin(const uint8_t* q, int s, int& sc, int& m) {
    if (s < 4) {
        sc = q[s] & 63;
        m = q[s + 4] & 63;
    } else {
        sc = (q[s + 4] & 15) | ((q[s - 4] >> 6) << 4);
        m = (q[s + 4] >> 4) | ((q[s] >> 6) << 4);
    }
}

// Element i of one block, in ggml's float evaluation order.
float element(GgmlType type, const uint8_t* block, int i) {
    switch (type) {
        case GgmlType::Q4_0: {
            auto& b = *reinterpret_cast<const BlockQ4_0*>(block);
            const int nib = i < 16 ? b.qs[i] & 15 : b.qs[i - 16] >> 4;
            return static_cast<float>(nib - 8) * h2f(b.d);
        }
        case GgmlType::Q4_1: {
            auto& b = *reinterpret_cast<const BlockQ4_1*>(block);
            const int nib = i < 16 ? b.qs[i] & 15 : b.qs[i - 16] >> 4;
            return static_cast<float>(nib) * h2f(b.d) + h2f(b.m);
        }
        case GgmlType::Q5_0: {
            auto& b = *reinterpret_cast<const BlockQ5_0*>(block);
            const int nib = i < 16 ? b.qs[i] & 15 : b.qs[i - 16] >> 4;
            const int high = (b.qh[i / 8] >> (i % 8)) & 1;
            return static_cast<float>((nib | high << 4) - 16) * h2f(b.d);
        }
        case GgmlType::Q5_1: {
            auto& b = *reinterpret_cast<const BlockQ5_1*>(block);
            const int nib = i < 16 ? b.qs[i] & 15 : b.qs[i - 16] >> 4;
            const int high = (b.qh[i / 8] >> (i % 8)) & 1;
            return static_cast<float>(nib | high << 4) * h2f(b.d) + h2f(b.m);
        }
        case GgmlType::Q8_0: {
            auto& b = *reinterpret_cast<const BlockQ8_0*>(block);
            return static_cast<float>(b.qs[i]) * h2f(b.d);
        }
        case GgmlType::Q4_K:
        case GgmlType::Q5_K: {
            const bool five = type == GgmlType::Q5_K;
            const uint16_t* dd = reinterpret_cast<const uint16_t*>(block);
            const uint8_t* scales = block + 4;
            const uint8_t* qh = five ? block + 16 : nullptr;
            const uint8_t* qs = five ? block + 48 : block + 16;
            const int sub = i / 32, within = i % 64;
            const int byte = qs[32 * (i / 64) + within % 32];
            int q = within < 32 ? byte & 15 : byte >> 4;
            if (five) q |= ((qh[i % 32] >> sub) & 1) << 4;
            int sc, m;
            scaleMin(scales, sub, sc, m);
            return h2f(dd[0]) * static_cast<float>(sc) * static_cast<float>(q) - h2f(dd[1]) * static_cast<float>(m);
        }
        case GgmlType::Q6_K: {
            auto& b = *reinterpret_cast<const BlockQ6_K*>(block);
            const int h = i / 128, g = (i % 128) / 32, l = i % 32;
            const int lowByte = b.ql[64 * h + 32 * (g % 2) + l];
            const int low4 = g < 2 ? lowByte & 15 : lowByte >> 4;
            const int high2 = (b.qh[32 * h + l] >> (2 * g)) & 3;
            return h2f(b.d) * static_cast<float>(b.scales[i / 16]) * static_cast<float>((low4 | high2 << 4) - 32);
        }
        case GgmlType::Q2_K: {
            auto& b = *reinterpret_cast<const BlockQ2_K*>(block);
            const int n = i / 128, shift = 2 * ((i % 128) / 32), l = i % 32, sc = b.scales[i / 16];
            const int q = (b.qs[32 * n + l] >> shift) & 3;
            return h2f(b.d) * static_cast<float>(sc & 15) * static_cast<float>(q) - h2f(b.dmin) * static_cast<float>(sc >> 4);
        }
        case GgmlType::Q3_K: {
            // Scales as quantize_row_q3_K packs them: scale j's low nibble in byte j (j < 8) or
            // the high nibble of byte j - 8, its top two bits at bit 2 (j / 4) of byte 8 + j % 4.
            auto& b = *reinterpret_cast<const BlockQ3_K*>(block);
            const int j = i / 16, n = i / 128, g = (i % 128) / 32, l = i % 32;
            const int low = j < 8 ? b.scales[j] & 15 : b.scales[j - 8] >> 4;
            const int scale = (low | ((b.scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4) - 32;
            const int q = ((b.qs[32 * n + l] >> (2 * g)) & 3) - ((b.hmask[l] >> (4 * n + g)) & 1 ? 0 : 4);
            return h2f(b.d) * static_cast<float>(scale) * static_cast<float>(q);
        }
        case GgmlType::IQ4_NL: {
            auto& b = *reinterpret_cast<const BlockIQ4_NL*>(block);
            return h2f(b.d) * static_cast<float>(kIq4nlValues[i < 16 ? b.qs[i] & 15 : b.qs[i - 16] >> 4]);
        }
        case GgmlType::IQ4_XS: {
            auto& b = *reinterpret_cast<const BlockIQ4_XS*>(block);
            const int ib = i / 32, l = i % 32;
            const int ls = ((b.scalesL[ib / 2] >> (ib % 2 ? 4 : 0)) & 15) | ((b.scalesH >> (2 * ib)) & 3) << 4;
            const uint8_t* qs = b.qs + 16 * ib;
            return h2f(b.d) * static_cast<float>(ls - 32) * static_cast<float>(kIq4nlValues[l < 16 ? qs[l] & 15 : qs[l - 16] >> 4]);
        }
        case GgmlType::F16: return h2f(reinterpret_cast<const uint16_t*>(block)[i]);
        case GgmlType::BF16: return bf16ToFp32(reinterpret_cast<const uint16_t*>(block)[i]);
        case GgmlType::F32: return reinterpret_cast<const float*>(block)[i];
        default: return 0.0f;
    }
}

TEST(Dequantize, MatchesPerElementFormulaOnRandomBlocks) {
    std::mt19937 rng(1234);
    const int64_t k = 512;
    for (GgmlType type : test::computableWeightTypes()) {
        SCOPED_TRACE(std::string(ggmlTypeName(type)));
        const auto row = test::randomWeightRow(type, k, rng);
        std::vector<float> out(k);
        dequantizeRow(type, row.data(), out.data(), k);
        const auto& t = traitsOf(type);
        for (int64_t i = 0; i < k; ++i) {
            const uint8_t* block = row.data() + (i / t.blockElems) * t.blockBytes;
            const float expected = element(type, block, static_cast<int>(i % t.blockElems));
            ASSERT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(expected)) << "element " << i;
        }
    }
}

TEST(Dequantize, Q4_0HandBuilt) {
    BlockQ4_0 b{};
    b.d = 0x3800;  // 0.5
    for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
    float y[32];
    dequantizeRow(GgmlType::Q4_0, &b, y, 32);
    EXPECT_EQ(y[0], -4.0f);   // (0 - 8) * 0.5
    EXPECT_EQ(y[15], 3.5f);   // (15 - 8) * 0.5
    EXPECT_EQ(y[16], 3.5f);   // high nibble of byte 0 = 15
    EXPECT_EQ(y[31], -4.0f);  // high nibble of byte 15 = 0
}

TEST(Dequantize, Q5_1HandBuilt) {
    BlockQ5_1 b{};
    b.d = 0x4000;  // 2
    b.m = 0xbc00;  // -1
    b.qs[3] = 0x5a;                   // element 3: 0xa, element 19: 0x5
    b.qh[0] = 1 << 3;                 // fifth bit of element 3
    b.qh[2] = 1 << 3;                 // fifth bit of element 19
    float y[32];
    dequantizeRow(GgmlType::Q5_1, &b, y, 32);
    EXPECT_EQ(y[3], (16 + 10) * 2.0f - 1.0f);
    EXPECT_EQ(y[19], (16 + 5) * 2.0f - 1.0f);
    EXPECT_EQ(y[0], -1.0f);
}

// Packs 6-bit scales/mins with the bit placement ggml's quantize_row_q4_K_ref writes.
void packScalesMins(const int sc[8], const int mn[8], uint8_t out[12]) {
    std::memset(out, 0, 12);
    for (int j = 0; j < 8; ++j) {
        if (j < 4) {
            out[j] = static_cast<uint8_t>(sc[j]);
            out[j + 4] = static_cast<uint8_t>(mn[j]);
        } else {
            out[j + 4] = static_cast<uint8_t>((sc[j] & 15) | (mn[j] & 15) << 4);
            out[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
            out[j] |= static_cast<uint8_t>((mn[j] >> 4) << 6);
        }
    }
}

TEST(Dequantize, Q4_KHandBuiltScalesAndMins) {
    const int sc[8] = {1, 2, 3, 4, 17, 37, 50, 63};
    const int mn[8] = {2, 0, 5, 63, 32, 29, 1, 63};  // top bits differ from the scales
    BlockQ4_K b{};
    b.d = 0x3c00;     // 1
    b.dmin = 0x3800;  // 0.5
    packScalesMins(sc, mn, b.scales);
    std::memset(b.qs, 0x33, sizeof(b.qs));  // every quant = 3
    b.qs[32 * 2 + 5] = 0xf0;                // chunk 2: element 128+5 -> 0, element 160+5 -> 15
    float y[256];
    dequantizeRow(GgmlType::Q4_K, &b, y, 256);
    EXPECT_EQ(y[0], 1 * 3 - 0.5f * 2);            // sub-block 0
    EXPECT_EQ(y[32 * 3], 4 * 3 - 0.5f * 63);      // sub-block 3
    EXPECT_EQ(y[32 * 4 + 5], 17 * 0 - 0.5f * 32);  // sub-block 4, quant 0
    EXPECT_EQ(y[32 * 5 + 5], 37 * 15 - 0.5f * 29);
    EXPECT_EQ(y[32 * 5], 37 * 3 - 0.5f * 29);
    EXPECT_EQ(y[255], 63 * 3 - 0.5f * 63);
}

TEST(Dequantize, Q5_KHandBuiltHighBits) {
    const int sc[8] = {1, 1, 1, 1, 1, 1, 1, 2};
    const int mn[8] = {0, 0, 0, 0, 0, 0, 0, 1};
    BlockQ5_K b{};
    b.d = 0x3c00;
    b.dmin = 0x3c00;
    packScalesMins(sc, mn, b.scales);
    b.qs[32 * 3 + 7] = 0x94;  // element 192+7 -> 4, element 224+7 -> 9
    b.qh[7] = 0x80 | 0x01;    // bit 7: fifth bit of element 224+7; bit 0: of element 7
    float y[256];
    dequantizeRow(GgmlType::Q5_K, &b, y, 256);
    EXPECT_EQ(y[7], 16.0f);
    EXPECT_EQ(y[192 + 7], 4.0f);
    EXPECT_EQ(y[224 + 7], 2.0f * (16 + 9) - 1.0f);
    EXPECT_EQ(y[224 + 8], -1.0f);
}

TEST(Dequantize, Q6_KHandBuiltInterleaving) {
    BlockQ6_K b{};
    b.d = 0x3400;  // 0.25
    for (int s = 0; s < 16; ++s) b.scales[s] = static_cast<int8_t>(s - 8);
    // Element 128 + 64 + 3 (half 1, group 2, l = 3): high nibble of ql[64 + 3], bits 4..5 of qh[32 + 3].
    b.ql[64 + 3] = 0xf0;
    b.qh[32 + 3] = 0x30;  // -> q = 63 -> 31
    // Element 32 + 20 (half 0, group 1, l = 20): low nibble of ql[32 + 20], bits 2..3 of qh[20].
    b.ql[32 + 20] = 0x05;
    b.qh[20] = 0x08;  // high2 = 2 -> q = 37 -> 5
    float y[256];
    dequantizeRow(GgmlType::Q6_K, &b, y, 256);
    EXPECT_EQ(y[195], 0.25f * (12 - 8) * 31);
    EXPECT_EQ(y[52], 0.25f * (3 - 8) * 5);
    EXPECT_EQ(y[0], 0.25f * -8 * -32);  // all-zero bits -> q = -32
}

TEST(Dequantize, FloatFormats) {
    const uint16_t halves[2] = {0x3c00, 0xc000};
    const uint16_t bhalves[2] = {0x3f80, 0xc040};
    float y[2];
    dequantizeRow(GgmlType::F16, halves, y, 2);
    EXPECT_EQ(y[0], 1.0f);
    EXPECT_EQ(y[1], -2.0f);
    dequantizeRow(GgmlType::BF16, bhalves, y, 2);
    EXPECT_EQ(y[0], 1.0f);
    EXPECT_EQ(y[1], -3.0f);
}

TEST(Dequantize, RejectsTypesItCannotDequantize) {
    uint8_t block[256] = {};
    float y[256];
    try {
        dequantizeRow(GgmlType::IQ3_XXS, block, y, 256);
        FAIL() << "expected ModelError";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("IQ3_XXS"), std::string::npos) << e.what();
    }
    EXPECT_THROW(dequantizeRow(GgmlType::Q4_0, block, y, 33), ModelError);
}

}  // namespace
}  // namespace zinc::model
