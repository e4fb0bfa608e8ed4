#include "kfd/device/gpu_list.h"
#include "kfd/device/hex.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>

namespace zinc::kfd {
namespace {

std::string size(uint64_t bytes) {
    char text[32];
    if (bytes >= (uint64_t(1) << 30))
        std::snprintf(text, sizeof text, "%.1f GiB", double(bytes) / double(uint64_t(1) << 30));
    else
        std::snprintf(text, sizeof text, "%llu MiB", static_cast<unsigned long long>(bytes >> 20));
    return text;
}

std::string listing(const std::vector<GpuEntry>& gpus) {
    std::string out;
    for (const GpuEntry& g : gpus) out += "\n  " + g.describe();
    return out.empty() ? " (none)" : out;
}

}  // namespace

std::string GpuEntry::describe() const {
    std::string s = "device " + std::to_string(index) + ": ";
    s += kfdNode ? "KFD node " + std::to_string(*kfdNode) + (gpuId ? " (gpu_id " + hex(gpuId) + ")" : "") : "no KFD node";
    s += ", " + (renderNode.empty() ? std::string("no render node") : renderNode);
    s += ", " + (gfxName.empty() ? std::string("gfx unknown") : gfxName);
    s += ", VRAM " + (vramBytes ? size(vramBytes) : std::string("unknown"));
    if (cpuVisibleVramBytes == 0)
        s += ", BAR unknown";
    else
        s += ", BAR " + size(cpuVisibleVramBytes) + (smallBar() ? " (smaller than VRAM: weights and KV go through a GTT staging copy)" : " (all VRAM)");
    if (integrated) s += ", integrated (skipped unless --device " + std::to_string(index) + " is given)";
    if (simulated) s += ", simulated";
    return s;
}

void numberGpus(std::vector<GpuEntry>& gpus) {
    std::stable_partition(gpus.begin(), gpus.end(), [](const GpuEntry& g) { return !g.integrated; });
    for (size_t i = 0; i < gpus.size(); ++i) gpus[i].index = uint32_t(i);
}

Result<GpuEntry> pickGpu(const std::vector<GpuEntry>& gpus, uint32_t index, bool explicitChoice) {
    if (index >= gpus.size())
        return Error{"pick GPU", ENODEV, "--device " + std::to_string(index) + ": there are " + std::to_string(gpus.size()) + " GPU(s):" + listing(gpus)};
    const GpuEntry& g = gpus[index];
    if (g.integrated && !explicitChoice)
        return Error{"pick GPU", ENODEV, "device " + std::to_string(index) + " is an integrated GPU, skipped by default; pass --device " +
                                                      std::to_string(index) + " to use it anyway:" + listing(gpus)};
    return g;
}

}  // namespace zinc::kfd
