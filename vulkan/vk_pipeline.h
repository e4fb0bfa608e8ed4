#pragma once
// Compute pipelines from the SPIR-V embedded at build time. Every shader reaches its buffers
// through device addresses in push constants, so one pipeline layout (128 bytes of push
// constants, no descriptor sets) serves them all. Variants differ by specialization constants
// (constant_id i = spec[i]) and are created once, then cached.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "vulkan/vk_device.h"
#include "vulkan/vk_queue.h"

namespace zinc::vk {

enum class Shader { Embed, RmsNorm, Rope, KvStore, Attention, AttentionSplit, AttentionArgs, Elementwise, Quantize, MatVec, MatVecDot4, MatVecRows, MatVecRowsDot4, MatVecRowsTiles, MatVecRowsTilesDot4, MatVecRowsChain, MatVecRowsChainDot4, QuantizeSignal, AttentionChain, AttentionSplitChain, MatMul, MatMulDot4, MoeTopK, MoeCombine, MoeGroup, Argmax, QkRope, Sample,
                    SsmConv, DeltaNet, DeltaChunkPrep, DeltaChunkState, GatedNorm, Gate, GatherRows, Copy, SyncProbe, MatMulCoopmat, MatMulCoopmatEmulated,
                    DequantF16, MatMulF16, MatMulF16Emulated, FlashAttention, FlashAttentionEmulated };
const char* shaderName(Shader shader);

inline constexpr uint32_t kPushConstantBytes = 128;

// One compiler statistic of a pipeline (VK_KHR_pipeline_executable_properties): as the driver
// names it ("Spilled VGPRs", "Register Count", ...), as text and as a number (booleans 0 / 1).
struct PipelineStatistic {
    std::string name, text;
    double value = 0;
};

class PipelineFactory {
public:
    explicit PipelineFactory(const Device& device);
    ~PipelineFactory();
    PipelineFactory(const PipelineFactory&) = delete;
    PipelineFactory& operator=(const PipelineFactory&) = delete;

    VkPipelineLayout layout() const { return layout_; }
    const Device& device() const { return device_; }
    const DeviceCaps& caps() const { return device_.caps(); }
    // Safe from several threads (tiers sharing the factory, SharedDevice).
    VkPipeline get(Shader shader, const std::vector<uint32_t>& spec = {});
    // The compiler's statistics of a pipeline get() made; empty unless it captured them (every
    // pipeline with caps().pipelineStatistics, the split attention kernels with
    // caps().executableStatistics).
    std::vector<PipelineStatistic> statistics(VkPipeline pipeline) const;
    // How many workgroups of `threads` threads of a pipeline get() made the device runs at
    // once (vulkan/residency.h); 0 where that is not known.
    uint32_t residentWorkgroups(VkPipeline pipeline, uint32_t threads) const;

private:
    std::mutex mutex_;  // get()'s maps
    VkShaderModule module(Shader shader);
    // lavapipe builds a pipeline's machine code (LLVM) at its first dispatch, on the device's
    // queue thread, not in vkCreateComputePipelines: up to ~15 s a pipeline under ASan, and
    // minutes for a submission that is the first to use twenty of them, which the tier's bound
    // on a wait (TierOptions::waitTimeoutMs) counts as a hung GPU. On a CPU device get()
    // dispatches each new pipeline once, with no workgroups, and waits for it here under a
    // bound of its own: the compile happens when the pipeline is made, as on a GPU.
    void compileNow(VkPipeline pipeline, const std::string& name);
    std::unique_ptr<Queue> compileQueue_;  // compileNow's, made on first use
    const Device& device_;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    std::map<Shader, VkShaderModule> modules_;
    std::map<std::pair<Shader, std::vector<uint32_t>>, VkPipeline> pipelines_;
};

}  // namespace zinc::vk
