#include "umq/amdgpu_info.h"

#include <amdgpu.h>
#include <fcntl.h>
#include <unistd.h>
#include <fmt/format.h>

#include "kfd/device/caps.h"
#include "umq/amdgpu_uapi.h"

namespace zinc::umq {
namespace {

// Closes the node and the libdrm handle whatever step failed.
struct Handle {
    int fd = -1;
    amdgpu_device_handle dev = nullptr;
    ~Handle() {
        if (dev) amdgpu_device_deinitialize(dev);
        if (fd >= 0) ::close(fd);
    }
};

kfd::Error libdrmError(const char* call, int rc, const std::string& node) {
    return kfd::Error{call, -rc, node};  // libdrm returns -errno
}

}  // namespace

kfd::Result<AmdgpuInfo> queryAmdgpuInfo(const std::string& renderNode) {
    Handle h;
    h.fd = ::open(renderNode.c_str(), O_RDWR | O_CLOEXEC);
    if (h.fd < 0) return kfd::errnoError("open render node", "cannot open " + renderNode);
    AmdgpuInfo info;
    info.node = renderNode;
    if (int rc = amdgpu_device_initialize(h.fd, &info.drmMajor, &info.drmMinor, &h.dev); rc) return libdrmError("amdgpu_device_initialize", rc, renderNode);
    amdgpu_gpu_info gpu{};
    if (int rc = amdgpu_query_gpu_info(h.dev, &gpu); rc) return libdrmError("amdgpu_query_gpu_info", rc, renderNode);
    info.familyId = gpu.family_id;
    info.computeUnits = gpu.cu_active_number;
    if (const char* name = amdgpu_get_marketing_name(h.dev)) info.marketingName = name;
    amdgpu_heap_info heap{};
    if (amdgpu_query_heap_info(h.dev, AMDGPU_GEM_DOMAIN_VRAM, 0, &heap) == 0) info.vramBytes = heap.heap_size;
    if (amdgpu_query_heap_info(h.dev, AMDGPU_GEM_DOMAIN_GTT, 0, &heap) == 0) info.gttBytes = heap.heap_size;
    uint32_t version = 0, feature = 0;
    if (amdgpu_query_firmware_version(h.dev, AMDGPU_INFO_FW_GFX_MEC, 0, 0, &version, &feature) == 0) info.mecFirmware = version;
    if (amdgpu_query_firmware_version(h.dev, uapi::kInfoFwMes, 0, 0, &version, &feature) == 0) info.mesFirmware = version;
    // The kernel copies min(our size, its size): an older kernel leaves the tail zero.
    uapi::info_device dev{};
    if (amdgpu_query_info(h.dev, AMDGPU_INFO_DEV_INFO, sizeof dev, &dev) == 0) info.userqIpMask = dev.tail.userq_ip_mask;
    drm_amdgpu_info_hw_ip ip{};
    if (amdgpu_query_hw_ip_info(h.dev, AMDGPU_HW_IP_COMPUTE, 0, &ip) == 0 && ip._pad) {
        const uint32_t v = ip._pad;  // ip_discovery_version: 23:16 major, 15:8 minor, 7:0 revision
        info.gfxName = kfd::gfxNameFromTargetVersion(((v >> 16) & 0xFF) * 10000 + ((v >> 8) & 0xFF) * 100 + (v & 0xFF));
    } else {
        info.gfxName = fmt::format("GC {}.{} (no ip_discovery_version before Linux 6.6)", ip.hw_ip_version_major, ip.hw_ip_version_minor);
    }
    return info;
}

kfd::Result<AmdgpuInfo> simulatedAmdgpuInfo(const std::string& gfxName) {
    kfd::Result<kfd::GpuCaps> caps = kfd::capsFromGfxName(gfxName);
    if (!caps) return caps.error();
    AmdgpuInfo info;
    info.node = "simulated render node";
    info.simulated = true;
    info.marketingName = "simulated " + caps->gfxName;
    info.familyId = caps->gfxMajor >= 12 ? 152 : 145;
    info.gfxName = caps->gfxName;
    info.computeUnits = caps->computeUnits;
    info.vramBytes = caps->vramBytes;
    info.gttBytes = 16ull << 30;
    info.userqIpMask = 1u << AMDGPU_HW_IP_COMPUTE;
    return info;
}

std::string describe(const AmdgpuInfo& i) {
    auto fw = [](uint32_t v) { return v ? fmt::format("{:#x}", v) : std::string("not reported"); };
    std::string userq = i.userqIpMask & (1u << AMDGPU_HW_IP_COMPUTE) ? "compute" : fmt::format("none for compute (mask {:#x})", i.userqIpMask);
    return fmt::format("{}: {} ({}, family {}), {} CUs{}\n  VRAM {:.1f} GiB, GTT {:.1f} GiB, MEC firmware {}, MES firmware {}, user queues: {}",
                       i.node, i.marketingName.empty() ? "amdgpu" : i.marketingName, i.gfxName, i.familyId, i.computeUnits,
                       i.simulated ? " (simulated values)" : fmt::format(", amdgpu DRM {}.{}", i.drmMajor, i.drmMinor),
                       double(i.vramBytes) / (1 << 30), double(i.gttBytes) / (1 << 30), fw(i.mecFirmware), fw(i.mesFirmware), userq);
}

}  // namespace zinc::umq
