// Prefill matmuls on matrix cores: the build-time NV -> KHR cooperative-matrix rewrite
// (vulkan/spirv_coopmat), decoded word by word because Debian's spirv-val (SPIRV-Tools 2023.1)
// predates SPV_KHR_cooperative_matrix; and the prefill of the two matrix-core matmuls
// (dequant_f16 + matmul_f16, matmul_coopmat) held to the cpu tier and to the integer matmul,
// on matrix cores and emulated (f16_matmul_test.cpp holds the two passes alone).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "model/make_model/make_model.h"
#include "tests/tier_conformance.h"
#include "tests/vulkan/coopmat_sample.h"
#include "tests/vulkan/coopmat_shared_type.h"
#include "tests/vulkan/vulkan_fixture.h"
#include "vulkan/shaders/matmul_coopmat.h"
#include "vulkan/shaders/matmul_f16.h"
#include "vulkan/spirv_coopmat/coopmat_khr.h"

namespace zinc {
namespace {

namespace sp = vk::spirv;

// What a module says about cooperative matrices, read back from its words.
struct Decoded {
    uint32_t bound = 0;
    std::set<uint32_t> capabilities;
    std::set<std::string> extensions;
    std::map<uint32_t, uint32_t> constants;    // OpConstant id -> value (32-bit)
    std::map<uint32_t, uint32_t> floatWidth;   // OpTypeFloat id -> width
    struct Matrix {
        uint32_t component, use;
    };
    std::map<uint32_t, Matrix> matrices;       // OpTypeCooperativeMatrixKHR id -> component type, Use id
    std::vector<uint32_t> layouts;             // MemoryLayout ids of the loads and stores, in order
    int nvInstructions = 0, mulAdds = 0;
    uint32_t maxId = 0;                        // the largest result id seen
};

Decoded decode(std::span<const uint32_t> w) {
    Decoded d;
    d.bound = w[3];
    for (size_t at = 5; at < w.size();) {
        const uint32_t count = w[at] >> 16, opcode = w[at] & 0xFFFFu;
        if (count == 0 || at + count > w.size()) {
            ADD_FAILURE() << "bad instruction at word " << at;
            break;
        }
        const auto in = w.subspan(at, count);
        if (opcode >= 5358 && opcode <= 5362) ++d.nvInstructions;
        switch (opcode) {
            case sp::op::Capability: d.capabilities.insert(in[1]); break;
            case sp::op::Extension: d.extensions.insert(reinterpret_cast<const char*>(in.data() + 1)); break;
            case sp::op::Constant:
                if (count == 4) d.constants[in[2]] = in[3];
                d.maxId = std::max(d.maxId, in[2]);
                break;
            case 22: d.floatWidth[in[1]] = in[2]; break;  // OpTypeFloat
            case sp::op::TypeCooperativeMatrixKHR:
                EXPECT_EQ(count, 7u);
                d.matrices[in[1]] = {in[2], in[6]};
                d.maxId = std::max(d.maxId, in[1]);
                break;
            case sp::op::CooperativeMatrixLoadKHR: d.layouts.push_back(in[4]); break;
            case sp::op::CooperativeMatrixStoreKHR: d.layouts.push_back(in[3]); break;
            case sp::op::CooperativeMatrixMulAddKHR: ++d.mulAdds; break;
            default: break;
        }
        at += count;
    }
    return d;
}

// The Use constant values of the module's matrix types, by component width (16: A or B, 32: C).
std::multiset<std::pair<uint32_t, uint32_t>> usesByWidth(const Decoded& d) {
    std::multiset<std::pair<uint32_t, uint32_t>> out;
    for (const auto& [id, m] : d.matrices) {
        EXPECT_TRUE(d.constants.count(m.use)) << "Use of %" << id << " is not an OpConstant";
        out.insert({d.floatWidth.at(m.component), d.constants.at(m.use)});
    }
    return out;
}

void expectNoNvLeft(const Decoded& d) {
    EXPECT_EQ(d.nvInstructions, 0);
    EXPECT_FALSE(d.capabilities.count(sp::kCapabilityCooperativeMatrixNV));
    EXPECT_TRUE(d.capabilities.count(sp::kCapabilityCooperativeMatrixKHR));
    EXPECT_FALSE(d.extensions.count("SPV_NV_cooperative_matrix"));
    EXPECT_TRUE(d.extensions.count("SPV_KHR_cooperative_matrix"));
    EXPECT_LT(d.maxId, d.bound);
}

TEST(CoopmatRewrite, SampleModuleGetsOneUsePerTypeAndLayoutConstants) {
    const std::span<const uint32_t> nv(kCoopmatSampleNv);
    ASSERT_EQ(decode(nv).matrices.size(), 0u);  // NV types before the rewrite
    const auto khr = sp::coopmatNvToKhr(nv);
    const Decoded d = decode(khr);
    expectNoNvLeft(d);
    EXPECT_EQ(d.bound, nv[3] + 3);  // three new constants: 0, 1, 2
    const std::multiset<std::pair<uint32_t, uint32_t>> want = {
        {16, uint32_t(sp::Use::MatrixA)}, {16, uint32_t(sp::Use::MatrixB)}, {32, uint32_t(sp::Use::Accumulator)}};
    EXPECT_EQ(usesByWidth(d), want);
    // A row-major, B column-major, C stored column-major (the sample's false, true, true).
    ASSERT_EQ(d.layouts.size(), 3u);
    EXPECT_EQ(d.constants.at(d.layouts[0]), sp::kRowMajor);
    EXPECT_EQ(d.constants.at(d.layouts[1]), sp::kColumnMajor);
    EXPECT_EQ(d.constants.at(d.layouts[2]), sp::kColumnMajor);
    EXPECT_EQ(d.mulAdds, 1);
    // Three 4-word constants and a Use word per type; loads and stores keep their length
    // (ColumnMajor's word becomes MemoryLayout's, before Stride), so does the extension name.
    EXPECT_EQ(khr.size(), nv.size() + 3 * 4 + 3);
}

// Both matrix-core matmuls (matmul_coopmat: in-kernel decode; matmul_f16: the two-pass GEMM).
TEST(CoopmatRewrite, MatmulShadersAreKhrOnly) {
    for (const auto& [name, words] : {std::pair{"matmul_coopmat", std::span<const uint32_t>(kMatmulCoopmat)},
                                      std::pair{"matmul_f16", std::span<const uint32_t>(kMatmulF16)}}) {
        SCOPED_TRACE(name);
        const Decoded d = decode(words);
        expectNoNvLeft(d);
        const std::multiset<std::pair<uint32_t, uint32_t>> want = {
            {16, uint32_t(sp::Use::MatrixA)}, {16, uint32_t(sp::Use::MatrixB)}, {32, uint32_t(sp::Use::Accumulator)}};
        EXPECT_EQ(usesByWidth(d), want);
        // A loaded row-major, B column-major, the accumulators stored column-major (gate, PAIR's up).
        std::multiset<uint32_t> layouts;
        for (uint32_t id : d.layouts) {
            ASSERT_TRUE(d.constants.count(id)) << "MemoryLayout %" << id << " is not an OpConstant";
            layouts.insert(d.constants.at(id));
        }
        EXPECT_EQ(layouts, (std::multiset<uint32_t>{sp::kRowMajor, sp::kColumnMajor, sp::kColumnMajor, sp::kColumnMajor}));
        EXPECT_EQ(d.mulAdds, 1);  // in mulAdd(), called for gate and up
    }
}

TEST(CoopmatRewrite, RefusesATypeUsedAsBothAAndB) {
    const std::span<const uint32_t> nv(kCoopmatSharedTypeNv);
    uint32_t halfMatrix = 0, half = 0;  // the f16 matrix type's id, to find in the message
    for (size_t at = 5; at < nv.size(); at += nv[at] >> 16) {
        const uint32_t opcode = nv[at] & 0xFFFFu;
        if (opcode == 22 && nv[at + 2] == 16) half = nv[at + 1];
        if (opcode == sp::op::TypeCooperativeMatrixNV && nv[at + 2] == half) halfMatrix = nv[at + 1];
    }
    ASSERT_NE(halfMatrix, 0u);
    try {
        sp::coopmatNvToKhr(nv);
        FAIL() << "a type used as A and B was rewritten";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("%" + std::to_string(halfMatrix) + " is used in more than one"), std::string::npos)
            << e.what();
    }
}

// make-model's tiny shapes with random weights (as tier_test.cpp's VulkanQuantMixTest).
std::string makeCoopmatModel(const std::string& preset, const std::string& mix) {
    const auto path = (test::scratchDir() / ("coopmat-" + preset + "-" + mix + ".gguf")).string();
    model::MakeModelOptions options;
    options.preset = preset;
    options.quantMix = mix;
    options.outputPath = path;
    options.seed = 7;
    options.progress = false;
    options.threads = 2;
    model::makeModel(options);
    return path;
}

bool deviceHasCoopmat() { return test::vulkanDeviceExists() && vk::listDevices()[0].cooperativeMatrix; }

TEST(VulkanCoopmat, DescribeNamesThePrefillMatmul) {
    ZINC_REQUIRE_VULKAN();
    // Matrix cores where the device has them (two passes), the integer matmul elsewhere or
    // with ZINC_VK_COOPMAT=0.
    const std::string line = test::load("stories260K.gguf", true).tier->describe();
    EXPECT_NE(line.find("prefill matmul: "), std::string::npos) << line;
    EXPECT_EQ(line.find("prefill matmul: cooperative") != std::string::npos, deviceHasCoopmat()) << line;
    // qwen3-tiny: quantized matrices, so the two-pass matmul has a scratch to allocate (stories260K has none).
    const auto describeWith = [](const char* mode) {
        ::setenv("ZINC_VK_COOPMAT", mode, 1);
        const std::string d = test::load("qwen3-tiny.gguf", true).tier->describe();
        ::unsetenv("ZINC_VK_COOPMAT");
        return d;
    };
    ::setenv("ZINC_VK_COOPMAT", "2", 1);
    try {
        test::load("qwen3-tiny.gguf", true);
        ADD_FAILURE() << "ZINC_VK_COOPMAT=2 was accepted";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("ZINC_VK_COOPMAT=2 is none of 0, 1, old, emulate, emulate-old"), std::string::npos)
            << e.what();
    }
    ::unsetenv("ZINC_VK_COOPMAT");
    if (deviceHasCoopmat()) {
        EXPECT_NE(describeWith("0").find("cooperative matrices present, off: ZINC_VK_COOPMAT=0"), std::string::npos);
        // Unset (here =1): the two passes, with the f16 scratch the tier allocated; =old: the in-kernel decode.
        const std::string opted = describeWith("1");
        EXPECT_NE(opted.find("prefill matmul: cooperative matrix 16x16x16 f16 (VK_KHR_cooperative_matrix), weights dequantized "
                             "to f16 by a pass of their own"), std::string::npos) << opted;
        EXPECT_NE(opted.find(", f16 weight scratch "), std::string::npos) << opted;
        const std::string old = describeWith("old");
        EXPECT_NE(old.find("prefill matmul: cooperative matrix 16x16x16 f16 (VK_KHR_cooperative_matrix), weights decoded in the k loop"),
                  std::string::npos) << old;
        EXPECT_EQ(old.find("f16 weight scratch"), std::string::npos) << old;
    }
    if (vk::listDevices()[0].shaderFloat16) {
        const std::string emulated = describeWith("emulate");
        EXPECT_NE(emulated.find("prefill matmul: 16x16 f16 tiles emulated in plain GLSL (ZINC_VK_COOPMAT=emulate, tests only), "
                                "weights dequantized to f16 by a pass of their own"), std::string::npos) << emulated;
        EXPECT_NE(emulated.find(", f16 weight scratch "), std::string::npos) << emulated;
        EXPECT_NE(describeWith("emulate-old").find("weights decoded in the k loop"), std::string::npos);
    }
}

