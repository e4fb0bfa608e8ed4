// The dispatch rungs on the simulated GPU: a code object loaded into GPU memory, a launch written
// as PM4 (program address, resources, kernarg pointer in the user SGPRs the descriptor enables),
// and the kernel's source run on PoCL with the grid DISPATCH_DIRECT names. Then the dispatches a
// real GPU would fault on, which must stop the queue with a reason.
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "kernels/code_object.h"
#include "kernels/embedded.h"
#include "kernels/kernel_args.h"
#include "kernels/pocl_runner.h"
#include "kfd/device/dispatch_packets.h"
#include "kfd/device/ladder.h"
#include "tests/kfd/sim_test_support.h"

namespace zinc::kfd {
namespace {
using namespace zinc::kfd::testing;

// KfdSim with PoCL and the embedded code object of the target loaded into GPU memory.
class KfdSimDispatch : public KfdSim {
protected:
    void SetUp() override {
        openWithPocl();
        const std::string gfx = GetParam();
        auto object = std::make_shared<kernels::CodeObject>(
            kernels::CodeObject::parse(kernels::embeddedCodeObject(gfx), "embedded " + gfx));
        Result<LoadedCodeObject> loaded = device->loadCodeObject(object);
        ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
        code = *loaded;
    }
    void TearDown() override {
        if (device && code.object) {
            EXPECT_TRUE(device->unloadCodeObject(code).ok());
        }
        KfdSim::TearDown();
    }
    // A kernarg segment in GPU memory holding `args`.
    template <class Args> Memory kernarg(const Args& args) {
        Memory m = alloc(4096);
        std::memcpy(m.cpuPtr, &args, sizeof args);
        return m;
    }

