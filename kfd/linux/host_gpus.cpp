#include "kfd/linux/host_gpus.h"

#include <algorithm>
#include <fstream>

namespace zinc::kfd {
namespace {

std::string renderName(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

void readMemInfo(GpuEntry& g, const HostGpuPaths& paths) {
    if (g.renderNode.empty()) return;
    const std::string device = paths.sysfsDrm + "/" + renderName(g.renderNode) + "/device/";
    if (uint64_t vram = readSysfsBytes(device + "mem_info_vram_total")) g.vramBytes = vram;
    g.cpuVisibleVramBytes = readSysfsBytes(device + "mem_info_vis_vram_total");
}

}  // namespace

uint64_t readSysfsBytes(const std::string& path) {
    std::ifstream in(path);
    unsigned long long v = 0;
    return in >> v ? uint64_t(v) : 0;
}

std::vector<GpuEntry> listHostGpus(const std::vector<std::string>& amdgpuRenderNodes, const HostGpuPaths& paths) {
    std::vector<GpuEntry> gpus;
    if (Result<Topology> topo = readTopology(paths.topologyRoot)) {
        for (const TopologyNode* node : topo->gpus()) {
            GpuEntry g;
            g.kfdNode = node->index;
            g.gpuId = node->gpuId;
            if (node->properties.count("drm_render_minor"))
                g.renderNode = paths.dri + "/renderD" + std::to_string(node->property("drm_render_minor"));
            if (uint64_t version = node->property("gfx_target_version")) g.gfxName = gfxNameFromTargetVersion(uint32_t(version));
            g.vramBytes = node->localMemoryBytes;
            g.integrated = node->property("cpu_cores_count") != 0;
            readMemInfo(g, paths);
            gpus.push_back(std::move(g));
        }
    }
    for (const std::string& render : amdgpuRenderNodes) {
        const bool listed = std::any_of(gpus.begin(), gpus.end(), [&](const GpuEntry& g) { return renderName(g.renderNode) == renderName(render); });
        if (listed) continue;
        GpuEntry g;
        g.renderNode = render;
        readMemInfo(g, paths);
        gpus.push_back(std::move(g));
    }
    numberGpus(gpus);
    return gpus;
}

}  // namespace zinc::kfd
