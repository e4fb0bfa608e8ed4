#include "kfd/device/dispatch_packets.h"

#include "kernels/code_object.h"

namespace zinc::kfd {

Status emitLaunch(pm4::Stream& stream, const LoadedKernel& kernel, const Launch& launch) {
    namespace r = pm4::gfx11;  // the COMPUTE_* addresses and these fields are the same on gfx12
    const kernels::KernelInfo& k = *kernel.info;
    const kernels::KernelDescriptor& kd = k.descriptor;
    const std::string name = "launch " + k.name;
    const uint32_t userSgprs = kd.userSgprCount();
    constexpr uint16_t kOnlyKernarg = kernels::kd::kEnableKernargSegmentPtr | kernels::kd::kEnableWavefrontSize32;
    if (kd.kernelCodeProperties & ~kOnlyKernarg & 0x7F)
        return plainError(name, "the descriptor enables user SGPRs other than the kernarg pointer (kernel_code_properties " +
                                    std::to_string(kd.kernelCodeProperties) + "); only the kernarg pointer is set up");
    if (kd.scratchEnabled() || k.privateSegmentFixedSize) return plainError(name, "the kernel needs scratch, which this launcher does not set up");
    if (userSgprs > 16) return plainError(name, "RSRC2 asks for more than 16 user SGPRs");
    std::array<uint32_t, 3> size = launch.groupSize;
    if (size[0] == 0) size = k.reqdWorkgroupSize;
    if (size[0] == 0) return plainError(name, "no workgroup size given and the kernel does not fix one");
    const auto& req = k.reqdWorkgroupSize;
    if (req[0] && size != req)
        return plainError(name, "workgroup " + std::to_string(size[0]) + "x" + std::to_string(size[1]) + "x" + std::to_string(size[2]) +
                                    " differs from the kernel's reqd_work_group_size");
    if (kernel.entryAddress % 256) return plainError(name, "entry address is not 256-byte aligned");
    if (launch.indirectGroupsAddress % 4) return plainError(name, "DISPATCH_INDIRECT group counts must be 4-byte aligned");

    // User SGPRs: zeros except the kernarg pointer at the position the descriptor's enable bits
    // give it (LLVM AMDGPUUsage "SGPR Register Set Up Order"; FACTS.md §4).
    std::array<uint32_t, 16> user{};
    if (kd.kernargPtrEnabled()) {
        const uint32_t at = kd.kernargPtrSgpr();
        user[at] = uint32_t(launch.kernargAddress);
        user[at + 1] = uint32_t(launch.kernargAddress >> 32);
    }
    // RSRC2 from the descriptor, plus LDS_SIZE, which the descriptor leaves 0 for the CP to fill
    // (512-byte granules on gfx11/gfx12; TOOLCHAIN.md, LLVM AMDGPUUsage).
    const uint32_t rsrc2 = r::COMPUTE_PGM_RSRC2.field("LDS_SIZE").set(kd.computePgmRsrc2, k.ldsGranules());

    // Room is checked, not reserved: a reservation would narrow the window for the packets the
    // caller appends after the launch (pm4::Stream keeps the last window).
    if (stream.capacity() - stream.size() < kLaunchDwords)
        return plainError(name, "the stream has " + std::to_string(stream.capacity() - stream.size()) + " dwords left, a launch takes up to " +
                                    std::to_string(kLaunchDwords));
    stream.setShReg(r::COMPUTE_PGM_LO, {uint32_t(kernel.entryAddress >> 8), uint32_t(kernel.entryAddress >> 40)});
    stream.setShReg(r::COMPUTE_PGM_RSRC1, {kd.computePgmRsrc1, rsrc2});
    stream.setShReg(r::COMPUTE_PGM_RSRC3, kd.computePgmRsrc3);
    if (userSgprs) stream.setShReg(r::COMPUTE_USER_DATA_0, std::span<const uint32_t>(user.data(), userSgprs));
    stream.setShReg(r::COMPUTE_NUM_THREAD_X, {size[0], size[1], size[2]});
    const uint32_t initiator = pm4::dispatchInitiator(stream.gfx(), kd.wave32());
    if (launch.indirectGroupsAddress) stream.dispatchIndirect(launch.indirectGroupsAddress, initiator);
    else stream.dispatchDirect(launch.groups[0], launch.groups[1], launch.groups[2], initiator);
    return {};
}

}  // namespace zinc::kfd
