#pragma once
// The kernel's own compute ring, reached through a submit ioctl (amdgpu CS, FACTS.md §6.1): the
// caller hands over indirect buffers, the kernel puts an INDIRECT_BUFFER for each on its ring,
// then its own fence, and signals a syncobj when the job retires. The third front door to the
// command processor, beside a KFD queue + doorbell and an amdgpu user queue + doorbell: the same
// IBs, but no ring or doorbell of ours.
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "kfd/device/device.h"
#include "kfd/device/result.h"

namespace zinc::kfd {

struct IbRange {
    uint64_t address = 0;  // GPU VA of the first dword
    uint32_t dwords = 0;
};

class KernelRing {
public:
    virtual ~KernelRing() = default;
    // "amdgpu CS, context 1, compute ring 0 (renderD128)".
    virtual std::string name() const = 0;
    // Hands `ibs` to the kernel as one job, run in order; returns the job's number (1, 2, ...).
    virtual Result<uint64_t> submit(std::span<const IbRange> ibs) = 0;
    // Waits until job `job` has retired. Bounded: a timeout is errno ETIME with describe().
    virtual Status wait(uint64_t job, uint32_t timeoutMs) = 0;
    // Jobs submitted and known retired, for error reports.
    virtual std::string describe() const = 0;
    // After a failed job: whether the kernel reset the GPU or ring since this ring was opened and
    // whether this ring's context caused it ("" when no reset is reported). A ring whose context
    // was reset takes no more work: the caller opens a new one.
    virtual std::string resetState() { return ""; }
    // Where the ring's CP is, when the device can tell (the simulated driver: also inside an IB
    // and why it faulted, as it stood at its last reset); hardware gives nothing.
    virtual std::optional<QueueState> queueState() const { return std::nullopt; }
    // How long the kernel lets one job run before it resets the ring (amdgpu's lockup_timeout
    // for compute rings); 0: no limit. The tier keeps each job well inside it.
    virtual uint32_t jobTimeoutMs() const { return 0; }
};

}  // namespace zinc::kfd
