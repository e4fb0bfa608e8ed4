#pragma once
// Instance, device discovery and the logical device the tier runs on. DeviceCaps is filled
// once from the driver and is what the rest of the tier branches on (subgroup size, shared
// memory, limits) — never a vendor or device id.
#include <vulkan/vulkan.h>

#include <atomic>
#include <compare>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "vulkan/coopmat_tile.h"

namespace zinc::vk {

struct DeviceCaps {
    uint32_t index = 0;
    std::string name;
    std::string type;        // discrete, integrated, virtual, cpu, other
    std::string driverName;  // e.g. "NVIDIA", "llvmpipe"
    std::string driverInfo;
    uint32_t apiVersion = 0;
    uint32_t subgroupSize = 0;
    uint32_t sharedMemoryBytes = 0;
    uint32_t maxPushConstantBytes = 0;
    uint64_t maxAllocationBytes = 0;
    uint64_t deviceLocalBytes = 0;
    float timestampPeriodNs = 0;
    bool timestamps = false;
    bool integerDotProduct = false;  // 4x8-bit dot products in shaders (Vulkan 1.3)
    bool vulkanMemoryModel = false;  // (Vulkan 1.2) the chained matvecs' release and acquire
    // Chained attention (attention_split_chain, attention_chain: vulkan/plan_context.h
    // kSplitSiteOffset): the memory model, on a GPU. lavapipe (Mesa 22.3.6, Debian 12) runs
    // attention.comp compiled on the memory model wrongly: the exact path's workgroups write
    // nothing past its score loop (a store before it lands, one after it does not); the same
    // source without the memory model, and its merge path with it, are right.
    bool chainedAttention = false;
    // Prefill matmuls on matrix cores (matmul_coopmat.comp): VK_KHR_cooperative_matrix with a
    // subgroup-scope 16x16x16 f16 x f16 -> f32 shape, shaderFloat16, vulkanMemoryModel (the
    // NV-spelled GLSL brings the Vulkan memory model), subgroups of 32 or 64 threads (the
    // shader's staging holds 8 subgroups of a 256-thread workgroup) and 35.5 KiB of shared
    // memory. On by default; off when ZINC_VK_COOPMAT=0 (read once, by Device). prefillMatmul says which
    // path runs and why, for the tier's describe line.
    bool cooperativeMatrix = false;
    // Tests only (ZINC_VK_COOPMAT=emulate, =emulate-old): the matrix-core matmul with its
    // matrix instructions emulated in plain GLSL, on any device with shaderFloat16 (lavapipe
    // included).
    bool cooperativeMatrixEmulated = false;
    // Which matrix-core matmul (with cooperativeMatrix or cooperativeMatrixEmulated): the
    // weights dequantized to f16 rows by a pass of their own, then a pipelined f16 GEMM
    // (dequant_f16.comp + matmul_f16.comp; the default, =emulate), or decoded inside the
    // GEMM's k loop (matmul_coopmat.comp; =old, =emulate-old). Read once, by Device.
    bool coopmatDequant = false;
    bool shaderFloat16 = false;
    // matmul_coopmat.comp's tile shape, ZINC_VK_COOPMAT_TILE (A/B only, read once by Device):
    // auto (per matrix), 64x64, 128x64 or 128x128 (shapes past sharedMemoryBytes fall back).
    CoopmatTile coopmatTile;
    // The automatic tile is the largest that still gives this many workgroups for a matrix
    // (coopmatTileFor); ZINC_VK_COOPMAT_GROUPS (A/B only, read once by Device).
    uint32_t coopmatMinWorkgroups = 128;
    std::string prefillMatmul;
    // A prefill batch's attention on the matrix cores (or their emulation) the prefill matmul
    // uses: flash_attention.comp. Off with ZINC_VK_FLASH=0 (attention_split.comp, as without
    // matrix cores; read once, by Device). prefillAttention says which, for describe.
    bool flashAttention = false;
    std::string prefillAttention;
    // PipelineFactory prints each pipeline's compiler statistics (registers, spills, shared
    // memory: what the driver reports through VK_KHR_pipeline_executable_properties) to stderr
    // as it creates it (once a process: later tiers on a SharedDevice reuse the pipeline). Only
    // when ZINC_VK_PIPELINE_STATS=1 (read once, by Device).
    bool pipelineStatistics = false;
    // Where workgroups run, for residentWorkgroups (vulkan/residency.h): the SMs and the threads
    // an SM holds (VK_NV_shader_sm_builtins), or the CUs and their SIMDs (VK_AMD_shader_core_properties,
    // _properties2's active CUs); 0 where the driver says neither.
    uint32_t computeUnits = 0;
    uint32_t threadsPerUnit = 0;  // NVIDIA
    uint32_t simdsPerUnit = 0;    // AMD
    // VK_KHR_pipeline_executable_properties enabled: with pipelineStatistics (every pipeline
    // captures its compiler statistics), or wherever computeUnits is known (the split attention
    // kernels capture theirs: the registers they take decide how many of their workgroups a
    // unit holds).
    bool executableStatistics = false;
    std::vector<std::string> features;  // the ones zinc-rt uses that are present
    std::vector<std::string> missing;   // the ones zinc-rt needs that are absent
    bool usable() const { return missing.empty(); }
    std::string apiString() const;
};

// The Vulkan instance. Throws TierError when no loader or driver is present.
class Instance {
public:
    Instance();
    ~Instance();
    Instance(const Instance&) = delete;
    Instance& operator=(const Instance&) = delete;
    // The process's instance, created on first use and kept: some drivers (NVIDIA's, seen
    // on the H100) refuse vkCreateInstance after a few dozen create/destroy cycles in one
    // process, and every tier and device listing can share one.
    static std::shared_ptr<Instance> shared();
    VkInstance handle() const { return instance_; }
    const std::vector<VkPhysicalDevice>& physicalDevices() const { return physical_; }
    DeviceCaps caps(uint32_t index) const;

private:
    VkInstance instance_ = VK_NULL_HANDLE;
    std::vector<VkPhysicalDevice> physical_;
};

// Every device the loader reports, with what zinc-rt needs checked (`zinc-rt devices`).
std::vector<DeviceCaps> listDevices();

// What the environment asks of a logical device (A/B switches and tests; DeviceCaps says what
// each does), read when a device is made: two devices made under different options differ.
struct DeviceOptions {
    std::string coopmat;        // ZINC_VK_COOPMAT: unset, 0, 1, old, emulate, emulate-old
    std::string flash;          // ZINC_VK_FLASH: unset, 0, 1
    std::string coopmatTile;    // ZINC_VK_COOPMAT_TILE: unset, auto, 64x64, 128x64, 128x128
    std::string coopmatGroups;  // ZINC_VK_COOPMAT_GROUPS: unset or a count
    bool pipelineStatistics = false;  // ZINC_VK_PIPELINE_STATS=1
    static DeviceOptions fromEnvironment();
    auto operator<=>(const DeviceOptions&) const = default;
};

// A logical device with one compute queue. Throws TierError naming the device and each
// missing feature when the device cannot run the tier, or when `index` does not exist.
class Device {
public:
    Device(std::shared_ptr<Instance> instance, int32_t index, const DeviceOptions& options = DeviceOptions::fromEnvironment());
    ~Device();
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    VkDevice handle() const { return device_; }
    VkPhysicalDevice physical() const { return physical_; }
    uint32_t queueFamily() const { return queueFamily_; }
    const DeviceCaps& caps() const { return caps_; }
    // A memory type with all `want` flags (and preferably `prefer`), or throws.
    uint32_t memoryType(uint32_t typeBits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer) const;
    VkMemoryPropertyFlags memoryFlags(uint32_t type) const { return memory_.memoryTypes[type].propertyFlags; }
    // vkQueueSubmit and vkQueueWaitIdle on the device's queue, one caller at a time: tiers that
    // share the device (SharedDevice) submit from their own threads, and Vulkan wants a queue
    // externally synchronized.
    VkResult submit(const VkSubmitInfo& info) const;
    void waitIdle() const;
    // Set once a call on the device returned VK_ERROR_DEVICE_LOST (Queue notes it): nothing
    // made on the device can be used again, so SharedDevice makes a new one for the next tier.
    void markLost() const { lost_ = true; }
    bool lost() const { return lost_; }

private:
    std::shared_ptr<Instance> instance_;
    VkPhysicalDevice physical_ = VK_NULL_HANDLE;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    uint32_t queueFamily_ = 0;
    DeviceCaps caps_;
    VkPhysicalDeviceMemoryProperties memory_{};
    mutable std::mutex queueMutex_;
    mutable std::atomic<bool> lost_{false};
};

}  // namespace zinc::vk
