#pragma once
// The packets of one kernel launch on a PM4 compute queue, from a kernel loaded with
// Device::loadCodeObject: program address, resource registers (with the LDS the descriptor
// cannot carry), the user SGPRs the descriptor enables, workgroup size, DISPATCH_DIRECT.
// tinygrad's AMDComputeQueue.exec writes the same registers (FACTS.md §3 "Usage facts").
#include <array>
#include <cstdint>
#include <string>

#include "kfd/device/device.h"
#include "pm4/stream.h"

namespace zinc::kfd {

struct Launch {
    uint64_t kernargAddress = 0;          // GPU address of the kernarg segment
    std::array<uint32_t, 3> groups{1, 1, 1};
    std::array<uint32_t, 3> groupSize{0, 0, 0};  // 0: the kernel's reqd_work_group_size
    // Non-zero: DISPATCH_INDIRECT, the group counts read by the CP from 3 dwords here (4-byte
    // aligned; written on the GPU, e.g. by the MoE router), and `groups` is ignored.
    uint64_t indirectGroupsAddress = 0;
};

// Dwords a launch takes at most.
inline constexpr uint32_t kLaunchDwords = 4 + 4 + 3 + (2 + 16) + 5 + 5;

// Appends the launch to `stream`. Fails (nothing appended) when the kernel asks for something
// this launcher does not set up: user SGPRs other than the kernarg pointer, scratch, or a
// workgroup size different from its required one.
Status emitLaunch(pm4::Stream& stream, const LoadedKernel& kernel, const Launch& launch);

}  // namespace zinc::kfd
