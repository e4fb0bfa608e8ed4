#include "vulkan/vk_pipeline.h"

#include <fmt/format.h>

#include "vulkan/residency.h"
#include "vulkan/vk_error.h"
#include "vulkan/shaders/argmax.h"
#include "vulkan/shaders/attention.h"
#include "vulkan/shaders/attention_args.h"
#include "vulkan/shaders/attention_split.h"
#include "vulkan/shaders/dequant_f16.h"
#include "vulkan/shaders/elementwise.h"
#include "vulkan/shaders/embed.h"
#include "vulkan/shaders/flash_attention.h"
#include "vulkan/shaders/flash_attention_emulated.h"
#include "vulkan/shaders/gather_rows.h"
#include "vulkan/shaders/kv_store.h"
#include "vulkan/shaders/matmul.h"
#include "vulkan/shaders/matmul_coopmat.h"
#include "vulkan/shaders/matmul_coopmat_emulated.h"
#include "vulkan/shaders/matmul_dot4.h"
#include "vulkan/shaders/matmul_f16.h"
#include "vulkan/shaders/matmul_f16_emulated.h"
#include "vulkan/shaders/matvec.h"
#include "vulkan/shaders/matvec_dot4.h"
#include "vulkan/shaders/matvec_rows.h"
#include "vulkan/shaders/matvec_rows_dot4.h"
#include "vulkan/shaders/matvec_rows_tiles.h"
#include "vulkan/shaders/matvec_rows_chain.h"
#include "vulkan/shaders/matvec_rows_chain_dot4.h"
#include "vulkan/shaders/attention_chain.h"
#include "vulkan/shaders/attention_split_chain.h"
#include "vulkan/shaders/quantize_signal.h"
#include "vulkan/shaders/matvec_rows_tiles_dot4.h"
#include "vulkan/shaders/copy.h"
#include "vulkan/shaders/sync_probe.h"
#include "vulkan/shaders/moe_combine.h"
#include "vulkan/shaders/moe_group.h"
#include "vulkan/shaders/moe_topk.h"
#include "vulkan/shaders/qk_rope.h"
#include "vulkan/shaders/quantize.h"
#include "vulkan/shaders/rms_norm.h"
#include "vulkan/shaders/rope.h"
#include "vulkan/shaders/sample.h"
#include "vulkan/shaders/ssm_conv.h"
#include "vulkan/shaders/delta_chunk_prep.h"
#include "vulkan/shaders/delta_chunk_state.h"
#include "vulkan/shaders/delta_net.h"
#include "vulkan/shaders/gated_norm.h"
#include "vulkan/shaders/gate.h"

