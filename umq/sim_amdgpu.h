#pragma once
// The simulated amdgpu kernel driver: a render node whose ioctls are answered in software over
// the simulated GPU of kfd/ (SimMemory, pm4::Executor on a SimQueue CP thread, SimDispatcher on
// PoCL). It sits behind the DrmSyscalls seam, so umq/drm_device.cpp — the code that runs on a
// real render node — is what CI runs, ioctl for ioctl. Each ioctl's arguments are checked the
// way amdgpu checks them (sizes, alignments, handles, VA ranges); a refusal sets errno and
// keeps a one-line reason in lastRefusal() for tests.
//
// What the simulator answers:
//   AMDGPU_INFO  DEV_INFO (family, CUs, VA range, userq_ip_mask = COMPUTE), HW_IP_INFO
//                (ip_discovery_version from the gfx name), VRAM_GTT, UQ_FW_AREAS, FW_VERSION
//   GEM_CREATE / GEM_MMAP / mmap / GEM_VA / GEM_CLOSE   BOs are SimMemory; GEM_VA must map a BO
//                at the address of its CPU mapping (the simulated GPU's VA is the host pointer)
//   USERQ        CREATE/FREE: a SimQueue over the caller's ring, rptr/wptr and doorbell BO
//   CTX, CS, SYNCOBJ_CREATE/DESTROY/WAIT   the kernel's compute ring: a SimQueue of its own on
//                which each job's IBs are INDIRECT_BUFFERs followed by the kernel's fence; a job
//                that faults or outlives jobTimeoutMs resets the ring (CTX QUERY_STATE2 reports it)
// Limits (refused with a reason): wptr_va must be rptr_va + 8; one doorbell page per queue.
#include <memory>
#include <string>
#include <vector>

#include "umq/drm_device.h"

namespace zinc::kernels {
class PoclRunner;
}

namespace zinc::umq {

struct SimAmdgpuOptions {
    std::string renderPath = "/dev/dri/renderD128";  // the path the simulated node answers to
    bool pocl = true;                                 // execute dispatches (ZINC_SIM_EXEC: isa or PoCL; false: queue machinery only)
    std::shared_ptr<kernels::PoclRunner> runner{};   // share one (PoCL builds its program once per runner)
    bool userQueues = true;                           // report COMPUTE in userq_ip_mask (false: as Linux < 6.16)
    // The compute MQD this kernel takes: false, the 8-byte one of Linux 6.16 (eop_va); true, the
    // 24-byte one with a context-save area (the user-queue CWSR series). Either refuses the other
    // size with EINVAL, as mes_userq_mqd_create does.
    bool cwsrMqd = false;
    // The kernel's job timeout (amdgpu's `lockup_timeout`): a CS job that has not retired this long
    // after its submission, or one whose ring faulted, is ended by a ring reset (the TDR): every
    // job pending on the ring is signalled, the submitting context is marked guilty (its later CS
    // ioctls fail with ECANCELED) and every context sees the reset in CTX QUERY_STATE2.
    uint32_t jobTimeoutMs = 10000;
};

class SimAmdgpu : public DrmSyscalls {
public:
    ~SimAmdgpu() override = default;
    virtual const std::string& gfxName() const = 0;
    // Every ioctl answered, by name, in order ("GEM_CREATE", "USERQ CREATE", "CS", ...).
    virtual std::vector<std::string> log() const = 0;
    // Why the last refused ioctl was refused ("" if none was).
    virtual std::string lastRefusal() const = 0;
};

// A simulated amdgpu driver for `gfxName` (gfx1100, gfx1201, ...).
kfd::Result<std::shared_ptr<SimAmdgpu>> makeSimAmdgpu(std::string_view gfxName, const SimAmdgpuOptions& options = {});

// The simulated render node opened through drm_device.cpp; the driver stays alive with it.
kfd::Result<std::shared_ptr<DrmDevice>> openSimulatedDrmDevice(std::string_view gfxName, const SimAmdgpuOptions& options = {});

}  // namespace zinc::umq
