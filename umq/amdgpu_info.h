#pragma once
// What an amdgpu render node is, through libdrm_amdgpu (amdgpu_device_initialize,
// amdgpu_query_gpu_info, amdgpu_query_heap_info, amdgpu_query_firmware_version for MEC and MES,
// amdgpu_query_info(DEV_INFO) for userq_ip_mask, amdgpu_query_hw_ip_info for the GC version):
// shown by `zinc-rt devices` and `zinc-rt probe`. The simulated node reports the values its
// driver answers, labelled simulated.
#include <cstdint>
#include <string>

#include "kfd/device/result.h"

namespace zinc::umq {

struct AmdgpuInfo {
    std::string node;           // /dev/dri/renderD128
    bool simulated = false;
    std::string marketingName;  // "AMD Radeon RX 7900 XTX" (libdrm's table), or empty
    uint32_t familyId = 0;      // AMDGPU_FAMILY_*
    std::string gfxName;        // gfx1100, from the GC IP version
    uint32_t computeUnits = 0;
    uint64_t vramBytes = 0, gttBytes = 0;
    uint32_t mecFirmware = 0, mesFirmware = 0;  // 0: not reported
    uint32_t userqIpMask = 0;
    uint32_t drmMajor = 0, drmMinor = 0;        // amdgpu's DRM interface version
};

kfd::Result<AmdgpuInfo> queryAmdgpuInfo(const std::string& renderNode);
// The simulated node of `gfxName`, as its driver (umq/sim_amdgpu.h) reports it.
kfd::Result<AmdgpuInfo> simulatedAmdgpuInfo(const std::string& gfxName);

// Two lines: "renderD128: AMD Radeon ... (gfx1100, family 145), 96 CUs" / "VRAM ..., GTT ..., MEC fw ..., MES fw ..., user queues: compute".
std::string describe(const AmdgpuInfo& info);

}  // namespace zinc::umq