// A Vulkan tier opened with ZINC_VK_COOPMAT set to `mode` (read once, at device setup).
test::Loaded loadWithCoopmat(const std::string& path, const char* mode) {
    ::setenv("ZINC_VK_COOPMAT", mode, 1);
    auto l = test::loadPath(path, true);
    ::unsetenv("ZINC_VK_COOPMAT");
    return l;
}

std::string modelPath(const char* preset, const char* mix) {
    return std::string(mix) != "file" ? makeCoopmatModel(preset, mix) : test::sharedPath(std::string("models/") + preset);
}

// 40 and 70 tokens (partial row and token tiles, two token tiles) through `gpu`, held to the
// cpu tier with the tolerance of the other tiled-prefill tests; the integer matmul's distance
// (ZINC_VK_COOPMAT=0) printed beside it, to tell f16 rounding from a bug.
void expectPrefillNearCpu(const std::string& path, test::Loaded& gpu, const std::string& what) {
    auto cpu = test::loadPath(path, false);
    auto integer = loadWithCoopmat(path, "0");
    ASSERT_EQ(integer.tier->describe().find("prefill matmul: cooperative matrix"), std::string::npos);
    ASSERT_EQ(integer.tier->describe().find("emulated"), std::string::npos);
    for (const size_t n : {40u, 70u}) {
        std::vector<int32_t> prompt(n);
        for (size_t i = 0; i < n; ++i) prompt[i] = static_cast<int32_t>((i * 53 + 1) % 480) + 1;
        const auto copy = [](std::span<const float> s) { return std::vector<float>(s.begin(), s.end()); };
        const auto want = copy(cpu.session->feed(prompt));
        const auto got = copy(gpu.session->feed(prompt));
        const auto ref = copy(integer.session->feed(prompt));
        float dGot = 0, dInt = 0;
        for (size_t i = 0; i < want.size(); ++i) {
            dGot = std::max(dGot, std::fabs(got[i] - want[i]));
            dInt = std::max(dInt, std::fabs(ref[i] - want[i]));
        }
        std::printf("%s, %zu tokens: max |logit - cpu| %s %.4g, integer matmul %.4g\n", path.c_str(), n, what.c_str(),
                    static_cast<double>(dGot), static_cast<double>(dInt));
        test::expectNearCpu(got, want, {0.1f, 0.01f}, what + ", " + std::to_string(n) + " tokens");
        cpu.session->reset();
        gpu.session->reset();
        integer.session->reset();
    }
}

