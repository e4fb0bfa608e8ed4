#pragma once
// Runs one dispatch of a decoded kernel as the hardware would start it: initial SGPRs from the
// kernel descriptor's enable bits (LLVM AMDGPUUsage "Initial Kernel Execution State"), packed
// work-item ids in v0, LDS per workgroup; waves of a workgroup meet only at s_barrier (each runs
// alone to the next barrier, in an order that flips at every barrier); workgroups run in a
// scrambled order. Refuses what the hardware
// would refuse, naming the register and value.
#include <array>
#include <cstdint>
#include <vector>

#include "kernels/code_object.h"
#include "kfd/sim/isa/program.h"
#include "kfd/sim/isa/wave.h"

namespace zinc::kfd::isa {

struct LaunchRequest {
    const Program* program = nullptr;
    const kernels::KernelInfo* kernel = nullptr;
    uint64_t loadBase = 0;  // GPU address of the code object's image offset 0
    std::array<uint32_t, 16> userData{};
    uint32_t userSgprCount = 0;
    std::array<uint32_t, 3> groups{};
    std::array<uint32_t, 3> groupSize{};
    uint32_t ldsBytes = 0;        // RSRC2.LDS_SIZE x 512
    uint64_t scratchBase = 0;     // COMPUTE_DISPATCH_SCRATCH_BASE (0: none provisioned)
    IsaMemory* memory = nullptr;
    uint64_t seed = 1;            // workgroup order; the same seed gives the same order
    const StaleMemory* stale = nullptr;  // loads of stale bytes read kPoison (null: coherent memory)
    WrittenRanges* written = nullptr;    // the dispatch's stores are appended here (null: not recorded)
};

struct LaunchCounts {
    std::vector<uint64_t> executed;  // per Program::opcodes entry (wave-instructions)
    uint64_t waves = 0, bytesRead = 0, bytesWritten = 0;
};

// Throws IsaError with the kernel, workgroup, wave, instruction and reason.
void launch(const LaunchRequest& request, LaunchCounts* counts = nullptr);

// LDS one workgroup may allocate on gfx11/gfx12 (RDNA3/RDNA4 ISA guides: 64 KiB per workgroup).
inline constexpr uint32_t kMaxLdsBytes = 64 * 1024;

}  // namespace zinc::kfd::isa