namespace zinc::vk {
namespace {

struct Code {
    const uint32_t* words;
    size_t bytes;
};

Code codeOf(Shader shader) {
    switch (shader) {
#define ZINC_SHADER(S, A) \
    case Shader::S: return {A, sizeof(A)};
        ZINC_SHADER(Embed, kEmbed)
        ZINC_SHADER(RmsNorm, kRmsNorm)
        ZINC_SHADER(Rope, kRope)
        ZINC_SHADER(KvStore, kKvStore)
        ZINC_SHADER(Attention, kAttention)
        ZINC_SHADER(AttentionSplit, kAttentionSplit)
        ZINC_SHADER(AttentionArgs, kAttentionArgs)
        ZINC_SHADER(Elementwise, kElementwise)
        ZINC_SHADER(Quantize, kQuantize)
        ZINC_SHADER(MatVec, kMatvec)
        ZINC_SHADER(MatVecDot4, kMatvecDot4)
        ZINC_SHADER(MatVecRows, kMatvecRows)
        ZINC_SHADER(MatVecRowsDot4, kMatvecRowsDot4)
        ZINC_SHADER(MatVecRowsTiles, kMatvecRowsTiles)
        ZINC_SHADER(MatVecRowsTilesDot4, kMatvecRowsTilesDot4)
        ZINC_SHADER(MatVecRowsChain, kMatvecRowsChain)
        ZINC_SHADER(MatVecRowsChainDot4, kMatvecRowsChainDot4)
        ZINC_SHADER(AttentionChain, kAttentionChain)
        ZINC_SHADER(AttentionSplitChain, kAttentionSplitChain)
        ZINC_SHADER(QuantizeSignal, kQuantizeSignal)
        ZINC_SHADER(MatMul, kMatmul)
        ZINC_SHADER(MatMulDot4, kMatmulDot4)
        ZINC_SHADER(MatMulCoopmat, kMatmulCoopmat)
        ZINC_SHADER(MatMulCoopmatEmulated, kMatmulCoopmatEmulated)
        ZINC_SHADER(DequantF16, kDequantF16)
        ZINC_SHADER(MatMulF16, kMatmulF16)
        ZINC_SHADER(MatMulF16Emulated, kMatmulF16Emulated)
        ZINC_SHADER(FlashAttention, kFlashAttention)
        ZINC_SHADER(FlashAttentionEmulated, kFlashAttentionEmulated)
        ZINC_SHADER(MoeTopK, kMoeTopk)
        ZINC_SHADER(MoeCombine, kMoeCombine)
        ZINC_SHADER(MoeGroup, kMoeGroup)
        ZINC_SHADER(Argmax, kArgmax)
        ZINC_SHADER(QkRope, kQkRope)
        ZINC_SHADER(GatherRows, kGatherRows)
        ZINC_SHADER(Sample, kSample)
        ZINC_SHADER(SsmConv, kSsmConv)
        ZINC_SHADER(DeltaNet, kDeltaNet)
        ZINC_SHADER(DeltaChunkPrep, kDeltaChunkPrep)
        ZINC_SHADER(DeltaChunkState, kDeltaChunkState)
        ZINC_SHADER(GatedNorm, kGatedNorm)
        ZINC_SHADER(Gate, kGate)
        ZINC_SHADER(Copy, kCopy)
        ZINC_SHADER(SyncProbe, kSyncProbe)
#undef ZINC_SHADER
    }
    return {nullptr, 0};
}

}  // namespace

const char* shaderName(Shader shader) {
    switch (shader) {
        case Shader::Embed: return "embed";
        case Shader::RmsNorm: return "rms_norm";
        case Shader::Rope: return "rope";
        case Shader::KvStore: return "kv_store";
        case Shader::Attention: return "attention";
        case Shader::AttentionSplit: return "attention_split";
        case Shader::AttentionArgs: return "attention_args";
        case Shader::Elementwise: return "elementwise";
        case Shader::Quantize: return "quantize";
        case Shader::MatVec: return "matvec";
        case Shader::MatVecDot4: return "matvec_dot4";
        case Shader::MatVecRows: return "matvec_rows";
        case Shader::MatVecRowsDot4: return "matvec_rows_dot4";
        case Shader::MatVecRowsTiles: return "matvec_rows_tiles";
        case Shader::MatVecRowsTilesDot4: return "matvec_rows_tiles_dot4";
        case Shader::MatVecRowsChain: return "matvec_rows_chain";
        case Shader::MatVecRowsChainDot4: return "matvec_rows_chain_dot4";
        case Shader::AttentionChain: return "attention_chain";
        case Shader::AttentionSplitChain: return "attention_split_chain";
        case Shader::QuantizeSignal: return "quantize_signal";
        case Shader::MatMul: return "matmul";
        case Shader::MatMulDot4: return "matmul_dot4";
        case Shader::MatMulCoopmat: return "matmul_coopmat";
        case Shader::MatMulCoopmatEmulated: return "matmul_coopmat_emulated";
        case Shader::DequantF16: return "dequant_f16";
        case Shader::MatMulF16: return "matmul_f16";
        case Shader::MatMulF16Emulated: return "matmul_f16_emulated";
        case Shader::FlashAttention: return "flash_attention";
        case Shader::FlashAttentionEmulated: return "flash_attention_emulated";
        case Shader::MoeTopK: return "moe_topk";
        case Shader::MoeCombine: return "moe_combine";
        case Shader::MoeGroup: return "moe_group";
        case Shader::Argmax: return "argmax";
        case Shader::QkRope: return "qk_rope";
        case Shader::Sample: return "sample";
        case Shader::SsmConv: return "ssm_conv";
        case Shader::DeltaNet: return "delta_net";
        case Shader::DeltaChunkPrep: return "delta_chunk_prep";
        case Shader::DeltaChunkState: return "delta_chunk_state";
        case Shader::GatedNorm: return "gated_norm";
        case Shader::Gate: return "gate";
        case Shader::GatherRows: return "gather_rows";
        case Shader::Copy: return "copy";
        case Shader::SyncProbe: return "sync_probe";
    }
    return "?";
}

PipelineFactory::PipelineFactory(const Device& device) : device_(device) {
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushConstantBytes};
    VkPipelineLayoutCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    info.pushConstantRangeCount = 1;
    info.pPushConstantRanges = &range;
    check(vkCreatePipelineLayout(device.handle(), &info, nullptr, &layout_), "vkCreatePipelineLayout");
}

PipelineFactory::~PipelineFactory() {
    for (auto& [key, p] : pipelines_) vkDestroyPipeline(device_.handle(), p, nullptr);
    for (auto& [key, m] : modules_) vkDestroyShaderModule(device_.handle(), m, nullptr);
    if (layout_) vkDestroyPipelineLayout(device_.handle(), layout_, nullptr);
}

VkShaderModule PipelineFactory::module(Shader shader) {
    if (auto it = modules_.find(shader); it != modules_.end()) return it->second;
    const Code code = codeOf(shader);
    VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = code.bytes;
    info.pCode = code.words;
    VkShaderModule m;
    check(vkCreateShaderModule(device_.handle(), &info, nullptr, &m), "vkCreateShaderModule", shaderName(shader));
    modules_[shader] = m;
    return m;
}

