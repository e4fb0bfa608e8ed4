#pragma once
// kfd::Device over an amdgpu render node (/dev/dri/renderD*): the DRM doors to the command
// processor. Memory is GEM (GEM_CREATE, GEM_MMAP, GEM_VA at the address of the CPU mapping, so
// that GPU VA == host pointer as on the KFD path), queues are amdgpu user-mode queues
// (DRM_IOCTL_AMDGPU_USERQ: ring, rptr/wptr, EOP and a DOORBELL-domain BO, written by us, rung
// by us), and openKernelRing() gives the CS ioctl route (context, BO list, IB chunks, syncobj).
//
// Every system call goes through DrmSyscalls: the real ones, or the simulated amdgpu driver of
// umq/sim_amdgpu.h, which answers the same ioctls (and checks their arguments as the kernel
// does) over the simulated GPU. Everything above that seam is the same code on both.
//
// Events: a user queue has no KFD events. An event here is a mailbox word in GTT; the GPU's
// RELEASE_MEM writes it (the PM4 stream is the KFD path's, interrupt bit included) and the host
// polls it, sleeping between reads; waits are bounded and report every queue's state.
#include <memory>
#include <string>
#include <string_view>

#include "kfd/device/device.h"
#include "kfd/device/syscalls.h"

namespace zinc::umq {

// kfd::Syscalls plus the two things only a simulated GPU needs to be told: hardware sees the
// doorbell store on the bus and runs whatever ISA sits at COMPUTE_PGM_LO/HI.
class DrmSyscalls : public kfd::Syscalls {
public:
    virtual void doorbellWritten(const volatile uint64_t* /*doorbell*/) {}
    virtual void codeObjectLoaded(const kfd::LoadedCodeObject& /*loaded*/) {}
    virtual void codeObjectUnloaded(const kfd::LoadedCodeObject& /*loaded*/) {}
    // Tests: a fault for the simulated GPU to make (kfd::Device::injectFault); hardware refuses.
    virtual kfd::Status injectFault(const kfd::InjectedFault&) {
        return kfd::plainError("inject fault", "faults are injected only on the simulated amdgpu driver");
    }
    // The simulated GPU also knows what the hardware does not show through these ioctls: where
    // its CP is in an IB and why a queue faulted. Adds it to `state` of the user queue whose
    // doorbell this is (null doorbell: the kernel ring, as it stood at its last reset if it was
    // reset since). Hardware adds nothing.
    virtual void addSimulatorState(const volatile uint64_t* /*doorbell*/, kfd::QueueState& /*state*/) {}
    // The kernel's job timeout for compute rings in ms (0: none): the host reads amdgpu's
    // lockup_timeout parameter (computeJobTimeoutMs below), the simulated driver says its own.
    virtual uint32_t computeJobTimeoutMs();
};
DrmSyscalls& hostDrmSyscalls();

// amdgpu's compute job timeout from its lockup_timeout module parameter
// (/sys/module/amdgpu/parameters/lockup_timeout): "[Non-Compute]" or "[GFX,Compute,SDMA,Video]"
// in ms, 0 keeps the default, a negative value is no timeout (Linux commit 71cc9ef). One value
// sets only the non-compute rings on bare metal, so compute keeps its default: 10 s since commit
// ec8fbb4 ("make compute timeouts consistent"; 60 s before it, so 10 s is the safe reading).
// Returns 0 for no timeout.
uint32_t computeJobTimeoutMs(std::string_view lockupTimeout);
inline constexpr uint32_t kDefaultComputeJobTimeoutMs = 10000;

struct DrmOptions {
    std::string renderPath = "/dev/dri/renderD128";
    std::string sysfsDrm = "/sys/class/drm";  // ip_discovery, when HW_IP_INFO has no IP version
    std::string label;                        // prefix of name(): "simulated " for the simulated driver
    DrmSyscalls* syscalls = nullptr;          // null: the real ones
};

// What the render node reports that the doors need (AMDGPU_INFO through the seam).
struct DrmFacts {
    uint32_t family = 0;
    uint32_t userqIpMask = 0;  // 1 << AMDGPU_HW_IP_*; 0 before Linux 6.16 or with user queues off
    uint64_t vaStart = 0, vaEnd = 0;
    uint32_t eopBytes = 2048;  // AMDGPU_INFO_UQ_FW_AREAS compute eop_size
    // The compute MQD the kernel took at the first USERQ CREATE: 24 bytes (eop_va and a
    // context-save area, kernels with the user-queue CWSR series) or 8 (eop_va only); 0 before.
    uint32_t mqdBytes = 0;
};
// "24-byte compute MQD (EOP + a 0x2c02000-byte context-save area)", "8-byte ... (EOP only: ...)".
std::string describeMqd(const DrmFacts& facts, uint64_t ctxSaveBytes);

class DrmDevice : public kfd::Device {
public:
    virtual const DrmFacts& facts() const = 0;
    virtual const std::string& renderPath() const = 0;
    // "" when compute user queues can be created here; else why not (one line).
    virtual std::string userQueueRefusal() const = 0;
};

// Opens the render node, queries it (DEV_INFO, HW_IP_INFO for the gfx target, UQ_FW_AREAS) and
// fills caps. Fails with a one-line reason for a node that is not amdgpu or not RDNA3/RDNA4.
kfd::Result<std::unique_ptr<DrmDevice>> openDrmDevice(const DrmOptions& options);

}  // namespace zinc::umq