using CoopmatCase = std::pair<const char*, const char*>;  // make-model preset and mix, or a file and "file"

// What describe says of each ZINC_VK_COOPMAT mode's prefill matmul.
std::string pathNamed(const std::string& mode) {
    return mode == "1" || mode == "emulate" ? "weights dequantized to f16 by a pass of their own" : "weights decoded in the k loop";
}

// Batched prefill on matrix cores, both matmuls (=1: dequant_f16 + matmul_f16; =old:
// matmul_coopmat): every tiled weight type, PAIR (gate+up of Q4_K_M), EXPERT (qwen3moe-tiny).
class VulkanCoopmatTest : public testing::TestWithParam<CoopmatCase> {};

TEST_P(VulkanCoopmatTest, PrefillOnMatrixCoresMatchesCpu) {
    ZINC_REQUIRE_VULKAN();
    if (!deviceHasCoopmat() || std::getenv("ZINC_VK_COOPMAT"))
        GTEST_SKIP() << "the prefill matmul here is not on cooperative matrices: " << vk::listDevices()[0].prefillMatmul;
    const auto path = modelPath(GetParam().first, GetParam().second);
    for (const std::string mode : {"1", "old"}) {
        auto gpu = loadWithCoopmat(path, mode.c_str());
        ASSERT_NE(gpu.tier->describe().find("prefill matmul: cooperative matrix"), std::string::npos);
        ASSERT_NE(gpu.tier->describe().find(pathNamed(mode)), std::string::npos) << gpu.tier->describe();
        expectPrefillNearCpu(path, gpu, "cooperative matrix (ZINC_VK_COOPMAT=" + mode + ")");
    }
    if (std::string(GetParam().second) != "file") std::filesystem::remove(path);
}

