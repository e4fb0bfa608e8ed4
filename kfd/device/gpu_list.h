#pragma once
// The GPUs `--device N` chooses among, as `zinc-rt devices` prints them: one entry per GPU, joining
// the KFD topology node (kfd tier) and the amdgpu render node (umq tier, --submit=cs) of the same
// card, with what decides how the tiers use it: gfx target, VRAM, and the CPU-visible VRAM
// window (the PCI BAR; without Resizable BAR typically 256 MiB). Discrete GPUs are numbered
// first, integrated ones after them, so the default `--device 0` never lands on an iGPU; naming
// an iGPU's index explicitly picks it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kfd/device/result.h"

namespace zinc::kfd {

struct GpuEntry {
    uint32_t index = 0;                 // what --device takes (set by numberGpus)
    std::optional<uint32_t> kfdNode;    // KFD topology node, when KFD lists this GPU
    uint32_t gpuId = 0;                 // KFD gpu_id (0 without a KFD node)
    std::string renderNode;             // "/dev/dri/renderD128"; empty when unknown
    std::string gfxName;                // "gfx1100"; empty when unknown
    uint64_t vramBytes = 0;             // 0: unknown
    uint64_t cpuVisibleVramBytes = 0;   // the BAR window; 0: unknown
    bool integrated = false;            // an APU's GPU (shares system memory)
    bool simulated = false;

    // "device 0: KFD node 1 (gpu_id 0xb2d2), /dev/dri/renderD128, gfx1100, VRAM 24.0 GiB, BAR 256 MiB (small: staging)".
    std::string describe() const;
    // True when the BAR is known and smaller than VRAM: uploads go through a GTT staging buffer.
    bool smallBar() const { return cpuVisibleVramBytes != 0 && vramBytes != 0 && cpuVisibleVramBytes < vramBytes; }
};

// Orders discrete GPUs before integrated ones (each group keeping its order) and numbers them.
void numberGpus(std::vector<GpuEntry>& gpus);

// Entry `index` of numbered `gpus`. An integrated GPU only when `explicitChoice` (--device or
// ZINC_DEVICE was given): by default iGPUs are skipped. Errors list what there is.
Result<GpuEntry> pickGpu(const std::vector<GpuEntry>& gpus, uint32_t index, bool explicitChoice);

}  // namespace zinc::kfd
