#include "vulkan/vk_device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "vulkan/vk_coopmat.h"
#include "vulkan/vk_error.h"

namespace zinc::vk {
namespace {

const char* typeName(VkPhysicalDeviceType type) {
    switch (type) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
        default: return "other";
    }
}

// The features zinc-rt's shaders and plans use, queried together.
struct FeatureQuery {
    VkPhysicalDeviceVulkan13Features v13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR coopmat{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
    VkPhysicalDeviceFeatures2 base{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    FeatureQuery(bool vulkan13, bool cooperativeMatrix) {
        base.pNext = &v11;
        v11.pNext = &v12;
        if (vulkan13) v12.pNext = &v13;
        if (cooperativeMatrix) {
            coopmat.pNext = base.pNext;
            base.pNext = &coopmat;
        }
    }
};

bool hasExtension(VkPhysicalDevice device, const char* name) {
    uint32_t n = 0;
    vkEnumerateDeviceExtensionProperties(device, nullptr, &n, nullptr);
    std::vector<VkExtensionProperties> extensions(n);
    vkEnumerateDeviceExtensionProperties(device, nullptr, &n, extensions.data());
    for (const auto& e : extensions)
        if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
}

// Whether the driver lists the one shape matmul_coopmat.comp multiplies in.
bool hasF16Shape16(VkInstance instance, VkPhysicalDevice device) {
    const auto get = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
    if (!get) return false;
    uint32_t n = 0;
    if (get(device, &n, nullptr) != VK_SUCCESS) return false;
    std::vector<VkCooperativeMatrixPropertiesKHR> shapes(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR});
    if (get(device, &n, shapes.data()) != VK_SUCCESS) return false;
    for (const auto& s : shapes)
        if (s.MSize == 16 && s.NSize == 16 && s.KSize == 16 && s.AType == VK_COMPONENT_TYPE_FLOAT16_KHR &&
            s.BType == VK_COMPONENT_TYPE_FLOAT16_KHR && s.CType == VK_COMPONENT_TYPE_FLOAT32_KHR &&
            s.ResultType == VK_COMPONENT_TYPE_FLOAT32_KHR && s.scope == VK_SCOPE_SUBGROUP_KHR && !s.saturatingAccumulation)
            return true;
    return false;
}


uint32_t computeQueueFamily(VkPhysicalDevice device) {
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(device, &n, nullptr);
    std::vector<VkQueueFamilyProperties> families(n);
    vkGetPhysicalDeviceQueueFamilyProperties(device, &n, families.data());
    for (uint32_t i = 0; i < n; ++i)  // a compute family with timestamps, graphics or not
        if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return i;
    return UINT32_MAX;
}

}  // namespace

std::string DeviceCaps::apiString() const {
    return fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(apiVersion), VK_API_VERSION_MINOR(apiVersion),
                       VK_API_VERSION_PATCH(apiVersion));
}

Instance::Instance() {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "zinc-rt";
    app.apiVersion = VK_API_VERSION_1_3;  // 1.3 features where the device has them; 1.2 is the floor
    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &app;
    const VkResult r = vkCreateInstance(&info, nullptr, &instance_);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
        throw VkError("vkCreateInstance", r, "no Vulkan 1.2 driver found (install mesa-vulkan-drivers for lavapipe, or a GPU driver)");
    check(r, "vkCreateInstance");
    uint32_t n = 0;
    check(vkEnumeratePhysicalDevices(instance_, &n, nullptr), "vkEnumeratePhysicalDevices");
    physical_.resize(n);
    check(vkEnumeratePhysicalDevices(instance_, &n, physical_.data()), "vkEnumeratePhysicalDevices");
}

Instance::~Instance() {
    if (instance_) vkDestroyInstance(instance_, nullptr);
}