// The same shaders with their matrix instructions emulated (ZINC_VK_COOPMAT=emulate,
// =emulate-old): the f16 decode, the pipelined tiles, PAIR / EXPERT / accumulate and the
// output scatter, on any device with shaderFloat16 — lavapipe included.
class VulkanCoopmatEmulatedTest : public testing::TestWithParam<CoopmatCase> {};

// Emulated on lavapipe a case takes 20-100 s: there only PAIR (qwen3-tiny q4_k_m) and EXPERT
// (qwen3moe-tiny) run, through the two-pass matmul only (the in-kernel decode is held to the
// cpu tier on matrix cores); every case runs both where the device has matrix cores.
std::vector<std::string> emulatedModesHere(const CoopmatCase& c) {
    const std::string name = std::string(c.first) + "/" + c.second;
    if (deviceHasCoopmat()) return {"emulate", "emulate-old"};
    if (name == "qwen3-tiny/q4_k_m" || name == "qwen3moe-tiny.gguf/file") return {"emulate"};
    return {};
}

TEST_P(VulkanCoopmatEmulatedTest, PrefillOnEmulatedTilesMatchesCpu) {
    ZINC_REQUIRE_VULKAN();
    if (!vk::listDevices()[0].shaderFloat16) GTEST_SKIP() << "no shaderFloat16 on device 0";
    const auto modes = emulatedModesHere(GetParam());
    if (modes.empty()) GTEST_SKIP() << "emulated on a CPU device: the PAIR and EXPERT cases only";
    const auto path = modelPath(GetParam().first, GetParam().second);
    for (const std::string& mode : modes) {
        auto gpu = loadWithCoopmat(path, mode.c_str());
        ASSERT_NE(gpu.tier->describe().find("prefill matmul: 16x16 f16 tiles emulated"), std::string::npos);
        ASSERT_NE(gpu.tier->describe().find(pathNamed(mode == "emulate" ? "1" : "old")), std::string::npos) << gpu.tier->describe();
        expectPrefillNearCpu(path, gpu, "emulated cooperative matrix (ZINC_VK_COOPMAT=" + mode + ")");
    }
    if (std::string(GetParam().second) != "file") std::filesystem::remove(path);
}