VkPipeline PipelineFactory::get(Shader shader, const std::vector<uint32_t>& spec) {
    const std::lock_guard lock(mutex_);
    const auto key = std::make_pair(shader, spec);
    if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second;
    std::vector<VkSpecializationMapEntry> entries;
    for (uint32_t i = 0; i < spec.size(); ++i) entries.push_back({i, i * 4u, 4});
    VkSpecializationInfo specInfo{static_cast<uint32_t>(entries.size()), entries.data(), spec.size() * 4, spec.data()};
    VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module(shader);
    info.stage.pName = "main";
    info.stage.pSpecializationInfo = spec.empty() ? nullptr : &specInfo;
    info.layout = layout_;
    // The split kernels' statistics size their dispatches (residentWorkgroups); the rest are
    // captured only to be printed (on the H200 capturing all of them left the start-up as it was:
    // 0.6B's first bench 4.2-4.7 s with an empty driver cache, 0.4 s with a full one, run 179).
    const bool residency = shader == Shader::AttentionSplit || shader == Shader::AttentionSplitChain;
    if (caps().pipelineStatistics || (caps().executableStatistics && residency))
        info.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    VkPipeline p;
    const std::string name = fmt::format("{} [{}]", shaderName(shader), fmt::join(spec, ","));
    check(vkCreateComputePipelines(device_.handle(), VK_NULL_HANDLE, 1, &info, nullptr, &p), "vkCreateComputePipelines", name);
    pipelines_[key] = p;
    if (caps().type == "cpu") compileNow(p, name);
    if (caps().pipelineStatistics) {
        std::string line;
        for (const PipelineStatistic& st : statistics(p)) line += fmt::format("{}{}={}", line.empty() ? "" : ", ", st.name, st.text);
        fmt::print(stderr, "vulkan pipeline {}: {}\n", name, line);
    }
    return p;
}

void PipelineFactory::compileNow(VkPipeline pipeline, const std::string& name) {
    if (!compileQueue_) compileQueue_ = std::make_unique<Queue>(device_);
    // A bound against a compiler that never returns, not a speed goal: the slowest pipeline
    // measured took 14 s under ASan on a 2-core machine.
    const auto bound = std::chrono::minutes(30);
    compileQueue_->runOnce([&](VkCommandBuffer cmd) {
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
        vkCmdDispatch(cmd, 0, 0, 0);
    }, bound, fmt::format("pipeline {}: its compile on the CPU device (a dispatch of no workgroups)", name));
}

// VK_KHR_pipeline_executable_properties: each executable's statistics as the driver names them
// (NVIDIA: "Register Count", ...; RADV: "VGPRs", "Spilled VGPRs", "LDS size", ...), one line.
std::vector<PipelineStatistic> PipelineFactory::statistics(VkPipeline pipeline) const {
    std::vector<PipelineStatistic> out;
    if (!caps().executableStatistics) return out;
    const VkDevice d = device_.handle();
    const auto executables = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
        vkGetDeviceProcAddr(d, "vkGetPipelineExecutablePropertiesKHR"));
    const auto statistics = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
        vkGetDeviceProcAddr(d, "vkGetPipelineExecutableStatisticsKHR"));
    if (!executables || !statistics) return out;
    VkPipelineInfoKHR pipelineInfo{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
    pipelineInfo.pipeline = pipeline;
    uint32_t count = 0;
    if (executables(d, &pipelineInfo, &count, nullptr) != VK_SUCCESS) return out;
    for (uint32_t e = 0; e < count; ++e) {  // a compute pipeline: one executable
        VkPipelineExecutableInfoKHR exe{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
        exe.pipeline = pipeline;
        exe.executableIndex = e;
        uint32_t n = 0;
        if (statistics(d, &exe, &n, nullptr) != VK_SUCCESS) continue;
        std::vector<VkPipelineExecutableStatisticKHR> stats(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
        if (statistics(d, &exe, &n, stats.data()) != VK_SUCCESS) continue;
        for (const auto& s : stats) {
            PipelineStatistic st{s.name, "?", 0};
            switch (s.format) {
                case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
                    st.text = s.value.b32 ? "yes" : "no";
                    st.value = s.value.b32 ? 1 : 0;
                    break;
                case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
                    st.text = fmt::format("{}", s.value.i64);
                    st.value = static_cast<double>(s.value.i64);
                    break;
                case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
                    st.text = fmt::format("{}", s.value.u64);
                    st.value = static_cast<double>(s.value.u64);
                    break;
                case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR:
                    st.text = fmt::format("{:g}", s.value.f64);
                    st.value = s.value.f64;
                    break;
                default: break;
            }
            out.push_back(std::move(st));
        }
    }
    return out;
}

uint32_t PipelineFactory::residentWorkgroups(VkPipeline pipeline, uint32_t threads) const {
    return caps().executableStatistics ? vk::residentWorkgroups(caps(), statistics(pipeline), threads) : 0;
}

}  // namespace zinc::vk
