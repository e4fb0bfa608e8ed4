#pragma once
// `zinc-rt --tier=vulkan bench MODEL --kernels`: each distinct matvec shape of the model's
// decode graph timed alone on the device, against a copy kernel's bandwidth (issue 18 item 1).
// Vulkan-specific, so tools/ calls it directly rather than through runtime::Tier.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace zinc::vulkan {

struct KernelBenchOptions {
    int32_t device = 0;
    std::vector<uint32_t> tokens{1, 8};  // activation rows per call (1: decode; 8: 8 sequences)
    double targetMs = 25;                // GPU time each measurement aims at (sets the call count)
    // Kernel variants, as ZINC_VK_MATVEC spells them (vk::MatVecOp::Kernel): v1, v2, v2:r=4:c=64:wg=256.
    std::vector<std::string> kernels{"v1", "v2"};
    // Grid sizes (workgroups of 256) at which dispatch and grid-barrier costs are measured.
    std::vector<uint32_t> syncGroups{1, 32, 66, 132, 264, 528};
};

struct KernelTiming {
    std::string label;   // the graph's label of its first op with this shape: attn_q, ffn_gate+up, ...
    std::string type;    // weight type
    uint32_t rows = 0, cols = 0;
    bool pair = false;    // gate and up in one dispatch (rows of each)
    uint32_t experts = 0; // expert mode: (token, slot) pairs per token
    uint32_t perToken = 1;  // calls of this shape in one decode step (one per layer that has it)
    uint32_t tokens = 1;
    std::string kernel;   // v1, v2, v2:r=...
    uint32_t calls = 0;
    double usPerCall = 0;         // back to back, no barrier between calls
    double usPerCallBarrier = 0;  // a barrier after each call, as in a plan
    double weightBytes = 0;       // read per call
    double gbps = 0;              // weightBytes / usPerCall
    double copyFraction = 0;      // gbps / the copy kernel's GB/s
};

// What ordering dependent steps costs with no work in them, at one grid size: a plan's
// empty dispatch and its barrier, against a grid barrier inside one dispatch (a persistent
// kernel's step). A grid barrier needs the whole grid resident: gaveUp counts the waits that
// stopped polling (the grid did not fit), and then gridBarrierUs means nothing.
struct SyncTiming {
    uint32_t groups = 0;        // workgroups of 256 invocations
    double dispatchUs = 0;      // one empty dispatch and the barrier after it
    double gridBarrierUs = 0;   // one grid barrier
    uint32_t gaveUp = 0;
};

struct KernelBenchReport {
    std::string device;
    uint64_t copyBytes = 0;  // bytes copied per copy call (read once, written once)
    double copyGbps = 0;     // (read + written bytes) / time
    std::vector<SyncTiming> sync;
    std::vector<KernelTiming> kernels;
};

// Throws runtime::TierError when the device cannot run the tier or a weight type has no matvec.
KernelBenchReport benchMatVecKernels(const graph::Graph& graph, const KernelBenchOptions& options);

}  // namespace zinc::vulkan
