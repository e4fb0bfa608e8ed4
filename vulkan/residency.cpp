#include "vulkan/residency.h"

#include <algorithm>
#include <optional>
#include <string>

namespace zinc::vk {
namespace {

std::optional<double> find(const std::vector<PipelineStatistic>& stats, const std::string& name) {
    for (const auto& s : stats)
        if (s.name == name) return s.value;
    return std::nullopt;
}

// NVIDIA (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability", 5.0 to
// 9.0): 64 Ki 32-bit registers an SM, allocated to a warp in units of 256 (8 a thread), and
// at least 16 resident blocks an SM (16 on 7.5 and 8.6, more elsewhere: counted as 16). The
// driver reports the pipeline's "Register Count" a thread and its "Shared Memory Size"; an
// SM's shared memory is not reported, so a workgroup's maximum (maxComputeSharedMemorySize,
// at most what an SM has) bounds it: an undercount on Hopper's 228 KiB, never an overcount.
uint32_t perSm(const DeviceCaps& caps, const std::vector<PipelineStatistic>& stats, uint32_t threads) {
    const auto registers = find(stats, "Register Count");
    if (!registers || *registers <= 0 || caps.threadsPerUnit == 0) return 0;
    constexpr uint32_t kRegistersPerSm = 65536, kRegisterUnit = 8, kWarp = 32, kBlocks = 16;
    const uint32_t warps = (threads + kWarp - 1) / kWarp;
    const auto perThread = (static_cast<uint32_t>(*registers) + kRegisterUnit - 1) / kRegisterUnit * kRegisterUnit;
    uint32_t groups = std::min({kRegistersPerSm / (perThread * warps * kWarp), caps.threadsPerUnit / (warps * kWarp), kBlocks});
    const auto shared = find(stats, "Shared Memory Size");
    if (shared && *shared > 0) groups = std::min(groups, caps.sharedMemoryBytes / static_cast<uint32_t>(*shared));
    return groups;
}

// AMD (RADV): "Subgroups per SIMD", the compiler's occupancy bound from the pipeline's
// registers and LDS, times the SIMDs of a CU, over the subgroups of a workgroup. On RDNA
// (GFX10+, 2 SIMDs a CU) RADV counts that figure in wave32s, a wave64 as two, with its LDS
// bound taken over a WGP (Mesa's radv_get_max_waves); on GCN (4 SIMDs) in the pipeline's waves.
uint32_t perCu(const DeviceCaps& caps, const std::vector<PipelineStatistic>& stats, uint32_t threads) {
    const auto waves = find(stats, "Subgroups per SIMD");
    if (!waves || *waves <= 0 || caps.simdsPerUnit == 0) return 0;
    const auto sizeStat = find(stats, "Subgroup Size");
    const uint32_t waveSize = sizeStat && *sizeStat > 0 ? static_cast<uint32_t>(*sizeStat) : caps.subgroupSize;
    const uint32_t unit = caps.simdsPerUnit == 2 ? 32u : waveSize;
    if (unit == 0) return 0;
    return static_cast<uint32_t>(*waves) * caps.simdsPerUnit / ((threads + unit - 1) / unit);
}

}  // namespace

uint32_t residentWorkgroups(const DeviceCaps& caps, const std::vector<PipelineStatistic>& stats, uint32_t threads) {
    if (caps.computeUnits == 0 || threads == 0) return 0;
    const uint32_t perUnit = caps.threadsPerUnit > 0 ? perSm(caps, stats, threads) : perCu(caps, stats, threads);
    return perUnit * caps.computeUnits;
}

}  // namespace zinc::vk