DeviceCaps Instance::caps(uint32_t index) const {
    const VkPhysicalDevice device = physical_.at(index);
    DeviceCaps c;
    c.index = index;
    VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    VkPhysicalDeviceCooperativeMatrixPropertiesKHR coopmatProps{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR};
    const bool coopmatExtension = hasExtension(device, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
    props.pNext = &subgroup;
    subgroup.pNext = &driver;
    driver.pNext = &m3;
    if (coopmatExtension) m3.pNext = &coopmatProps;
    // Compute units: NVIDIA's SMs, AMD's CUs (the active ones where properties2 says).
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sms{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    VkPhysicalDeviceShaderCorePropertiesAMD cores{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
    VkPhysicalDeviceShaderCoreProperties2AMD cores2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_2_AMD};
    const bool smExtension = hasExtension(device, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
    const bool coreExtension = hasExtension(device, VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME);
    const bool core2Extension = coreExtension && hasExtension(device, VK_AMD_SHADER_CORE_PROPERTIES_2_EXTENSION_NAME);
    if (smExtension) {
        sms.pNext = props.pNext;
        props.pNext = &sms;
    }
    if (coreExtension) {
        cores.pNext = props.pNext;
        props.pNext = &cores;
    }
    if (core2Extension) {
        cores2.pNext = props.pNext;
        props.pNext = &cores2;
    }
    vkGetPhysicalDeviceProperties2(device, &props);
    if (smExtension && sms.shaderSMCount > 0 && sms.shaderWarpsPerSM > 0) {
        c.computeUnits = sms.shaderSMCount;
        c.threadsPerUnit = sms.shaderWarpsPerSM * 32u;  // a warp is 32 threads
    } else if (coreExtension && cores.simdPerComputeUnit > 0) {
        const uint32_t perArrays = cores.shaderEngineCount * cores.shaderArraysPerEngineCount * cores.computeUnitsPerShaderArray;
        c.computeUnits = core2Extension && cores2.activeComputeUnitCount > 0 ? cores2.activeComputeUnitCount : perArrays;
        c.simdsPerUnit = cores.simdPerComputeUnit;
    }
    c.executableStatistics = c.computeUnits > 0 && hasExtension(device, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    const auto& p = props.properties;
    c.name = p.deviceName;
    c.type = typeName(p.deviceType);
    c.driverName = driver.driverName;
    c.driverInfo = driver.driverInfo;
    c.apiVersion = p.apiVersion;
    c.subgroupSize = subgroup.subgroupSize;
    c.sharedMemoryBytes = p.limits.maxComputeSharedMemorySize;
    c.maxPushConstantBytes = p.limits.maxPushConstantsSize;
    c.maxAllocationBytes = m3.maxMemoryAllocationSize;
    c.timestampPeriodNs = p.limits.timestampPeriod;
    VkPhysicalDeviceMemoryProperties memory;
    vkGetPhysicalDeviceMemoryProperties(device, &memory);
    for (uint32_t i = 0; i < memory.memoryHeapCount; ++i)
        if (memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
            c.deviceLocalBytes = std::max<uint64_t>(c.deviceLocalBytes, memory.memoryHeaps[i].size);

    FeatureQuery f(p.apiVersion >= VK_API_VERSION_1_3, coopmatExtension);
    if (p.apiVersion >= VK_API_VERSION_1_2) vkGetPhysicalDeviceFeatures2(device, &f.base);
    c.integerDotProduct = p.apiVersion >= VK_API_VERSION_1_3 && f.v13.shaderIntegerDotProduct;
    c.shaderFloat16 = f.v12.shaderFloat16;
    c.vulkanMemoryModel = f.v12.vulkanMemoryModel;
    c.chainedAttention = c.vulkanMemoryModel && c.type != "cpu";
    const char* dotProducts = c.integerDotProduct ? "integer dot products" : "unpacked integer products";
    if (!coopmatExtension) {
        c.prefillMatmul = fmt::format("{} (no VK_KHR_cooperative_matrix)", dotProducts);
    } else if (!f.coopmat.cooperativeMatrix || !(coopmatProps.cooperativeMatrixSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ||
               !hasF16Shape16(instance_, device)) {
        c.prefillMatmul = fmt::format("{} (VK_KHR_cooperative_matrix without a subgroup 16x16x16 f16 -> f32 shape in compute shaders)", dotProducts);
    } else if (!f.v12.shaderFloat16 || !f.v12.vulkanMemoryModel) {
        c.prefillMatmul = fmt::format("{} (cooperative matrices but no shaderFloat16 or vulkanMemoryModel)", dotProducts);
    } else if (c.subgroupSize != 32 && c.subgroupSize != 64) {
        c.prefillMatmul = fmt::format("{} (cooperative matrices but subgroups of {}, not 32 or 64)", dotProducts, c.subgroupSize);
    } else if (c.sharedMemoryBytes < kCoopmatMinSharedBytes) {
        c.prefillMatmul = fmt::format("{} (cooperative matrices but {} bytes of shared memory)", dotProducts, c.sharedMemoryBytes);
    } else {
        c.cooperativeMatrix = true;
        c.prefillMatmul = "cooperative matrix 16x16x16 f16 (VK_KHR_cooperative_matrix)";
    }
    auto need = [&c](bool present, const char* name) { (present ? c.features : c.missing).push_back(name); };
    need(p.apiVersion >= VK_API_VERSION_1_2, "Vulkan 1.2");
    need(f.v12.bufferDeviceAddress, "bufferDeviceAddress");
    need(f.v12.timelineSemaphore, "timelineSemaphore");
    need(f.v11.storageBuffer16BitAccess, "storageBuffer16BitAccess");
    need(f.base.features.shaderInt16, "shaderInt16");
    need((subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
             (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT),
         "subgroup arithmetic in compute");
    need(c.maxPushConstantBytes >= 128, "128 bytes of push constants");
    need(c.sharedMemoryBytes >= 16384, "16 KiB of shared memory");
    const uint32_t family = computeQueueFamily(device);
    need(family != UINT32_MAX, "a compute queue");
    if (family != UINT32_MAX) {
        uint32_t n = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(device, &n, nullptr);
        std::vector<VkQueueFamilyProperties> families(n);
        vkGetPhysicalDeviceQueueFamilyProperties(device, &n, families.data());
        c.timestamps = families[family].timestampValidBits > 0 && p.limits.timestampPeriod > 0;
    }
    if (c.timestamps) c.features.push_back("timestamps");
    if (c.integerDotProduct) c.features.push_back("shaderIntegerDotProduct");
    if (c.cooperativeMatrix) c.features.push_back("cooperativeMatrix");
    return c;
}

std::shared_ptr<Instance> Instance::shared() {
    static std::mutex mutex;
    // Never destroyed: at exit NVIDIA's driver tears itself down before static destructors
    // run, and a vkDestroyInstance after that crashes (seen on the H100).
    static auto* instance = new std::shared_ptr<Instance>();
    const std::lock_guard lock(mutex);
    if (!*instance) *instance = std::make_shared<Instance>();
    return *instance;
}

std::vector<DeviceCaps> listDevices() {
    const auto instance = Instance::shared();
    std::vector<DeviceCaps> out;
    for (uint32_t i = 0; i < instance->physicalDevices().size(); ++i) out.push_back(instance->caps(i));
    return out;
}

DeviceOptions DeviceOptions::fromEnvironment() {
    const auto env = [](const char* name) {
        const char* v = std::getenv(name);
        return std::string(v ? v : "");
    };
    return {env("ZINC_VK_COOPMAT"), env("ZINC_VK_FLASH"), env("ZINC_VK_COOPMAT_TILE"), env("ZINC_VK_COOPMAT_GROUPS"),
            env("ZINC_VK_PIPELINE_STATS") == "1"};
}

Device::Device(std::shared_ptr<Instance> instance, int32_t index, const DeviceOptions& options)
    : instance_(std::move(instance)) {
    const auto count = static_cast<int32_t>(instance_->physicalDevices().size());
    if (count == 0)
        throw runtime::TierError("vulkan tier: no Vulkan device found (install mesa-vulkan-drivers for lavapipe, or a GPU driver)");
    if (index < 0 || index >= count)
        throw runtime::TierError(fmt::format("vulkan tier: no Vulkan device {} (devices 0..{}; see `zinc-rt devices`)",
                                             index, count - 1));
    physical_ = instance_->physicalDevices()[static_cast<size_t>(index)];
    caps_ = instance_->caps(static_cast<uint32_t>(index));
    if (!caps_.usable())
        throw runtime::TierError(fmt::format("vulkan tier: device {} ({}) lacks: {}", index, caps_.name,
                                             fmt::join(caps_.missing, ", ")));
    // Read once, here: where the device has matrix cores the prefill matmuls run on them in two
    // passes (dequant_f16.comp + matmul_f16.comp): on the H200 Qwen3-8B prefills 512 tokens at
    // 4,217 tok/s against the integer matmul's 1,876 (results/vulkan-h100.md). ZINC_VK_COOPMAT=0
    // keeps the integer matmul; =old the matrix-core matmul that decodes the weights in its k
    // loop (matmul_coopmat.comp, no scratch), kept for A/B; =emulate and =emulate-old their
    // emulated variants (tests only).
    const std::string& mode = options.coopmat;
    if (!mode.empty() && mode != "0" && mode != "1" && mode != "old" && mode != "emulate" && mode != "emulate-old")
        throw runtime::TierError(fmt::format("vulkan tier: ZINC_VK_COOPMAT={} is none of 0, 1, old, emulate, emulate-old", mode));
    const char* integer = caps_.integerDotProduct ? "integer dot products" : "unpacked integer products";
    if (caps_.cooperativeMatrix && mode == "0") {
        caps_.cooperativeMatrix = false;
        caps_.prefillMatmul = fmt::format("{} (cooperative matrices present, off: ZINC_VK_COOPMAT=0)", integer);
    }
    if ((mode == "emulate" || mode == "emulate-old") && caps_.shaderFloat16) {
        caps_.cooperativeMatrix = false;
        caps_.cooperativeMatrixEmulated = true;
        caps_.prefillMatmul = "16x16 f16 tiles emulated in plain GLSL (ZINC_VK_COOPMAT=emulate, tests only)";
    }
    if (caps_.cooperativeMatrix || caps_.cooperativeMatrixEmulated) {
        caps_.coopmatDequant = mode != "old" && mode != "emulate-old";
        caps_.prefillMatmul += caps_.coopmatDequant
                                   ? ", weights dequantized to f16 by a pass of their own (dequant_f16 + matmul_f16; "
                                     "MoE experts with 8-127 pairs each decoded in the k loop, matmul_coopmat; "
                                     "ZINC_VK_COOPMAT=old: decoded in the k loop)"
                                   : ", weights decoded in the k loop (matmul_coopmat; unset: dequantized to f16 by a "
                                     "pass of their own)";
    }
    // Read once, here: flash attention for prefill batches wherever the matmuls run on matrix
    // cores (emulated with them); ZINC_VK_FLASH=0 keeps the split attention (A/B).
    const std::string& flash = options.flash;
    if (!flash.empty() && flash != "0" && flash != "1")
        throw runtime::TierError(fmt::format("vulkan tier: ZINC_VK_FLASH={} is neither 0 nor 1", flash));
    caps_.flashAttention = (caps_.cooperativeMatrix || caps_.cooperativeMatrixEmulated) && flash != "0";
    caps_.prefillAttention =
        caps_.flashAttention ? (caps_.cooperativeMatrix ? "flash (heads of up to 128, no window), cooperative matrix 16x16x16 f16 (flash_attention)"
                                                        : "flash (heads of up to 128, no window), 16x16 f16 tiles emulated (flash_attention, ZINC_VK_COOPMAT=emulate)")
        : caps_.cooperativeMatrix || caps_.cooperativeMatrixEmulated
            ? "split over positions (attention_split; flash off: ZINC_VK_FLASH=0)"
            : "split over positions (attention_split; flash needs cooperative matrices)";
    // A/B only, read once, here: the matrix-core matmuls' tile shape (coopmat_tile.h).
    if (!options.coopmatTile.empty() && (caps_.cooperativeMatrix || caps_.cooperativeMatrixEmulated)) {
        const auto tile = parseCoopmatTile(options.coopmatTile);
        if (!tile)
            throw runtime::TierError(fmt::format("vulkan tier: ZINC_VK_COOPMAT_TILE={} is none of auto, 64x64, 128x64, 128x128",
                                                 options.coopmatTile));
        caps_.coopmatTile = *tile;
    }
    // A/B only, read once, here: the fewest workgroups an automatic tile must give (coopmatTileFor).
    if (!options.coopmatGroups.empty())
        caps_.coopmatMinWorkgroups =
            std::max<uint32_t>(1, static_cast<uint32_t>(std::strtoul(options.coopmatGroups.c_str(), nullptr, 10)));
    if (caps_.cooperativeMatrix || caps_.cooperativeMatrixEmulated)
        caps_.prefillMatmul += fmt::format(", tiles {}", caps_.coopmatTile.automatic()
                                                            ? "auto (128x128, 128x64 or 64x64 by matrix size)"
                                                            : coopmatTileName(caps_.coopmatTile));
    queueFamily_ = computeQueueFamily(physical_);
    vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queueInfo{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queueInfo.queueFamilyIndex = queueFamily_;
    queueInfo.queueCount = 1;
    queueInfo.pQueuePriorities = &priority;
    FeatureQuery enable(caps_.integerDotProduct, caps_.cooperativeMatrix);  // only what we use
    enable.v13.shaderIntegerDotProduct = caps_.integerDotProduct ? VK_TRUE : VK_FALSE;
    std::vector<const char*> extensions;
    if (caps_.cooperativeMatrix) {
        enable.coopmat.cooperativeMatrix = VK_TRUE;
        enable.v12.shaderFloat16 = VK_TRUE;
        enable.v12.vulkanMemoryModel = VK_TRUE;
        extensions.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
    }
    if (caps_.cooperativeMatrixEmulated) enable.v12.shaderFloat16 = VK_TRUE;
    if (caps_.vulkanMemoryModel) enable.v12.vulkanMemoryModel = VK_TRUE;
    enable.v12.bufferDeviceAddress = VK_TRUE;
    enable.v12.timelineSemaphore = VK_TRUE;
    enable.v11.storageBuffer16BitAccess = VK_TRUE;
    enable.base.features.shaderInt16 = VK_TRUE;
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executables{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
    if (options.pipelineStatistics && !hasExtension(physical_, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME))
        throw runtime::TierError(fmt::format("vulkan tier: ZINC_VK_PIPELINE_STATS=1 but {} lacks {}", caps_.name,
                                             VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME));
    caps_.pipelineStatistics = options.pipelineStatistics;
    caps_.executableStatistics = caps_.executableStatistics || options.pipelineStatistics;
    if (caps_.executableStatistics) {
        executables.pipelineExecutableInfo = VK_TRUE;
        executables.pNext = enable.base.pNext;
        enable.base.pNext = &executables;
        extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    }
    VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    info.pNext = &enable.base;
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queueInfo;
    info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    info.ppEnabledExtensionNames = extensions.data();
    check(vkCreateDevice(physical_, &info, nullptr, &device_), "vkCreateDevice", caps_.name);
    vkGetDeviceQueue(device_, queueFamily_, 0, &queue_);
}

VkResult Device::submit(const VkSubmitInfo& info) const {
    const std::lock_guard lock(queueMutex_);
    return vkQueueSubmit(queue_, 1, &info, VK_NULL_HANDLE);
}

void Device::waitIdle() const {
    const std::lock_guard lock(queueMutex_);
    vkQueueWaitIdle(queue_);
}

Device::~Device() {
    if (device_) {
        vkDeviceWaitIdle(device_);
        vkDestroyDevice(device_, nullptr);
    }
}

uint32_t Device::memoryType(uint32_t typeBits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer) const {
    for (int pass = 0; pass < 2; ++pass) {
        const VkMemoryPropertyFlags flags = pass == 0 ? (want | prefer) : want;
        for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i)
            if ((typeBits & (1u << i)) && (memory_.memoryTypes[i].propertyFlags & flags) == flags) return i;
    }
    throw VkError("vkAllocateMemory", VK_ERROR_FEATURE_NOT_PRESENT,
                  fmt::format("no memory type with flags {:#x} on {}", want, caps_.name));
}

}  // namespace zinc::vk
