// The two-pass matrix-core matmul (vulkan/op_matmul_f16.h) dispatched alone, off any model:
// dequant_f16.comp held bit for bit to the cpu tier's dequantization rounded to f16, for every
// weight type it decodes, with PAIR's second set, EXPERT's skipped experts and a chunk that
// starts past row 0; matmul_f16.comp held to a double-precision product of the same f16
// values, for row counts that are not a multiple of the tile (and chunks of rows), token
// counts that are not a multiple of the tile, accumulate, PAIR and EXPERT. Emulated
// (ZINC_VK_COOPMAT=emulate) everywhere, on matrix cores too where the device has them.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "model/gguf/ggml_type.h"
#include "model/make_model/weight_gen.h"
#include "model/quant/dequantize.h"
#include "model/quant/fp16.h"
#include "tests/vulkan/gpu_fixture.h"
#include "tests/vulkan/vulkan_fixture.h"
#include "vulkan/op_matmul_f16.h"
#include "vulkan/recorder.h"
#include "vulkan/vk_buffer.h"
#include "vulkan/vk_pipeline.h"
#include "vulkan/vk_queue.h"

namespace zinc {
namespace {

using model::GgmlType;

using test::Gpu;

// `rows` x `cols` random weights of `type` (times `experts`): make-model's generator where it
// has the type, else random bytes with a sane f16 block scale at `scaleAt` of each block.
std::vector<uint8_t> randomWeights(GgmlType type, uint32_t rows, uint32_t cols, uint64_t seed, uint32_t experts = 1) {
    const uint64_t elements = uint64_t{rows} * cols * experts;
    std::vector<uint8_t> bytes(model::rowBytes(type, elements));
    if (model::canGenerate(type)) {
        model::generateUnits(type, {0.0f, 0.05f}, seed, 0, elements, 0, model::genUnitCount(type, elements), bytes.data());
        return bytes;
    }
    std::mt19937 rng(static_cast<uint32_t>(seed));
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    const auto& t = model::traitsOf(type);
    const size_t scaleAt = type == GgmlType::Q3_K ? 108 : 0;  // Q3_K: d last; IQ4_NL, IQ4_XS: d first
    std::uniform_real_distribution<float> d(0.0005f, 0.002f);
    for (size_t blk = 0; blk < bytes.size(); blk += t.blockBytes) {
        const uint16_t h = model::fp32ToFp16(rng() % 2 ? d(rng) : -d(rng));
        std::memcpy(bytes.data() + blk + scaleAt, &h, 2);
    }
    return bytes;
}

// The cpu tier's values of `rows` rows from `row0` of one expert's matrix, rounded to f16.
std::vector<uint16_t> cpuHalves(GgmlType type, const std::vector<uint8_t>& w, uint32_t rows, uint32_t cols, uint32_t row0 = 0,
                                uint32_t expert = 0, uint32_t expertRows = 0) {
    const uint64_t rowBytes = model::rowBytes(type, cols);
    std::vector<float> f(cols);
    std::vector<uint16_t> out;
    for (uint32_t r = 0; r < rows; ++r) {
        model::dequantizeRow(type, w.data() + (uint64_t{expert} * expertRows + row0 + r) * rowBytes, f.data(), cols);
        for (float v : f) out.push_back(model::fp32ToFp16(v));
    }
    return out;
}

const GgmlType kDequantTypes[] = {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q3_K,
                                  GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS};

// Halves that differ from the cpu tier's, with the first one named.
// A call on `rows` x `cols` weights of `type` at gate (and up, 0 for none).
vk::F16MatMul::Call weightCall(GgmlType type, uint32_t rows, uint32_t cols, VkDeviceAddress gate, VkDeviceAddress up) {
    vk::F16MatMul::Call call;
    call.type = type;
    call.rows = rows;
    call.cols = cols;
    call.rowBytes = static_cast<uint32_t>(model::rowBytes(type, cols));
    call.weights = gate;
    call.upWeights = up;
    return call;
}

// The GEMM of `call` on `act` (rows `actStride` words apart) into `out` for `tokens` tokens,
// with `scratch` for its f16 rows; false where F16MatMul::record declined it.
bool runGemm(Gpu& gpu, vk::F16MatMul& f16, vk::F16MatMul::Call call, const vk::DeviceBuffer& act, uint32_t actStride,
             const vk::DeviceBuffer& out, uint32_t outStride, uint32_t tokens, const vk::DeviceBuffer& scratch) {
    call.act = act.address();
    call.actStride = actStride;
    call.out = out.address();
    call.outStride = outStride;
    call.tokens = tokens;
    call.scratch = scratch.address();
    call.scratchBytes = scratch.bytes();
    bool recorded = false;
    gpu.run([&](vk::Recorder& rec) { recorded = f16.record(rec, call); });
    return recorded;
}

void expectSameHalves(const uint16_t* got, const std::vector<uint16_t>& want, uint32_t cols, const std::string& what) {
    size_t bad = 0, first = want.size();
    for (size_t i = 0; i < want.size(); ++i)
        if (got[i] != want[i] && !bad++) first = i;
    EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << want.size() << " halves differ; first at row " << first / cols
                       << " col " << first % cols << ": 0x" << std::hex << (first < want.size() ? got[first] : 0) << " for 0x"
                       << (first < want.size() ? want[first] : 0);
}

TEST(VulkanCoopmatDequant, DecodesEveryTiledTypeAsTheCpuTierInF16) {
    ZINC_REQUIRE_VULKAN();
    Gpu gpu(nullptr);
    vk::F16MatMul f16(gpu.pipelines);
    const uint32_t rows = 37, cols = 512;  // rows: not a multiple of the 256-unit workgroup
    for (const GgmlType type : kDequantTypes) {
        const auto gate = randomWeights(type, rows, cols, 11), up = randomWeights(type, rows, cols, 12);
        auto gateBuf = gpu.buffer(gate.size(), gate.data()), upBuf = gpu.buffer(up.size(), up.data());
        // PAIR, rows 5.. (a chunk past row 0): set 0 then set 1, 32 rows each.
        const uint32_t row0 = 5, n = rows - row0;
        auto out = gpu.buffer(size_t{2} * n * cols * 2);
        vk::F16MatMul::Call call = weightCall(type, rows, cols, gateBuf.address(), upBuf.address());
        call.scratch = out.address();
        gpu.run([&](vk::Recorder& rec) { f16.recordDequant(rec, call, row0, n); });
        const auto* halves = static_cast<const uint16_t*>(out.mapped());
        const std::string name(model::ggmlTypeName(type));
        expectSameHalves(halves, cpuHalves(type, gate, n, cols, row0), cols, name + " gate");
        expectSameHalves(halves + size_t{n} * cols, cpuHalves(type, up, n, cols, row0), cols, name + " up");
    }
}

// EXPERT: moe_group.comp's tiles name experts 0 and 2 (0 twice); expert 1 has no tile and
// stays undecoded, expert 2 is decoded once.
TEST(VulkanCoopmatDequant, DecodesOnlyExpertsWithTiles) {
    ZINC_REQUIRE_VULKAN();
    Gpu gpu(nullptr);
    vk::F16MatMul f16(gpu.pipelines);
    const uint32_t rows = 40, cols = 256, experts = 3;
    const GgmlType type = GgmlType::Q4_K;
    const auto w = randomWeights(type, rows, cols, 13, experts);
    auto wBuf = gpu.buffer(w.size(), w.data());
    const std::vector<int32_t> group = {3, 0, 0, 64, 0, 64, 10, 2, 74, 5, /* unused tile */ 0, 0, 0};
    auto groupBuf = gpu.buffer(group.size() * 4, group.data());
    auto out = gpu.buffer(size_t{experts} * rows * cols * 2);
    std::memset(out.mapped(), 0xFF, out.bytes());  // 0xFFFF: an f16 NaN the decode never writes
    vk::F16MatMul::Call call = weightCall(type, rows, cols, wBuf.address(), 0);
    call.experts = experts;
    call.maxTiles = 4;
    call.group = groupBuf.address();
    call.scratch = out.address();
    gpu.run([&](vk::Recorder& rec) { f16.recordDequant(rec, call, 0, rows); });
    const auto* halves = static_cast<const uint16_t*>(out.mapped());
    const size_t slice = size_t{rows} * cols;
    expectSameHalves(halves, cpuHalves(type, w, rows, cols, 0, 0, rows), cols, "expert 0");
    expectSameHalves(halves + 2 * slice, cpuHalves(type, w, rows, cols, 0, 2, rows), cols, "expert 2");
    size_t untouched = 0;
    for (size_t i = 0; i < slice; ++i) untouched += halves[slice + i] == 0xFFFFu;
    EXPECT_EQ(untouched, slice) << "expert 1 has no tile but was decoded";
}

// quantize.comp's 8-bit blocks for `n` rows of k values: per row k / 4 words of signed quants,
// k / 32 scales and k / 32 sums (unused here), and each value as the GEMM sees it (q * da in f16).
struct Activations {
    uint32_t k = 0, stride = 0;
    std::vector<uint32_t> words;
    std::vector<double> values;  // [row][k]
};
Activations randomActivations(uint32_t n, uint32_t k, uint32_t seed) {
    Activations a{k, k / 4 + k / 16, {}, {}};
    a.words.assign(size_t{n} * a.stride, 0);
    a.values.resize(size_t{n} * k);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> scale(0.005f, 0.02f);
    for (uint32_t t = 0; t < n; ++t) {
        uint32_t* row = a.words.data() + size_t{t} * a.stride;
        for (uint32_t u = 0; u < k / 32; ++u) {
            const float da = scale(rng);
            std::memcpy(row + k / 4 + u, &da, 4);
            for (uint32_t i = 0; i < 32; ++i) {
                const auto q = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
                row[8 * u + i / 4] |= uint32_t(static_cast<uint8_t>(q)) << (8 * (i % 4));
                a.values[size_t{t} * k + 32 * u + i] = model::fp16ToFp32(model::fp32ToFp16(float(q) * da));
            }
        }
    }
    return a;
}

struct Product {
    double value, bound;  // the dot product and the sum of |w a|, for the tolerance
};
Product dot(const std::vector<uint16_t>& w, uint32_t row, const Activations& a, uint32_t t) {
    Product p{0, 0};
    for (uint32_t i = 0; i < a.k; ++i) {
        const double x = model::fp16ToFp32(w[size_t{row} * a.k + i]) * a.values[size_t{t} * a.k + i];
        p.value += x;
        p.bound += std::fabs(x);
    }
    return p;
}

// out = silu(g) * u (PAIR) or g, and how far f32 sums of k products may be from it.
Product combine(Product g, const Product* u) {
    if (!u) return {g.value, 1e-4 * g.bound + 1e-6};
    const double silu = g.value / (1 + std::exp(-g.value));
    return {silu * u->value, 1e-3 * (g.bound * (std::fabs(u->value) + 1) + u->bound * (std::fabs(g.value) + 1)) + 1e-6};
}

struct GemmCase {
    const char* tile;   // ZINC_VK_COOPMAT_TILE
    GgmlType type;
    bool pair, accumulate;
    uint32_t scratchRows;  // rows the scratch holds (chunks when fewer than the matrix's)
};

// The modes to run on this device: emulated everywhere (with shaderFloat16), matrix cores where present.
std::vector<const char*> gemmModes() {
    std::vector<const char*> modes;
    const auto caps = vk::listDevices()[0];  // what the device has, before ZINC_VK_COOPMAT's opt-in
    if (caps.shaderFloat16) modes.push_back("emulate");
    if (caps.cooperativeMatrix) modes.push_back("1");
    return modes;
}

class VulkanCoopmatF16GemmTest : public testing::TestWithParam<GemmCase> {};

// 200 rows (64- and 128-row tiles leave rows missing) x 70 tokens (a partial token tile) x k 256.
TEST_P(VulkanCoopmatF16GemmTest, DenseMatchesF16Product) {
    ZINC_REQUIRE_VULKAN();
    const GemmCase c = GetParam();
    const uint32_t rows = 200, cols = 256, tokens = 70;
    const auto gate = randomWeights(c.type, rows, cols, 21), up = randomWeights(c.type, rows, cols, 22);
    const auto gateF16 = cpuHalves(c.type, gate, rows, cols), upF16 = cpuHalves(c.type, up, rows, cols);
    const Activations act = randomActivations(tokens, cols, 23);
    const uint32_t outStride = rows + 8;
    std::vector<float> before(size_t{tokens} * outStride);
    for (size_t i = 0; i < before.size(); ++i) before[i] = 0.25f + 0.001f * static_cast<float>(i % 97);
    const auto modes = gemmModes();
    if (modes.empty()) GTEST_SKIP() << "no shaderFloat16 on device 0";
    for (const char* mode : modes) {
        ::setenv("ZINC_VK_COOPMAT_TILE", c.tile, 1);
        Gpu gpu(mode);
        ::unsetenv("ZINC_VK_COOPMAT_TILE");
        vk::F16MatMul f16(gpu.pipelines);
        auto gateBuf = gpu.buffer(gate.size(), gate.data()), upBuf = gpu.buffer(up.size(), up.data());
        auto actBuf = gpu.buffer(act.words.size() * 4, act.words.data());
        auto out = gpu.buffer(before.size() * 4, before.data());
        const uint64_t setBytes = uint64_t{c.scratchRows} * cols * 2;
        auto scratch = gpu.buffer(setBytes * (c.pair ? 2 : 1));
        vk::F16MatMul::Call call = weightCall(c.type, rows, cols, gateBuf.address(), c.pair ? upBuf.address() : 0);
        call.accumulate = c.accumulate;
        ASSERT_TRUE(runGemm(gpu, f16, call, actBuf, act.stride, out, outStride, tokens, scratch));
        const auto* got = static_cast<const float*>(out.mapped());
        size_t bad = 0;
        for (uint32_t t = 0; t < tokens; ++t) {
            for (uint32_t r = 0; r < outStride; ++r) {
                const size_t o = size_t{t} * outStride + r;
                if (r >= rows) {  // past the matrix: untouched
                    bad += got[o] != before[o];
                    continue;
                }
                const Product u = dot(upF16, r, act, t);
                Product want = combine(dot(gateF16, r, act, t), c.pair ? &u : nullptr);
                if (c.accumulate) want.value += before[o];
                if (std::fabs(got[o] - want.value) > want.bound && bad++ < 5)
                    ADD_FAILURE() << mode << ": token " << t << " row " << r << ": " << got[o] << ", want " << want.value
                                  << " +- " << want.bound;
            }
        }
        EXPECT_EQ(bad, 0u) << mode << ": values off";
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, VulkanCoopmatF16GemmTest,
                         testing::Values(GemmCase{"64x64", GgmlType::Q4_K, false, true, 128},   // 2 chunks: 128 + 72 rows
                                         GemmCase{"128x64", GgmlType::Q4_K, false, false, 128},
                                         GemmCase{"64x64", GgmlType::Q8_0, true, false, 200},   // PAIR, signed quants
                                         GemmCase{"128x64", GgmlType::Q6_K, true, true, 200}),  // PAIR: 64 rows a set
                         [](const testing::TestParamInfo<GemmCase>& info) {
                             const GemmCase& c = info.param;
                             return std::string(c.tile[0] == '6' ? "t64x64_" : "t128x64_") + std::string(model::ggmlTypeName(c.type)) +
                                    (c.pair ? "_pair" : "") + (c.accumulate ? "_accumulate" : "") +
                                    "_scratch" + std::to_string(c.scratchRows);
                         });

// EXPERT + PAIR (MoE gate and up): 3 experts of 200 rows, 20 tokens x 2 slots routed to experts
// 0 and 2 only, activation row = pair / 2, output row = pair; every expert's rows in one chunk
// of the scratch, then in two.
TEST(VulkanCoopmatF16Gemm, ExpertPairsMatchF16Product) {
    ZINC_REQUIRE_VULKAN();
    const uint32_t rows = 200, cols = 256, experts = 3, tokens = 20, used = 2, pairs = tokens * used;
    const GgmlType type = GgmlType::Q4_K;
    const auto gate = randomWeights(type, rows, cols, 31, experts), up = randomWeights(type, rows, cols, 32, experts);
    const Activations act = randomActivations(tokens, cols, 33);
    std::vector<int32_t> ids(pairs);
    for (uint32_t p = 0; p < pairs; ++p) ids[p] = p % 3 == 1 ? 2 : 0;
    // moe_group.comp's output: tiles {expert, first, count} of <= 64 pairs, then the pair order.
    const uint32_t maxTiles = pairs / 64 + std::min(pairs, experts), orderAt = 1 + 3 * maxTiles;
    std::vector<int32_t> group(orderAt + pairs, 0);
    int32_t tiles = 0, at = 0;
    for (int32_t e = 0; e < int32_t(experts); ++e) {
        const int32_t first = at;
        for (uint32_t p = 0; p < pairs; ++p)
            if (ids[p] == e) group[orderAt + at++] = static_cast<int32_t>(p);
        if (at > first) {
            group[1 + 3 * tiles] = e, group[2 + 3 * tiles] = first, group[3 + 3 * tiles] = at - first;
            ++tiles;
        }
    }
    group[0] = tiles;
    const auto modes = gemmModes();
    if (modes.empty()) GTEST_SKIP() << "no shaderFloat16 on device 0";
    for (const char* mode : modes) {
        Gpu gpu(mode);
        vk::F16MatMul f16(gpu.pipelines);
        for (const uint32_t scratchRows : {rows, 128u}) {
            auto gateBuf = gpu.buffer(gate.size(), gate.data()), upBuf = gpu.buffer(up.size(), up.data());
            auto actBuf = gpu.buffer(act.words.size() * 4, act.words.data());
            auto groupBuf = gpu.buffer(group.size() * 4, group.data());
            auto out = gpu.buffer(size_t{pairs} * rows * 4);
            auto scratch = gpu.buffer(size_t{2} * experts * scratchRows * cols * 2);
            vk::F16MatMul::Call call = weightCall(type, rows, cols, gateBuf.address(), upBuf.address());
            call.experts = experts;
            call.maxTiles = maxTiles;
            call.actDiv = used;
            call.orderAt = orderAt;
            call.group = groupBuf.address();
            ASSERT_TRUE(runGemm(gpu, f16, call, actBuf, act.stride, out, rows, pairs, scratch));
            const auto* got = static_cast<const float*>(out.mapped());
            size_t bad = 0;
            for (uint32_t p = 0; p < pairs; ++p) {
                const auto e = static_cast<uint32_t>(ids[p]);
                const auto g16 = cpuHalves(type, gate, rows, cols, 0, e, rows), u16 = cpuHalves(type, up, rows, cols, 0, e, rows);
                for (uint32_t r = 0; r < rows; ++r) {
                    const Product u = dot(u16, r, act, p / used);
                    const Product want = combine(dot(g16, r, act, p / used), &u);
                    const float v = got[size_t{p} * rows + r];
                    if (std::fabs(v - want.value) > want.bound && bad++ < 5)
                        ADD_FAILURE() << mode << ", scratch of " << scratchRows << " rows: pair " << p << " (expert " << e
                                      << ") row " << r << ": " << v << ", want " << want.value << " +- " << want.bound;
                }
            }
            EXPECT_EQ(bad, 0u) << mode << ", scratch of " << scratchRows << " rows";
        }
    }
}

}  // namespace
}  // namespace zinc