    LoadedCodeObject code;
};

TEST_P(KfdSim, TrivialDispatch) {
    openWithPocl();
    const std::string target = GetParam();
    auto object = std::make_shared<kernels::CodeObject>(
        kernels::CodeObject::parse(kernels::embeddedCodeObject(target), "embedded " + target));
    Result<LoadedCodeObject> code = device->loadCodeObject(object);
    ASSERT_TRUE(code.ok()) << code.error().describe();
    // out = a + b over 1000 floats: 4 workgroups of 256 (add's reqd_work_group_size).
    constexpr int32_t n = 1000;
    Memory a = alloc(n * 4), b = alloc(n * 4), out = alloc(n * 4), args = alloc(4096);
    for (int32_t i = 0; i < n; ++i) {
        a.as<float>()[i] = float(i);
        b.as<float>()[i] = 0.5f * float(i) + 1.0f;
        out.as<float>()[i] = -1.0f;
    }
    const kernels::AddArgs addArgs{a.gpuVa, b.gpuVa, out.gpuVa, n, n};
    std::memcpy(args.cpuPtr, &addArgs, sizeof addArgs);
    Result<LoadedKernel> add = code->kernel("add");
    ASSERT_TRUE(add.ok()) << add.error().describe();
    EXPECT_EQ(add->entryAddress % 256, 0u);

    Packets p(gfx());
    Status launch = emitLaunch(p.stream(), *add, {.kernargAddress = args.gpuVa, .groups = {(n + 255) / 256, 1, 1}});
    ASSERT_TRUE(launch.ok()) << launch.error().describe();
    submitAndWait(p, 120000);  // the first launch builds the program on PoCL
    for (int32_t i = 0; i < n; ++i) ASSERT_EQ(out.as<float>()[i], 1.5f * float(i) + 1.0f) << "element " << i;
    EXPECT_TRUE(device->unloadCodeObject(*code).ok());
}

TEST_P(KfdSimDispatch, DispatchIndirectReadsGroupsFromMemory) {
    // The group count comes from GPU memory, written by an earlier packet (as the MoE router's
    // output would be): WRITE_DATA 2 groups, then DISPATCH_INDIRECT of add over 512 floats.
    constexpr int32_t n = 512;
    Memory data = alloc(3 * n * 4), groups = alloc(4096);
    float* f = data.as<float>();
    for (int32_t i = 0; i < n; ++i) f[i] = float(i), f[n + i] = 1.0f, f[2 * n + i] = 0.0f;
    Memory args = kernarg(kernels::AddArgs{data.gpuVa, data.gpuAddress(n * 4), data.gpuAddress(2 * n * 4), n, n});
    Result<LoadedKernel> add = code.kernel("add");
    ASSERT_TRUE(add.ok());
    Packets p(gfx());
    p->writeData({.address = groups.gpuVa}, {n / 256, 1, 1});
    ASSERT_TRUE(emitLaunch(p.stream(), *add, {.kernargAddress = args.gpuVa, .indirectGroupsAddress = groups.gpuVa}).ok());
    submitAndWait(p, 120000);
    for (int32_t i = 0; i < n; ++i) ASSERT_EQ(f[2 * n + i], float(i) + 1.0f) << "element " << i;
}

TEST_P(KfdSimDispatch, RunsARecordedIndirectBuffer) {
    // The PM4 tier's shape (DESIGN.md): a launch recorded once into an IB in GPU memory; the ring
    // gets INDIRECT_BUFFER + RELEASE_MEM per token. Run it twice with a patched kernarg in between.
    constexpr int32_t n = 256;
    Memory data = alloc(3 * n * 4), ib = alloc(4096);
    float* f = data.as<float>();
    for (int32_t i = 0; i < n; ++i) f[i] = float(i), f[n + i] = 1.0f;
    Memory args = kernarg(kernels::AddArgs{data.gpuVa, data.gpuAddress(n * 4), data.gpuAddress(2 * n * 4), n, n});
    Result<LoadedKernel> add = code.kernel("add");
    ASSERT_TRUE(add.ok());
    pm4::Stream recorded(std::span<uint32_t>(ib.as<uint32_t>(), 1024), gfx());
    ASSERT_TRUE(emitLaunch(recorded, *add, {.kernargAddress = args.gpuVa}).ok());
    for (float second : {1.0f, 10.0f}) {
        for (int32_t i = 0; i < n; ++i) f[n + i] = second;
        Packets p(gfx());
        p->indirectBuffer(ib.gpuVa, recorded.size());
        submitAndWait(p, 120000);
        for (int32_t i = 0; i < n; ++i) ASSERT_EQ(f[2 * n + i], float(i) + second) << "element " << i;
    }
}

TEST_P(KfdSimDispatch, FaultInsideAnIndirectBufferNamesIt) {
    Memory ib = alloc(4096);
    pm4::Stream recorded(std::span<uint32_t>(ib.as<uint32_t>(), 1024), gfx());
    recorded.nop(3).writeData({.address = 0x20}, {1});  // unmapped destination at IB dword 3
    Packets p(gfx());
    p->indirectBuffer(ib.gpuVa, recorded.size());
    p->releaseMem(signalEvent(event));
    ASSERT_TRUE(writer->submit(p.dwords()).ok());
    Status s = device->waitEvents({&event, 1}, 10000);
    ASSERT_FALSE(s.ok());
    const QueueState state = device->readQueueState(queue);
    ASSERT_TRUE(state.fault.has_value());
    EXPECT_EQ(state.fault->dwordOffset, 0u);  // the ring's INDIRECT_BUFFER packet
    EXPECT_EQ(state.fault->packet, "WRITE_DATA");
    char where[80];
    std::snprintf(where, sizeof where, "(dword 3 of the IB at 0x%llx", static_cast<unsigned long long>(ib.gpuVa));
    EXPECT_NE(state.fault->reason.find(where), std::string::npos) << state.describe();
}

TEST_P(KfdSimDispatch, UnknownProgramFaults) {
    Result<LoadedKernel> add = code.kernel("add");
    ASSERT_TRUE(add.ok());
    LoadedKernel wrong = *add;
    wrong.entryAddress = code.image.gpuVa;  // the ELF header: loaded, but no kernel starts there
    Memory args = kernarg(kernels::AddArgs{});
    Packets p(gfx());
    ASSERT_TRUE(emitLaunch(p.stream(), wrong, {.kernargAddress = args.gpuVa}).ok());
    p->releaseMem(signalEvent(event));
    ASSERT_TRUE(writer->submit(p.dwords()).ok());
    Status s = device->waitEvents({&event, 1}, 10000);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().errnum, EFAULT);
    const QueueState state = device->readQueueState(queue);
    ASSERT_TRUE(state.fault.has_value());
    EXPECT_EQ(state.fault->packet, "DISPATCH_DIRECT");
    EXPECT_NE(state.fault->reason.find("no kernel entry"), std::string::npos) << state.describe();
    EXPECT_NE(state.fault->reason.find("kernel entries loaded; nearest: "), std::string::npos) << state.describe();
}

TEST_P(KfdSimDispatch, UnmappedKernargFaults) {
    Result<LoadedKernel> add = code.kernel("add");
    ASSERT_TRUE(add.ok());
    Packets p(gfx());
    ASSERT_TRUE(emitLaunch(p.stream(), *add, {.kernargAddress = 0x1000}).ok());
    p->releaseMem(signalEvent(event));
    ASSERT_TRUE(writer->submit(p.dwords()).ok());
    Status s = device->waitEvents({&event, 1}, 10000);
    ASSERT_FALSE(s.ok());
    const QueueState state = device->readQueueState(queue);
    ASSERT_TRUE(state.fault.has_value());
    EXPECT_NE(state.fault->reason.find("kernarg segment"), std::string::npos) << state.describe();
    EXPECT_NE(state.fault->reason.find("0x1000 (unmapped)"), std::string::npos) << state.describe();
}

TEST_P(KfdSimDispatch, MissingLdsFaults) {
    // A kernel with static LDS, launched with RSRC2.LDS_SIZE left at the descriptor's 0: the
    // dispatcher must add the LDS itself (TOOLCHAIN.md), and the simulator refuses the launch.
    const kernels::KernelInfo* withLds = nullptr;
    for (const kernels::KernelInfo& k : code.object->kernels())
        if (k.groupSegmentFixedSize > 0 && k.reqdWorkgroupSize[0] != 0) withLds = &k;
    ASSERT_NE(withLds, nullptr) << "no kernel with LDS in the code object";
    Result<LoadedKernel> kernel = code.kernel(withLds->name);
    ASSERT_TRUE(kernel.ok());
    Memory args = kernarg(kernels::AddArgs{});
    Packets p(gfx());
    ASSERT_TRUE(emitLaunch(p.stream(), *kernel, {.kernargAddress = args.gpuVa}).ok());
    // Patch LDS_SIZE back to 0 in the RSRC1/RSRC2 SET_SH_REG (the second packet: 4 + 3 dwords in).
    std::vector<uint32_t> dwords(p.dwords().begin(), p.dwords().end());
    dwords[4 + 3] = pm4::gfx11::COMPUTE_PGM_RSRC2.field("LDS_SIZE").set(dwords[4 + 3], 0);
    Packets signal(gfx());
    signal->releaseMem(signalEvent(event));
    dwords.insert(dwords.end(), signal.dwords().begin(), signal.dwords().end());
    ASSERT_TRUE(writer->submit(dwords).ok());
    Status s = device->waitEvents({&event, 1}, 10000);
    ASSERT_FALSE(s.ok());
    const QueueState state = device->readQueueState(queue);
    ASSERT_TRUE(state.fault.has_value());
    EXPECT_NE(state.fault->reason.find("bytes of LDS but RSRC2.LDS_SIZE grants 0"), std::string::npos) << state.describe();
}

TEST_P(KfdSim, LadderPassesEveryRung) {
    // What `zinc-rt probe --sim` climbs, on a fresh device of this target.
    Result<std::unique_ptr<Device>> fresh = openSimulatedDevice(GetParam(), {.runner = sharedRunner()});
    ASSERT_TRUE(fresh.ok()) << fresh.error().describe();
    const std::vector<Rung> rungs = climbLadder(**fresh);
    ASSERT_EQ(rungs.size(), 9u);
    for (const Rung& r : rungs) EXPECT_TRUE(r.ok && !r.skipped) << formatLadder(rungs);
    EXPECT_EQ(rungs.back().name, "trivial dispatch");
}

TEST_P(KfdSim, LadderStopsAtTheFirstFailedRung) {
    // Without PoCL the dispatch rung fails with its reason; everything before it passes.
    const std::vector<Rung> rungs = climbLadder(*device, {.timeoutMs = 2000});
    ASSERT_EQ(rungs.size(), 9u);
    for (size_t i = 0; i + 1 < rungs.size(); ++i) EXPECT_TRUE(rungs[i].ok) << formatLadder(rungs);
    EXPECT_FALSE(rungs.back().ok);
    EXPECT_NE(rungs.back().detail.find("no PoCL runner"), std::string::npos) << formatLadder(rungs);
    EXPECT_NE(rungs.back().detail.find("DISPATCH_DIRECT"), std::string::npos) << formatLadder(rungs);
}

INSTANTIATE_TEST_SUITE_P(, KfdSimDispatch, ::testing::Values("gfx1100", "gfx1201"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
}  // namespace zinc::kfd
