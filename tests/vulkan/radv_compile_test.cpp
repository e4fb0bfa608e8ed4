// The vulkan tier's shaders as an RDNA3 card's driver compiles them, without the card: RADV
// (Mesa's AMD Vulkan driver, in Debian's mesa-vulkan-drivers beside lavapipe) on its null device
// (RADV_FORCE_FAMILY=gfx1100: no GPU, no kernel driver; pipelines compile, nothing runs) builds
// every shader with ACO, and VK_KHR_pipeline_executable_properties reports what the RX 7900 would
// run: registers, spills, scratch, LDS. Lavapipe runs the shaders' results; this checks their
// machine code: every variant compiles, and none spills vector registers to scratch memory
// (each spilled VGPR is a memory round trip per use on the card: delta_chunk_prep.comp spilled
// 176 of them before it substituted one column at a time).
//
// Its own executable: the loader's ICD choice and RADV_FORCE_FAMILY are read once per process.
// The family: $ZINC_RADV_FAMILY, else gfx1100 (Mesa 22.3 knows no RDNA4, gfx12).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "graph/lower.h"
#include "vulkan/ops.h"
#include "vulkan/residency.h"
#include "vulkan/vk_device.h"
#include "vulkan/vk_pipeline.h"

namespace zinc::vk {
namespace {

using model::GgmlType;

std::string& skipReason() {
    static std::string reason;
    return reason;
}

// The null device and its pipelines live until the process ends: RADV 22.3's null winsys
// crashes in vkDestroyDevice (it has no context to destroy), so neither is ever destroyed.
PipelineFactory* factory() {
    static PipelineFactory* f = [] {
        auto* device = new Device(Instance::shared(), 0);
        return new PipelineFactory(*device);
    }();
    return f;
}

double stat(const std::vector<PipelineStatistic>& stats, const std::string& name) {
    for (const auto& s : stats)
        if (s.name == name) return s.value;
    ADD_FAILURE() << "no statistic '" << name << "'";
    return -1;
}

// Compiles one variant; records a failure naming it if it does not compile or spills.
void compile(Shader shader, const std::vector<uint32_t>& spec, std::map<std::string, int>* vgprs = nullptr) {
    std::string name = std::string(shaderName(shader)) + " [";
    for (size_t i = 0; i < spec.size(); ++i) {
        if (i) name += ',';
        name += std::to_string(spec[i]);
    }
    name += ']';
    VkPipeline p = VK_NULL_HANDLE;
    try {
        p = factory()->get(shader, spec);
    } catch (const std::exception& e) {
        ADD_FAILURE() << name << " does not compile: " << e.what();
        return;
    }
    const auto stats = factory()->statistics(p);
    ASSERT_FALSE(stats.empty()) << name << ": the driver reported no statistics";
    EXPECT_EQ(stat(stats, "Spilled VGPRs"), 0.0) << name << " spills vector registers";
    EXPECT_EQ(stat(stats, "Scratch size"), 0.0) << name << " uses scratch memory";
    if (vgprs) (*vgprs)[name] = static_cast<int>(stat(stats, "VGPRs"));
}

class RadvCompile : public ::testing::Test {
protected:
    void SetUp() override {
        if (!skipReason().empty()) GTEST_SKIP() << skipReason();
    }
};

TEST_F(RadvCompile, TheNullDeviceIsRadvOnTheFamilyAsked) {
    const DeviceCaps& caps = factory()->caps();
    std::printf("[ %s, driver %s, subgroup %u, shared memory %u KiB ]\n", caps.name.c_str(), caps.driverName.c_str(),
                caps.subgroupSize, caps.sharedMemoryBytes / 1024);
    EXPECT_NE(caps.name.find("RADV"), std::string::npos) << caps.name;
    EXPECT_TRUE(caps.pipelineStatistics);
}

// Every shader as written (its default specialization), bar the cooperative-matrix ones, which
// need VK_KHR_cooperative_matrix (RADV has it from Mesa 23.3; the tier checks before using them).
TEST_F(RadvCompile, EveryShaderCompilesWithoutSpills) {
    std::map<std::string, int> vgprs;
    for (int s = 0; s <= static_cast<int>(Shader::MatMulF16Emulated); ++s) {
        const auto shader = static_cast<Shader>(s);
        if (shader == Shader::MatMulCoopmat || shader == Shader::MatMulCoopmatEmulated || shader == Shader::MatMulF16 ||
            shader == Shader::MatMulF16Emulated)
            continue;
        compile(shader, {}, &vgprs);
    }
    for (const auto& [name, n] : vgprs) std::printf("[ %-22s %3d VGPRs ]\n", name.c_str(), n);
}

// Weight types the matvec and matmul shaders take quantized activations for.
std::vector<GgmlType> quantizedTypes() {
    std::vector<GgmlType> out;
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q2_K,
                       GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS}) {
        const auto format = graph::actFormatOf(t);
        if (format && *format != graph::ActFormat::F32 && *format != graph::ActFormat::F16 && *format != graph::ActFormat::BF16)
            out.push_back(t);
    }
    return out;
}