const auto kCoopmatCases =
    testing::Values(CoopmatCase{"qwen3-tiny", "q4_k_m"}, CoopmatCase{"qwen3-tiny", "q5_k_m"}, CoopmatCase{"qwen3-tiny", "q8_0"},
                    CoopmatCase{"llama-tiny", "q4_0"}, CoopmatCase{"qwen3moe-tiny", "q4_k_m"},
                    CoopmatCase{"qwen3-tiny-h256", "q8_0"}, CoopmatCase{"qwen3-tiny-q3_k_m.gguf", "file"},
                    CoopmatCase{"qwen3-tiny-iq4_xs.gguf", "file"}, CoopmatCase{"qwen3-tiny-q4_1.gguf", "file"},
                    CoopmatCase{"qwen3moe-tiny.gguf", "file"});

std::string coopmatCaseName(const testing::TestParamInfo<CoopmatCase>& info) {
    std::string name = std::string(info.param.first) + "_" + info.param.second;
    for (auto& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return name;
}

INSTANTIATE_TEST_SUITE_P(Mixes, VulkanCoopmatTest, kCoopmatCases, coopmatCaseName);
INSTANTIATE_TEST_SUITE_P(Mixes, VulkanCoopmatEmulatedTest, kCoopmatCases, coopmatCaseName);

// Every forced tile shape (ZINC_VK_COOPMAT_TILE; auto picks 64x64 for these tiny matrices):
// 128 rows (PAIR: 64 a set), 128 tokens (the 40- and 70-token prompts leave most columns of a
// tile missing), EXPERT's 64 tokens, signed quants (Q8_0); the two-pass matmul emulated
// everywhere, and on matrix cores both matmuls, emulated and not.
using TileCase = std::tuple<const char*, CoopmatCase>;  // tile, model as in kCoopmatCases
class VulkanCoopmatTileTest : public testing::TestWithParam<TileCase> {};
TEST_P(VulkanCoopmatTileTest, EveryTileShapeMatchesCpu) {
    ZINC_REQUIRE_VULKAN();
    if (!vk::listDevices()[0].shaderFloat16) GTEST_SKIP() << "no shaderFloat16 on device 0";
    const auto [tile, model] = GetParam();
    if (!deviceHasCoopmat() && (std::string(tile) != "128x64" || std::string(model.first) != "qwen3moe-tiny.gguf"))
        GTEST_SKIP() << "emulated on a CPU device: 128x64 on qwen3moe-tiny only (128-row tiles of the expert and dense matrices)";
    const auto path = modelPath(model.first, model.second);
    std::vector<std::pair<const char*, std::string>> modes;
    // llvmpipe runs each invocation of the emulated 128x128 shader on its worker thread's stack,
    // and it overflows the default 8 MiB (SIGSEGV; it passes with `ulimit -s unlimited`): there
    // the shape is checked on matrix cores only.
    if (std::string(tile) != "128x128" || deviceHasCoopmat()) modes.emplace_back("emulate", "emulated cooperative matrix");
    if (deviceHasCoopmat()) {
        modes.emplace_back("emulate-old", "emulated cooperative matrix, in-kernel decode");
        modes.emplace_back("1", "cooperative matrix");
        modes.emplace_back("old", "cooperative matrix, in-kernel decode");
    }
    if (modes.empty()) GTEST_SKIP() << "128x128 tiles: emulated only where the device also has cooperative matrices (llvmpipe's stack)";
    for (const auto& [mode, what] : modes) {
        ::setenv("ZINC_VK_COOPMAT_TILE", tile, 1);
        auto gpu = loadWithCoopmat(path, mode);  // not moved: its tier holds its graph by reference
        ::unsetenv("ZINC_VK_COOPMAT_TILE");
        ASSERT_NE(gpu.tier->describe().find(std::string(", tiles ") + tile), std::string::npos) << gpu.tier->describe();
        expectPrefillNearCpu(path, gpu, what + " " + tile);
    }
    if (std::string(model.second) != "file") std::filesystem::remove(path);
}
INSTANTIATE_TEST_SUITE_P(Shapes, VulkanCoopmatTileTest,
                         testing::Combine(testing::Values("64x64", "128x64", "128x128"),
                                          testing::Values(CoopmatCase{"qwen3-tiny", "q4_k_m"}, CoopmatCase{"qwen3-tiny", "q8_0"},
                                                          CoopmatCase{"qwen3moe-tiny.gguf", "file"})),
                         [](const testing::TestParamInfo<TileCase>& info) {
                             const auto& model = std::get<1>(info.param);
                             std::string name = std::string(std::get<0>(info.param)) + "_" + model.first + "_" + model.second;
                             for (auto& ch : name)
                                 if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                             return name;
                         });

}  // namespace
}  // namespace zinc
