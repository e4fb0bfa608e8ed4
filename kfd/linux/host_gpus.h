#pragma once
// This machine's GPUs for `--device N` and `zinc-rt devices`: the KFD topology's GPU nodes,
// each joined to its render node by drm_render_minor, then the amdgpu render nodes KFD does not
// list. VRAM and the CPU-visible window come from amdgpu's sysfs files
// (/sys/class/drm/renderD<N>/device/mem_info_vram_total and mem_info_vis_vram_total,
// amdgpu_vram_mgr.c); a GPU node with CPU cores is an APU's (libhsakmt
// hsakmt_topology_setup_is_dgpu_param treats only "no CPU cores, some SIMDs" as discrete).
#include <string>
#include <vector>

#include "kfd/device/gpu_list.h"
#include "kfd/linux/topology.h"

namespace zinc::kfd {

struct HostGpuPaths {
    std::string topologyRoot = kDefaultTopologyRoot;
    std::string sysfsDrm = "/sys/class/drm";
    std::string dri = "/dev/dri";
};

// Numbered (numberGpus). `amdgpuRenderNodes`: "/dev/dri/renderD128", ... bound to amdgpu (from
// umq::readHostFacts); those no KFD node names become entries without a KFD node. A machine
// without KFD topology gives only those.
std::vector<GpuEntry> listHostGpus(const std::vector<std::string>& amdgpuRenderNodes, const HostGpuPaths& paths = {});

// Bytes in a sysfs file holding one decimal number (mem_info_vis_vram_total), 0 when absent.
uint64_t readSysfsBytes(const std::string& path);

}  // namespace zinc::kfd