// The decode matvecs of real models as MatVecOp::rowsSpec chooses them: an expert's down
// projection of Qwen3.6-35B-A3B (k 512: 16 threads along k) and Qwen3-8B's projections (k 4096:
// 32; a longer k changes only loop bounds); one token, a 2-token tile (two sequences:
// matvec_rows_tiles), a 3-token one (two staged units a thread), an 8-token one (several
// sequences, short prefills), an expert slot; alone and as a SwiGLU pair; 4,096 rows (not a
// vocabulary's: Q6_K keeps 2 units in flight below 65,536). With integer dot
// products (what RDNA3 and RDNA4 run) every shape; without them (a card lacking them) one token,
// 8 tokens and an expert slot, the variants whose code differs most (half the compile time).
// A one-token matvec of k 4,096 with integer dot products also as matvec_rows_chain_dot4
// (GraphRecorder's chained matvecs: the same code after its wait).
TEST_F(RadvCompile, DecodeMatvecsOfRealShapesCompileWithoutSpills) {
    const MatVecOp::Kernel kernel = MatVecOp::Kernel::parse("v2");
    const auto types = quantizedTypes();
    ASSERT_GE(types.size(), 8u);
    struct Shape {
        uint32_t k, tokens;
        bool expert;
    };
    const std::vector<Shape> dot4Shapes = {{512, 1, false}, {4096, 1, false}, {4096, 2, false}, {4096, 3, false},
                                           {512, 8, false}, {4096, 8, false}, {512, 1, true}};
    const std::vector<Shape> plainShapes = {{4096, 1, false}, {4096, 8, false}, {512, 1, true}};
    for (bool dot4 : {false, true}) {
        if (dot4 && !factory()->caps().integerDotProduct) continue;
        for (GgmlType type : types)
            for (const Shape& shape : dot4 ? dot4Shapes : plainShapes)
                for (bool up : {false, true}) {
                    const auto spec =
                        MatVecOp::rowsSpec(type, shape.k, 4096, shape.tokens, shape.expert, up, type == GgmlType::Q4_K, true, dot4, kernel);
                    compile(MatVecOp::rowsShader(spec, dot4), spec);
                    if (dot4 && shape.tokens == 1 && shape.k == 4096 && !shape.expert)
                        compile(Shader::MatVecRowsChainDot4, spec);  // chained after its input's quantize
                }
    }
}

// Prefill's tiled matmul (matmul.comp: TYPE, PAIR, EXPERT) for every quantized type.
TEST_F(RadvCompile, PrefillMatmulsCompileWithoutSpills) {
    for (Shader shader : {Shader::MatMul, Shader::MatMulDot4}) {
        if (shader == Shader::MatMulDot4 && !factory()->caps().integerDotProduct) continue;
        for (GgmlType type : quantizedTypes())
            for (uint32_t pair : {0u, 1u})
                for (uint32_t expert : {0u, 1u}) compile(shader, {static_cast<uint32_t>(type), pair, expert});
    }
    // The two-pass matrix-core path's first pass (dequant_f16.comp: TYPE, EXPERT); its GEMM
    // needs VK_KHR_cooperative_matrix, as above.
    for (GgmlType type : quantizedTypes())
        for (uint32_t expert : {0u, 1u}) compile(Shader::DequantF16, {static_cast<uint32_t>(type), expert});
}

// Float weights (matvec.comp: threads, TYPE, token tile, rows, PAIR), e.g. an F16 lm_head or
// the F32 MoE router.
TEST_F(RadvCompile, FloatMatvecsCompileWithoutSpills) {
    for (GgmlType type : {GgmlType::F32, GgmlType::F16, GgmlType::BF16})
        for (uint32_t k : {1024u, 4096u})
            for (uint32_t tile : {1u, 8u})
                for (uint32_t rows : {1u, 2u, 4u})
                    compile(Shader::MatVec, {MatVecOp::matVecThreads(k), static_cast<uint32_t>(type), tile, rows, 0u});
}

