#pragma once
// Faults the simulated GPU makes on request (tests, `ZINC_SIM_FAULT`): one armed fault at a
// time, fired once. The parts of the simulated GPU ask at the moment a real GPU would fail:
//   the dispatcher, before it reads a dispatch's kernarg segment: a page fault (the pointer is
//     replaced by an unmapped address, so the dispatcher's own check faults the queue);
//   the CP (SimQueue), before each packet: a hang (it stops there until the queue is destroyed);
//   the CP, before a RELEASE_MEM writes its value: a corrupted fence.
// Shared by the simulated KFD (sim_device.cpp) and the simulated amdgpu driver (umq/), so the
// three doors go through the same fault and the same recovery.
#include <cstdint>
#include <mutex>
#include <optional>

#include "kfd/device/device.h"
#include "kfd/device/result.h"

namespace zinc::kfd {

class SimMemory;

class SimFaults {
public:
    // An address above the 47-bit user range: never mapped by the simulated GPU.
    static constexpr uint64_t kUnmappedVa = 0xDEADBEEF0000ull;

    Status arm(const InjectedFault& fault);
    // Page fault: the kernarg address the dispatch is to read instead of `kernargAddress`.
    std::optional<uint64_t> faultKernarg(uint64_t kernargAddress, const SimMemory& memory);
    // Hang: true when the CP is to stop before the packet at `packetAddress`.
    bool hangBefore(uint64_t packetAddress, const SimMemory& memory);
    // Bad fence: the value a RELEASE_MEM writing `value` at `address` writes instead.
    std::optional<uint64_t> fenceValue(uint64_t address, uint64_t value);

private:
    bool when(const InjectedFault& f, const SimMemory& memory) const;

    std::mutex mutex_;
    std::optional<InjectedFault> armed_;
};

}  // namespace zinc::kfd
