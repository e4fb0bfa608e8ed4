#include "kfd/sim/sim_dispatch.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <iterator>
#include <vector>

#include "kernels/pocl_runner.h"
#include "kfd/sim/isa/launch.h"
#include "kfd/device/hex.h"

namespace zinc::kfd {
namespace {

pm4::DispatchResult refuse(std::string why) { return pm4::DispatchResult{false, std::move(why)}; }

class SimIsaMemory final : public isa::IsaMemory {
public:
    explicit SimIsaMemory(const SimMemory& memory) : memory_(memory) {}
    bool region(uint64_t address, uint64_t& lo, uint64_t& hi) override { return memory_.region(address, lo, hi); }

private:
    const SimMemory& memory_;
};

}  // namespace

std::string_view simExecName(SimExec exec) { return exec == SimExec::Isa ? "isa" : "pocl"; }

SimExec simExecFromEnvironment() {
    const char* value = std::getenv("ZINC_SIM_EXEC");
    if (!value || !*value || std::string_view(value) == "isa") return SimExec::Isa;
    if (std::string_view(value) == "pocl") return SimExec::Pocl;
    throw std::runtime_error(std::string("ZINC_SIM_EXEC is \"") + value + "\"; it must be isa or pocl");
}


pm4::DispatchResult SimDispatcher::runIsa(const SimKernel& kernel, const pm4::DispatchInfo& info) {
    std::shared_ptr<const isa::Program> program;
    uint64_t seed = 0;
    {
        std::lock_guard lock(mutex_);
        auto& slot = programs_[kernel.object.get()];
        if (!slot) {
            try {
                slot = isa::decodeProgram(*kernel.object);
            } catch (const std::exception& e) {
                return refuse("kernel " + kernel.info->name + ": decoding " + kernel.object->origin() + " failed: " + e.what());
            }
        }
        program = slot;
        seed = ++dispatches_;
    }
    SimIsaMemory memory(memory_);
    isa::LaunchRequest r;
    r.program = program.get();
    r.kernel = kernel.info;
    r.loadBase = kernel.entryAddress - kernel.info->entryAddress;
    r.userData = info.userData;
    r.userSgprCount = info.userSgprCount;
    r.groups = info.groups;
    r.groupSize = info.groupSize;
    r.ldsBytes = info.ldsBytes;
    r.scratchBase = info.scratchBase;
    r.memory = &memory;
    r.seed = seed;
    isa::WrittenRanges written;
    r.written = &written;
    std::lock_guard cache(cacheMutex_);
    r.stale = &stale_;
    try {
        isa::launch(r);
    } catch (const std::exception& e) {
        return refuse(e.what());
    }
    stale_.wrote(std::move(written));  // stale to later dispatches until an invalidate
    return {};
}

void SimDispatcher::cpWrote(uint64_t address, uint64_t bytes) {
    std::lock_guard cache(cacheMutex_);
    stale_.wrote(address, address + bytes);
}

void SimDispatcher::invalidate(const pm4::CacheInvalidate& what) {
    std::lock_guard cache(cacheMutex_);
    stale_.invalidate(what.vector, what.scalar);
}

void SimDispatcher::add(const SimKernel& kernel) {
    std::lock_guard lock(mutex_);
    byEntry_[kernel.entryAddress] = kernel;
}

void SimDispatcher::removeRange(uint64_t base, uint64_t bytes) {
    std::lock_guard lock(mutex_);
    for (auto it = byEntry_.lower_bound(base); it != byEntry_.end() && it->first < base + bytes;) it = byEntry_.erase(it);
    // A decoded program lives as long as a kernel of its code object is loaded.
    for (auto it = programs_.begin(); it != programs_.end();) {
        bool used = false;
        for (const auto& [entry, k] : byEntry_) used |= k.object.get() == it->first;
        it = used ? std::next(it) : programs_.erase(it);
    }
}

size_t SimDispatcher::kernelCount() const {
    std::lock_guard lock(mutex_);
    return byEntry_.size();
}

std::string SimDispatcher::loadedList(uint64_t address) const {
    if (byEntry_.empty()) return "no code object is loaded";
    std::string text = std::to_string(byEntry_.size()) + " kernel entries loaded; nearest:";
    const auto above = byEntry_.lower_bound(address);
    if (above != byEntry_.begin()) {
        const auto below = std::prev(above);
        text += " " + below->second.info->name + "@" + hex(below->first) + " (" + hex(address - below->first) + " below)";
    }
    if (above != byEntry_.end()) text += " " + above->second.info->name + "@" + hex(above->first) + " (" + hex(above->first - address) + " above)";
    return text;
}

pm4::DispatchResult SimDispatcher::dispatch(const pm4::DispatchInfo& info) {
    SimKernel kernel;
    {
        std::lock_guard lock(mutex_);
        const auto it = byEntry_.find(info.programAddress);
        if (it == byEntry_.end())
            return refuse("COMPUTE_PGM_LO/HI point at " + hex(info.programAddress) + ", which is no kernel entry (" + loadedList(info.programAddress) + ")");
        kernel = it->second;
    }
    const kernels::KernelInfo& k = *kernel.info;
    const kernels::KernelDescriptor& kd = k.descriptor;
    const std::string name = "kernel " + k.name;
    if (info.wave32 != kd.wave32())
        return refuse(name + " was compiled for wave" + (kd.wave32() ? "32" : "64") + " but DISPATCH_INITIATOR.CS_W32_EN is " + (info.wave32 ? "1" : "0"));
    // The CP loads RSRC2.USER_SGPR dwords of COMPUTE_USER_DATA; the kernel expects exactly the
    // count its descriptor says (LLVM AMDGPUUsage: "must match compute_pgm_rsrc2.user_sgpr_count").
    if (info.userSgprCount != kd.userSgprCount())
        return refuse(name + " expects " + std::to_string(kd.userSgprCount()) + " user SGPRs (its descriptor's RSRC2) but COMPUTE_PGM_RSRC2.USER_SGPR is " + std::to_string(info.userSgprCount));
    if (!kd.kernargPtrEnabled() && k.kernargSegmentSize != 0)
        return refuse(name + " has a kernarg segment but its descriptor does not enable the kernarg pointer SGPR");
    // LDS is allocated from RSRC2.LDS_SIZE, which the dispatcher must set: the descriptor leaves
    // it 0 (TOOLCHAIN.md; LLVM AMDGPUUsage GRANULATED_LDS_SIZE). Too little would fault on hardware.
    if (info.ldsBytes < k.groupSegmentFixedSize)
        return refuse(name + " uses " + std::to_string(k.groupSegmentFixedSize) + " bytes of LDS but RSRC2.LDS_SIZE grants " + std::to_string(info.ldsBytes));
    if (info.threadDimensions) return refuse(name + ": USE_THREAD_DIMENSIONS dispatches are not simulated");
    if (info.start[0] || info.start[1] || info.start[2])
        return refuse(name + ": dispatches not starting at workgroup (0,0,0) are not simulated");
    const auto& req = k.reqdWorkgroupSize;
    if (req[0] && (info.groupSize[0] != req[0] || info.groupSize[1] != req[1] || info.groupSize[2] != req[2]))
        return refuse(name + " requires a " + std::to_string(req[0]) + "x" + std::to_string(req[1]) + "x" + std::to_string(req[2]) +
                      " workgroup but COMPUTE_NUM_THREAD_X/Y/Z say " + std::to_string(info.groupSize[0]) + "x" +
                      std::to_string(info.groupSize[1]) + "x" + std::to_string(info.groupSize[2]));
    if (info.groupSize[0] == 0 || info.groupSize[1] == 0 || info.groupSize[2] == 0)
        return refuse(name + ": COMPUTE_NUM_THREAD_X/Y/Z has a zero dimension");

    std::vector<uint8_t> kernarg(k.kernargSegmentSize);
    uint64_t kernargAddress = 0;
    if (kd.kernargPtrEnabled()) {
        const uint32_t sgpr = kd.kernargPtrSgpr();
        if (sgpr + 1 >= info.userSgprCount) return refuse(name + ": the kernarg pointer SGPR s" + std::to_string(sgpr) + " is past the user SGPRs loaded");
        kernargAddress = uint64_t(info.userData[sgpr]) | uint64_t(info.userData[sgpr + 1]) << 32;
        std::string injected;
        if (faults_)
            if (const std::optional<uint64_t> bad = faults_->faultKernarg(kernargAddress, memory_)) {
                injected = " (injected page fault: the kernarg pointer " + hex(kernargAddress) + " replaced)";
                kernargAddress = *bad;
            }
        if (!kernarg.empty() && !memory_.readBytes(kernargAddress, kernarg))
            return refuse(name + ": kernarg segment of " + std::to_string(kernarg.size()) + " bytes at COMPUTE_USER_DATA_" +
                          std::to_string(sgpr) + "/" + std::to_string(sgpr + 1) + " = " + memory_.describeAddress(kernargAddress) + " is not mapped" + injected);
    }
    if (exec_ == SimExec::Isa) return runIsa(kernel, info);
    if (!runner_) return refuse(name + ": this simulated GPU has no PoCL runner to execute kernels");
    try {
        runner_->launch(k, kernarg, kernels::Dim3{info.groups[0], info.groups[1], info.groups[2]},
                        kernels::Dim3{info.groupSize[0], info.groupSize[1], info.groupSize[2]});
    } catch (const std::exception& e) {
        return refuse(name + " (kernarg at " + hex(kernargAddress) + ") failed on PoCL: " + e.what());
    }
    return {};
}

}  // namespace zinc::kfd
