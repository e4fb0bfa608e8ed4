#pragma once
// What a GPU can do, filled once (STYLE.md §4): from KFD topology on Linux, from the gfx name
// alone on the simulated GPU. Code above kfd/ branches on these fields, never on chip ids.
#include <cstdint>
#include <string>
#include <string_view>

#include "kfd/device/result.h"

namespace zinc::kfd {

// The buffers a PM4 compute queue needs besides its ring, sized exactly as KFD checks them in
// CREATE_QUEUE (kfd_queue.c kfd_queue_acquire_buffers; FACTS.md §5.5).
struct QueueBufferSizes {
    uint32_t eopBytes = 0;          // must equal topology eop_buffer_size
    uint32_t ctlStackBytes = 0;     // must equal topology ctl_stack_size
    uint32_t ctxSaveBytes = 0;      // ctx_save_restore_size: must be >= topology cwsr_size
    uint32_t debugMemoryBytes = 0;  // appended to the context-save mapping
    uint64_t ctxSaveMappingBytes = 0;  // exact mapping size: ALIGN((ctx + debug) * num_xcc, 4096)
};

struct GpuCaps {
    std::string gfxName;            // LLVM processor name: "gfx1100", "gfx1201"
    uint32_t gfxTargetVersion = 0;  // KFD's encoding, major*10000 + minor*100 + stepping
    uint32_t gfxMajor = 0, gfxMinor = 0, gfxStepping = 0;
    uint32_t computeUnits = 0;      // per device (all XCCs)
    uint32_t simdPerCu = 0;
    uint32_t maxWavesPerSimd = 0;
    uint32_t numXcc = 1;
    uint32_t waveSize = 0;          // the native wavefront (32 on RDNA; wave64 runs as two halves)
    uint32_t ldsBytes = 0;          // LDS a workgroup may use
    uint64_t vramBytes = 0;
    // VRAM the CPU can map (the PCI BAR window); 0: all of it (Resizable BAR, or not reported).
    // When it is smaller than what must be uploaded, uploads go through GTT and a CP copy.
    uint64_t cpuVisibleVramBytes = 0;
    bool hasDot4 = false;           // v_dot4_i32_iu8 and friends (LLVM dot*-insts features)
    bool hasWmma = false;           // v_wmma_* matrix instructions
    // Linux only (0 on the simulated GPU): the topology node, KFD's gpu_id, renderD<minor>.
    uint32_t nodeIndex = 0, gpuId = 0, drmRenderMinor = 0;
    QueueBufferSizes queueBuffers;
};

// gfx_target_version (decimal MMmmss) -> "gfx%d%x%x", as KFD and tinygrad print it:
// 110000 -> gfx1100, 120001 -> gfx1201, 90010 -> gfx90a (FACTS.md §7).
std::string gfxNameFromTargetVersion(uint32_t version);
// The inverse, for names of that form ("gfx1100", "gfx90a"); an error for anything else.
Result<uint32_t> targetVersionFromGfxName(std::string_view name);

// The per-generation facts that follow from the name: wave size, LDS, dot/WMMA. Shared by both
// ways of filling caps so they cannot drift apart.
Status applyGenerationTraits(GpuCaps& caps);

// KFD's own formulas for the queue buffers (kfd_queue.c kfd_queue_ctx_save_restore_size,
// torvalds/linux 6.12+; FACTS.md §5.5) from the node's shape.
QueueBufferSizes queueBufferSizes(uint32_t gfxTargetVersion, uint32_t computeUnits, uint32_t numXcc);

// Caps for a simulated GPU of this name, using the shape of the full-size part of that chip.
// Only RDNA3/RDNA4 names the simulator runs are accepted.
Result<GpuCaps> capsFromGfxName(std::string_view gfxName);

std::string describe(const GpuCaps& caps);

}  // namespace zinc::kfd