// Split attention as AttentionOp::splitSpec specializes it: 1, 2 or 4 query heads a workgroup,
// heads 64, 128 (Qwen3) and 256 (Qwen3.6, gemma3) wide, a one-token step (rolling loads up to
// 128) and a batch. Chained (DeviceCaps::chainedAttention) as Qwen3-8B's and 0.6B's one-token
// steps run it: the FUSED split of 4 and 2 heads of 128, and the merge quantizing two heads for
// attn_output (Q8_K: 1 + its format).
TEST_F(RadvCompile, SplitAttentionVariantsCompileWithoutSpills) {
    std::map<std::string, int> vgprs;
    for (uint32_t heads : {1u, 2u, 4u})
        for (uint32_t headDim : {64u, 128u, 256u})
            for (bool oneToken : {true, false}) compile(Shader::AttentionSplit, AttentionOp::splitSpec(heads, headDim, oneToken), &vgprs);
    for (uint32_t heads : {2u, 4u}) compile(Shader::AttentionSplitChain, AttentionOp::splitSpec(heads, 128, true, true), &vgprs);
    compile(Shader::AttentionChain, {256, 2, 1 + static_cast<uint32_t>(graph::ActFormat::Q8_K)}, &vgprs);
    for (const auto& [name, n] : vgprs) std::printf("[ %-30s %3d VGPRs ]\n", name.c_str(), n);
}

// Residency (vulkan/residency.h) from RADV's figures: the compiler's "Subgroups per SIMD" for
// the one-token split kernel, whose splits a long context's decode step sizes to what the GPU
// holds (AttentionOp::splitCount), and the SIMDs of a CU (VK_AMD_shader_core_properties). The
// null device reports no CUs (so the tier would keep kMaxAttentionSplits there): an RX 7900
// XTX's 96 stand in.
TEST_F(RadvCompile, TheSplitKernelsResidencyComesFromTheCompiler) {
    DeviceCaps caps = factory()->caps();
    EXPECT_GT(caps.simdsPerUnit, 0u) << caps.name << ": no SIMDs a CU from VK_AMD_shader_core_properties";
    const VkPipeline split = factory()->get(Shader::AttentionSplitChain, AttentionOp::splitSpec(4, 128, true, true));
    const auto stats = factory()->statistics(split);
    const double waves = stat(stats, "Subgroups per SIMD");
    EXPECT_GT(waves, 0.0);
    if (caps.computeUnits == 0) caps.computeUnits = 96;
    const uint32_t resident = residentWorkgroups(caps, stats, 256);
    // gfx1100: 2 SIMDs a CU, RADV's figure in wave32s; a workgroup of 256 is 8 of them.
    EXPECT_EQ(caps.simdsPerUnit, 2u);
    EXPECT_EQ(resident, static_cast<uint32_t>(waves) * 2u / 8u * caps.computeUnits);
    EXPECT_GT(resident, 0u);
    std::printf("[ %u CUs of %u SIMDs; attention_split_chain: %g wave32s a SIMD, %u workgroups resident ]\n",
                caps.computeUnits, caps.simdsPerUnit, waves, resident);
}

}  // namespace
}  // namespace zinc::vk

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    // The loader reads these when the instance is created: only RADV, on its null device.
    std::string icd;
    for (const char* arch : {"x86_64", "aarch64", "i686"}) {
        const std::string path = std::string("/usr/share/vulkan/icd.d/radeon_icd.") + arch + ".json";
        if (std::filesystem::exists(path)) {
            icd = path;
            break;
        }
    }
    if (icd.empty()) {
        zinc::vk::skipReason() = "RADV is not installed (no /usr/share/vulkan/icd.d/radeon_icd.*.json; Debian: mesa-vulkan-drivers)";
    } else {
        const char* family = std::getenv("ZINC_RADV_FAMILY");
        setenv("RADV_FORCE_FAMILY", family && *family ? family : "gfx1100", 1);
        setenv("VK_ICD_FILENAMES", icd.c_str(), 1);
        setenv("VK_DRIVER_FILES", icd.c_str(), 1);
        setenv("ZINC_VK_PIPELINE_STATS", "1", 1);  // the device captures statistics
        setenv("MESA_SHADER_CACHE_DISABLE", "true", 1);  // compile, do not read a cache
    }
    const int result = RUN_ALL_TESTS();
    std::fflush(stdout);
    std::_Exit(result);  // no static destructors: the null device is never destroyed (see factory())
}
