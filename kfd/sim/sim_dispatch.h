#pragma once
// DISPATCH_DIRECT on the simulated GPU: COMPUTE_PGM_LO/HI names a kernel entry in a code object
// loaded into simulated memory; the kernarg segment pointer is read from the COMPUTE_USER_DATA
// registers the kernel descriptor enables (the SGPR order of LLVM AMDGPUUsage "SGPR Register Set
// Up Order", FACTS.md §4). Then, by SimExec: Isa runs the kernel's gfx1100/gfx1201 machine code
// in the wave32 interpreter (kfd/sim/isa/) with the registers the CP programmed; Pocl decodes the
// kernarg bytes by the code object's metadata and runs the kernel's OpenCL C source on PoCL over
// the DISPATCH_DIRECT grid and the COMPUTE_NUM_THREAD workgroup. Whatever the real CP or the shader would trip over is refused with a reason, which
// the executor turns into a fault that stops the queue.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "kernels/code_object.h"
#include "kfd/sim/isa/stale_memory.h"
#include "kfd/sim/sim_faults.h"
#include "kfd/sim/sim_memory.h"
#include "pm4/executor.h"

namespace zinc::kernels {
class PoclRunner;
}

namespace zinc::kfd {

namespace isa {
struct Program;
}

// How the simulated GPU executes a dispatch: the machine code (Isa) or the OpenCL C source (Pocl).
enum class SimExec : uint8_t { Isa, Pocl };
std::string_view simExecName(SimExec exec);  // "isa", "pocl"
// ZINC_SIM_EXEC=isa|pocl (what `--sim-exec` sets); isa when unset. Throws on another value.
SimExec simExecFromEnvironment();

struct SimKernel {
    std::shared_ptr<const kernels::CodeObject> object;
    const kernels::KernelInfo* info = nullptr;  // inside *object
    uint64_t descriptorAddress = 0;             // NAME.kd in simulated memory
    uint64_t entryAddress = 0;                  // what COMPUTE_PGM_LO/HI point at (<< 8)
};

class SimDispatcher final : public pm4::DispatchHandler {
public:
    // `runner` may be null: every Pocl dispatch then fails with "no PoCL runner".
    // `faults`: where an armed page fault comes from (null: none).
    SimDispatcher(SimMemory& memory, kernels::PoclRunner* runner, SimExec exec = SimExec::Pocl, SimFaults* faults = nullptr)
        : memory_(memory), runner_(runner), exec_(exec), faults_(faults) {}

    void add(const SimKernel& kernel);
    // Forgets every kernel whose entry lies in [base, base + bytes) (the image was freed).
    void removeRange(uint64_t base, uint64_t bytes);
    size_t kernelCount() const;

    pm4::DispatchResult dispatch(const pm4::DispatchInfo& info) override;
    // The caches (isa/stale_memory.h): modelled when the machine code runs; PoCL reads memory directly.
    void cpWrote(uint64_t address, uint64_t bytes) override;
    void invalidate(const pm4::CacheInvalidate& what) override;

    SimExec exec() const { return exec_; }

private:
    std::string loadedList(uint64_t address) const;  // caller holds mutex_
    pm4::DispatchResult runIsa(const SimKernel& kernel, const pm4::DispatchInfo& info);

    SimMemory& memory_;
    kernels::PoclRunner* runner_;
    SimExec exec_;
    SimFaults* faults_;
    uint64_t dispatches_ = 0;  // seeds each dispatch's workgroup order
    std::map<const kernels::CodeObject*, std::shared_ptr<const isa::Program>> programs_;  // decoded once per object
    mutable std::mutex mutex_;
    std::map<uint64_t, SimKernel> byEntry_;
    std::mutex cacheMutex_;  // held while a dispatch runs on the ISA, and by the CP's notes
    isa::StaleMemory stale_;
};

}  // namespace zinc::kfd
