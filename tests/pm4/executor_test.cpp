// The simulated command processor, climbing the probe ladder: copies, fences and timestamps,
// waits released by the CPU or given up with the queue state, nested IBs, dispatch, and faults
// that name the packet and its dword offset.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <random>
#include <thread>

#include "tests/pm4/pm4_test_support.h"

namespace zinc::pm4 {
namespace {

using test::HostClock;
using test::RecordingDispatch;
using test::RecordingObserver;
using test::SteppingClock;

constexpr uint64_t kBase = 0x0000'7F00'0000'0000ull;  // the one mapped window
constexpr uint64_t kBytes = 64 * 1024;
constexpr uint64_t kUnmapped = 0xDEAD'0000ull;

class Pm4Executor : public ::testing::TestWithParam<Gfx> {
protected:
    Gfx gfx() const { return GetParam(); }
    Stream stream() { return Stream(host_, gfx()); }
    // A stream written into GPU memory at `address` (an IB).
    Stream ibAt(std::array<uint32_t, 256>& buf) { return Stream(buf, gfx()); }
    void upload(uint64_t address, const Stream& s) { ASSERT_TRUE(memory.write(address, s.dwords())); }
    Executor executor(ExecutorOptions options = {}) {
        return Executor(gfx(), memory, clock, &dispatch, &observer, options);
    }

    LinearMemory memory{kBase, kBytes};
    SteppingClock clock;
    RecordingDispatch dispatch;
    RecordingObserver observer;

private:
    std::array<uint32_t, 1024> host_{};
};

TEST_P(Pm4Executor, RetiresNops) {
    Stream s = stream();
    s.nop().nop(4).nop();
    Executor ex = executor();
    const ExecResult r = ex.execute(s.dwords());
    ASSERT_TRUE(r.ok()) << r.fault->describe();
    EXPECT_EQ(r.position, 6u);
    EXPECT_EQ(ex.stats().packets, 3u);
}

TEST_P(Pm4Executor, WriteDataThenReadBack) {
    Stream s = stream();
    s.writeData({.address = kBase + 0x100}, {0x11, 0x22, 0x33});
    s.writeData({.address = kBase + 0x200, .oneAddress = true}, {7, 8, 9});  // last one wins
    ASSERT_TRUE(executor().execute(s.dwords()).ok());
    EXPECT_EQ(memory.load(kBase + 0x100), 0x11u);
    EXPECT_EQ(memory.load(kBase + 0x108), 0x33u);
    EXPECT_EQ(memory.load(kBase + 0x200), 9u);
    EXPECT_EQ(memory.load(kBase + 0x204), 0u);
}

TEST_P(Pm4Executor, WriteDataToShRegisters) {
    Stream s = stream();
    s.writeData({.dst = WriteDst::Register, .address = gfx11::COMPUTE_USER_DATA_4.address}, {5, 6});
    Executor ex = executor();
    ASSERT_TRUE(ex.execute(s.dwords()).ok());
    EXPECT_EQ(ex.registers().get(gfx11::COMPUTE_USER_DATA_5), 6u);
}

TEST_P(Pm4Executor, CopyData) {
    memory.store(kBase + 0x10, 0xAAAA0001);
    memory.store(kBase + 0x14, 0xBBBB0002);
    Stream s = stream();
    s.copyData({.source = kBase + 0x10, .destination = kBase + 0x40})                  // mem -> mem, 32 bits
        .copyData({.source = kBase + 0x10, .destination = kBase + 0x50, .count64 = true})  // 64 bits
        .copyData({.src = CopySrc::Immediate, .source = 0x1'2345'6789ull, .destination = kBase + 0x60, .count64 = true})
        .copyData({.src = CopySrc::GpuClock, .destination = kBase + 0x70, .count64 = true})
        .setShReg(gfx11::COMPUTE_USER_DATA_0, 0x5150)
        .copyData({.src = CopySrc::Register, .source = gfx11::COMPUTE_USER_DATA_0.address, .destination = kBase + 0x80})
        .copyData({.src = CopySrc::Immediate, .dst = CopyDst::Register, .source = 77,
                   .destination = gfx11::COMPUTE_USER_DATA_1.address});
    Executor ex = executor();
    const ExecResult r = ex.execute(s.dwords());
    ASSERT_TRUE(r.ok()) << r.fault->describe();
    EXPECT_EQ(memory.load(kBase + 0x40), 0xAAAA0001u);
    EXPECT_EQ(memory.load(kBase + 0x44), 0u);
    EXPECT_EQ(memory.load64(kBase + 0x50), 0xBBBB0002'AAAA0001ull);
    EXPECT_EQ(memory.load64(kBase + 0x60), 0x1'2345'6789ull);
    EXPECT_EQ(memory.load64(kBase + 0x70), clock.gpuClock());
    EXPECT_EQ(memory.load(kBase + 0x80), 0x5150u);
    EXPECT_EQ(ex.registers().get(gfx11::COMPUTE_USER_DATA_1), 77u);
}

TEST_P(Pm4Executor, ReleaseMemWritesTheFenceAndTimestamps) {
    Stream s = stream();
    s.releaseMem({.interrupt = ReleaseInterrupt::InterruptAfterWriteConfirm, .address = kBase + 0x100, .value = 41,
                  .intCtxId = 9})
        .releaseMem({.data = ReleaseData::Value64, .address = kBase + 0x108, .value = 0x7'0000'0001ull})
        .releaseMem({.data = ReleaseData::GpuClock, .address = kBase + 0x110})
        .releaseMem({.data = ReleaseData::SystemClock, .address = kBase + 0x118})
        .releaseMem({.data = ReleaseData::None, .interrupt = ReleaseInterrupt::Interrupt, .intCtxId = 3});
    Executor ex = executor();
    ASSERT_TRUE(ex.execute(s.dwords()).ok());
    EXPECT_EQ(memory.load(kBase + 0x100), 41u);
    EXPECT_EQ(memory.load(kBase + 0x104), 0u);  // 32-bit data leaves the high dword alone
    EXPECT_EQ(memory.load64(kBase + 0x108), 0x7'0000'0001ull);
    EXPECT_EQ(memory.load64(kBase + 0x110), clock.gpuClock());
    EXPECT_EQ(memory.load64(kBase + 0x118), clock.systemClock());
    ASSERT_EQ(observer.releases.size(), 5u);
    EXPECT_EQ(observer.releases[0].intSel, 2u);
    EXPECT_EQ(observer.releases[0].intCtxId, 9u);
    EXPECT_EQ(observer.releases[0].data, 41u);
    EXPECT_EQ(observer.releases[0].eventType, gfx11::CACHE_FLUSH_AND_INV_TS_EVENT);
    EXPECT_EQ(observer.releases[2].data, clock.gpuClock());
    EXPECT_EQ(observer.releases[4].intCtxId, 3u);
    EXPECT_EQ(ex.stats().releases, 5u);
    ASSERT_TRUE(ex.lastRelease());
    EXPECT_EQ(ex.lastRelease()->intSel, 1u);
}

TEST_P(Pm4Executor, WaitRegMemIsReleasedByAnotherThread) {
    HostClock host;
    Stream s = stream();
    s.waitRegMem({.address = kBase + 0x40, .function = CompareFunc::GreaterEqual, .reference = 5})
        .writeData({.address = kBase + 0x44}, {0xD0E});
    Executor ex(gfx(), memory, host, &dispatch, &observer, {.waitTimeoutNs = 10'000'000'000ull});
    std::thread cpu([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        memory.store(kBase + 0x40, 3);  // progress, not enough
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        memory.store(kBase + 0x40, 5);
    });
    const ExecResult r = ex.execute(s.dwords());
    cpu.join();
    ASSERT_TRUE(r.ok()) << r.fault->describe();
    EXPECT_EQ(memory.load(kBase + 0x44), 0xD0Eu);  // the packet after the wait ran
    EXPECT_GT(ex.stats().polls, 2u);
}

TEST_P(Pm4Executor, WaitThatNeverPassesTimesOutWithTheQueueState) {
    memory.store(kBase + 0x40, 2);
    Stream s = stream();
    s.nop(3).waitRegMem({.address = kBase + 0x40, .function = CompareFunc::Equal, .reference = 7, .mask = 0xF});
    Executor ex = executor({.waitTimeoutNs = 50'000'000});  // the stepping clock advances 1 ms per look
    const ExecResult r = ex.execute(s.dwords());
    ASSERT_FALSE(r.ok());
    const Fault& f = *r.fault;
    EXPECT_EQ(f.kind, FaultKind::WaitTimeout);
    EXPECT_EQ(f.offset, 3u);
    EXPECT_EQ(r.position, 3u);
    EXPECT_EQ(f.packet, "WAIT_REG_MEM");
    EXPECT_EQ(f.header, 0xC0053C00u);
    for (const char* want : {"gave up after 50 ms", "memory 0x7F0000000040 = 0x00000002",
                             "(value & 0x0000000F) EQUAL 0x00000007", "polls"})
        EXPECT_NE(f.reason.find(want), std::string::npos) << want << ": " << f.reason;
    EXPECT_GT(clock.idles, 10u);
    const std::string report = f.report(gfx());
    EXPECT_NE(report.find("wait timeout at dword 3"), std::string::npos) << report;
    EXPECT_NE(report.find("FUNCTION=3 (EQUAL)"), std::string::npos) << report;
}

TEST_P(Pm4Executor, WaitIsAbandonedByTheStopFlag) {
    HostClock host;
    std::atomic<bool> stop{false};
    Stream s = stream();
    s.waitRegMem({.address = kBase + 0x40, .reference = 1});
    Executor ex(gfx(), memory, host, nullptr, nullptr, {.stop = &stop});
    std::thread cpu([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        stop.store(true);
    });
    const ExecResult r = ex.execute(s.dwords());
    cpu.join();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.fault->kind, FaultKind::Stopped);
    EXPECT_NE(r.fault->reason.find("WAIT_REG_MEM stopped"), std::string::npos) << r.fault->reason;
}

TEST_P(Pm4Executor, IndirectBuffersNest) {
    const uint64_t ib1 = kBase + 0x1000, ib2 = kBase + 0x2000;
    std::array<uint32_t, 256> b1{}, b2{};
    Stream inner = ibAt(b2);
    inner.writeData({.address = kBase + 0x20}, {2});
    upload(ib2, inner);
    Stream outer = ibAt(b1);
    outer.writeData({.address = kBase + 0x10}, {1}).indirectBuffer(ib2, inner.size()).writeData({.address = kBase + 0x30}, {3});
    upload(ib1, outer);
    Stream top = stream();
    top.indirectBuffer(ib1, outer.size()).releaseMem({.address = kBase + 0x40, .value = 4});
    Executor ex = executor();
    const ExecResult r = ex.execute(top.dwords());
    ASSERT_TRUE(r.ok()) << r.fault->describe();
    EXPECT_EQ(memory.load(kBase + 0x10), 1u);
    EXPECT_EQ(memory.load(kBase + 0x20), 2u);
    EXPECT_EQ(memory.load(kBase + 0x30), 3u);
    EXPECT_EQ(memory.load(kBase + 0x40), 4u);
    EXPECT_EQ(ex.stats().indirectBuffers, 2u);
}

// COND_EXEC: a 0 at its address skips the next EXEC_COUNT dwords (one WRITE_DATA of 5 here), a
// non-zero word runs them; a word nothing maps is a fault.
TEST_P(Pm4Executor, CondExecSkipsTheNextDwordsWhenItsWordIsZero) {
    memory.store(kBase + 0x80, 0);
    memory.store(kBase + 0x84, 1);
    Stream s = stream();
    s.condExec(kBase + 0x80, 5).writeData({.address = kBase + 0x10}, {1}).writeData({.address = kBase + 0x14}, {2});
    s.condExec(kBase + 0x84, 5).writeData({.address = kBase + 0x18}, {3});
    Executor ex = executor();
    const ExecResult r = ex.execute(s.dwords());
    ASSERT_TRUE(r.ok()) << r.fault->describe();
    EXPECT_EQ(memory.load(kBase + 0x10), 0u);
    EXPECT_EQ(memory.load(kBase + 0x14), 2u);
    EXPECT_EQ(memory.load(kBase + 0x18), 3u);
    EXPECT_EQ(ex.stats().condExecs, 2u);
    EXPECT_EQ(ex.stats().condExecSkips, 1u);
    Stream bad = stream();
    bad.condExec(kUnmapped, 5);
    const ExecResult f = executor().execute(bad.dwords());
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.fault->describe().find("COND_EXEC cannot read 0xDEAD0000: address not mapped"), std::string::npos) << f.fault->describe();
}

TEST_P(Pm4Executor, IndirectBufferDepthIsLimited) {
    // IB at depth 1 calls depth 2, which calls depth 3: one too many for the default limit.
    const uint64_t ib[3] = {kBase + 0x1000, kBase + 0x2000, kBase + 0x3000};
    std::array<uint32_t, 256> b{};
    Stream last = ibAt(b);
    last.nop();
    upload(ib[2], last);
    for (int i = 1; i >= 0; --i) {
        Stream s = ibAt(b);
        s.nop(2).indirectBuffer(ib[i + 1], i == 1 ? 1 : 6);  // 6 = NOP(2) + INDIRECT_BUFFER
        upload(ib[i], s);
    }
    Stream top = stream();
    top.indirectBuffer(ib[0], 6);
    const ExecResult r = executor().execute(top.dwords());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.fault->kind, FaultKind::IbTooDeep);
    EXPECT_EQ(r.fault->ibDepth, 2u);
    EXPECT_EQ(r.fault->offset, 2u);
    EXPECT_EQ(r.fault->streamAddress, ib[1]);
    EXPECT_EQ(r.fault->packetAddress, ib[1] + 8);
    EXPECT_EQ(r.position, 0u);  // the top-level packet that led there
}

TEST_P(Pm4Executor, ChainedIndirectBufferDoesNotReturn) {
    const uint64_t ib1 = kBase + 0x1000, ib2 = kBase + 0x2000;
    std::array<uint32_t, 256> b1{}, b2{};
    Stream second = ibAt(b2);
    second.writeData({.address = kBase + 0x20}, {2});
    upload(ib2, second);
    Stream first = ibAt(b1);
    first.indirectBuffer(ib2, second.size(), {.chain = true}).writeData({.address = kBase + 0x10}, {1});
    upload(ib1, first);
    Stream top = stream();
    top.indirectBuffer(ib1, first.size()).writeData({.address = kBase + 0x30}, {3});
    const ExecResult r = executor().execute(top.dwords());
    ASSERT_TRUE(r.ok()) << r.fault->describe();
    EXPECT_EQ(memory.load(kBase + 0x10), 0u);  // skipped: the chain replaced the rest of IB1
    EXPECT_EQ(memory.load(kBase + 0x20), 2u);
    EXPECT_EQ(memory.load(kBase + 0x30), 3u);  // back at the top level
}

TEST_P(Pm4Executor, DispatchDirectHandsOverTheRegisters) {
    const uint64_t entry = 0x0000'7F12'3456'7800ull;  // 256-byte aligned
    const bool g11 = gfx() == Gfx::Gfx11;
    const uint32_t rsrc2 = g11 ? gfx11::COMPUTE_PGM_RSRC2.field("USER_SGPR")(4) | gfx11::COMPUTE_PGM_RSRC2.field("LDS_SIZE")(2)
                               : gfx12::COMPUTE_PGM_RSRC2.field("USER_SGPR")(4) | gfx12::COMPUTE_PGM_RSRC2.field("LDS_SIZE")(2);
    Stream s = stream();
    s.setShReg(gfx11::COMPUTE_PGM_LO, {static_cast<uint32_t>(entry >> 8), static_cast<uint32_t>(entry >> 40)})
        .setShReg(gfx11::COMPUTE_PGM_RSRC1, {0x0060'0041, rsrc2})
        .setShReg(gfx11::COMPUTE_USER_DATA_0, {0xAAAA, 0xBBBB, 0xCCCC, 0xDDDD})
        .setShReg(gfx11::COMPUTE_START_X, {0, 0, 0, 64, 2, 1})
        .dispatchDirect(10, 3, 1, dispatchInitiator(gfx(), true));
    Executor ex = executor();
    const ExecResult r = ex.execute(s.dwords());
    ASSERT_TRUE(r.ok()) << r.fault->describe();
    ASSERT_EQ(dispatch.calls.size(), 1u);
    const DispatchInfo& d = dispatch.calls[0];
    EXPECT_EQ(d.programAddress, entry);
    EXPECT_EQ(d.userSgprCount, 4u);
    EXPECT_EQ(d.userData[0], 0xAAAAu);
    EXPECT_EQ(d.userData[3], 0xDDDDu);
    EXPECT_EQ(d.groups, (std::array<uint32_t, 3>{10, 3, 1}));
    EXPECT_EQ(d.groupSize, (std::array<uint32_t, 3>{64, 2, 1}));
    EXPECT_TRUE(d.wave32);
    EXPECT_FALSE(d.indirect);
    EXPECT_EQ(d.ldsBytes, 1024u);
    EXPECT_EQ(d.rsrc1, 0x00600041u);
    EXPECT_EQ(ex.registers().get(gfx11::COMPUTE_DIM_X), 10u);
}

TEST_P(Pm4Executor, DispatchWithoutForceStartBeginsAtStartRegisters) {
    Stream s = stream();
    s.setShReg(gfx11::COMPUTE_START_X, {3, 0, 0, 64, 1, 1})
        .dispatchDirect(10, 1, 1, dispatchInitiator(gfx(), false, /*forceStartAt000=*/false));
    ASSERT_TRUE(executor().execute(s.dwords()).ok());
    ASSERT_EQ(dispatch.calls.size(), 1u);
    EXPECT_EQ(dispatch.calls[0].start[0], 3u);
    EXPECT_EQ(dispatch.calls[0].groups[0], 7u);  // DIM_X is the end position
    EXPECT_FALSE(dispatch.calls[0].wave32);
}

TEST_P(Pm4Executor, DispatchIndirectReadsTheGroupCounts) {
    ASSERT_TRUE(memory.write(kBase + 0x300, std::array<uint32_t, 3>{5, 6, 7}));
    Stream s = stream();
    s.setShReg(gfx11::COMPUTE_NUM_THREAD_X, {32, 1, 1}).dispatchIndirect(kBase + 0x300, dispatchInitiator(gfx(), true));
    ASSERT_TRUE(executor().execute(s.dwords()).ok());
    ASSERT_EQ(dispatch.calls.size(), 1u);
    EXPECT_TRUE(dispatch.calls[0].indirect);
    EXPECT_EQ(dispatch.calls[0].groups, (std::array<uint32_t, 3>{5, 6, 7}));
}

TEST_P(Pm4Executor, DispatchFailuresAreFaults) {
    Stream s = stream();
    s.dispatchDirect(1, 1, 1, dispatchInitiator(gfx(), true));  // no NUM_THREAD set
    ExecResult r = executor().execute(s.dwords());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.fault->kind, FaultKind::BadDispatch);
    EXPECT_NE(r.fault->reason.find("COMPUTE_NUM_THREAD_X"), std::string::npos);

    dispatch.result = {false, "no kernel at 0x100"};
    s.clear();
    s.setShReg(gfx11::COMPUTE_NUM_THREAD_X, {1, 1, 1}).dispatchDirect(1, 1, 1, dispatchInitiator(gfx(), true));
    r = executor().execute(s.dwords());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.fault->kind, FaultKind::DispatchFailed);
    EXPECT_EQ(r.fault->offset, 5u);
    EXPECT_EQ(r.fault->reason, "no kernel at 0x100");
}

// Dispatch `tag` (COMPUTE_USER_DATA_0) of one 32-thread group.
void taggedDispatch(Stream& s, uint32_t tag) {
    s.setShReg(gfx11::COMPUTE_NUM_THREAD_X, {32, 1, 1})
        .setShReg(gfx11::COMPUTE_USER_DATA_0, tag)
        .dispatchDirect(1, 1, 1, dispatchInitiator(s.gfx(), true));
}

TEST_P(Pm4Executor, DispatchesWithNoWaitBetweenThemOverlapLatestFirst) {
    Stream s = stream();
    taggedDispatch(s, 1);
    taggedDispatch(s, 2);
    taggedDispatch(s, 3);
    s.eventWrite(gfx11::CS_PARTIAL_FLUSH, 4);  // waits for 1..3
    taggedDispatch(s, 4);
    s.acquireMem({.gcrCntl = 0x380});  // an invalidate does not wait
    taggedDispatch(s, 5);
    s.releaseMem({.data = ReleaseData::Value32, .address = kBase + 0x10, .value = 9});  // end of pipe: waits
    taggedDispatch(s, 6);
    s.waitRegMem({.address = kBase + 0x10, .function = CompareFunc::Equal, .reference = 9});  // the CP stalls
    taggedDispatch(s, 7);
    taggedDispatch(s, 8);  // the end of the stream: the queue drains
    Executor ex = executor();
    const ExecResult r = ex.execute(s.dwords());
    ASSERT_TRUE(r.ok()) << r.fault->describe();
    EXPECT_EQ(dispatch.userData0, (std::vector<uint32_t>{3, 2, 1, 5, 4, 6, 8, 7}));
    EXPECT_EQ(ex.stats().dispatches, 8u);
    EXPECT_EQ(ex.stats().overlapped, 4u);  // 2 + 1 + 0 + 1

    dispatch.userData0.clear();
    Executor inOrder = executor({.overlapDispatches = false});
    ASSERT_TRUE(inOrder.execute(s.dwords()).ok());
    EXPECT_EQ(dispatch.userData0, (std::vector<uint32_t>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST_P(Pm4Executor, AHeldDispatchThatFailsIsLocatedAtItsOwnPacket) {
    Stream s = stream();
    taggedDispatch(s, 1);
    const uint32_t second = s.size();
    taggedDispatch(s, 2);
    const uint32_t secondPacket = s.lastPacket();
    (void)second;
    s.eventWrite(gfx11::CS_PARTIAL_FLUSH, 4);
    dispatch.result = {false, "kernel k faulted"};
    const ExecResult r = executor().execute(s.dwords());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.fault->kind, FaultKind::DispatchFailed);
    EXPECT_EQ(r.fault->offset, secondPacket);  // the later dispatch ran first and failed
    EXPECT_EQ(r.fault->packet, "DISPATCH_DIRECT");
    EXPECT_EQ(r.fault->reason, "kernel k faulted");
}

TEST_P(Pm4Executor, CpWritesAndInvalidatesReachTheShaderSide) {
    Stream s = stream();
    s.writeData({.address = kBase + 0x100}, {1, 2, 3});
    s.copyData({.source = kBase + 0x100, .destination = kBase + 0x200, .count64 = true});
    s.releaseMem({.gcrCntl = 0x70F, .data = ReleaseData::Value32, .address = kBase + 0x300, .value = 1});
    s.acquireMem({.gcrCntl = (1u << 7) | (1u << 8)});  // GLK + GLV, no GL1
    s.acquireMem({.gcrCntl = (1u << 7) | (1u << 8) | (1u << 9)});
    ASSERT_TRUE(executor().execute(s.dwords()).ok());
    EXPECT_EQ(dispatch.cpWrites, (std::vector<std::pair<uint64_t, uint64_t>>{{kBase + 0x100, 12}, {kBase + 0x200, 8}, {kBase + 0x300, 4}}));
    ASSERT_EQ(dispatch.invalidates.size(), 3u);
    EXPECT_TRUE(dispatch.invalidates[0].vector);    // 0x70F: GLV_INV and GL1_INV
    EXPECT_FALSE(dispatch.invalidates[0].scalar);   // RELEASE_MEM's GLK_INV bit is clear
    const bool gfx12 = gfx() == Gfx::Gfx12;         // gfx12 has no GL1 to invalidate
    EXPECT_EQ(dispatch.invalidates[1].vector, gfx12);
    EXPECT_EQ(dispatch.invalidates[1].scalar, gfx12);
    EXPECT_TRUE(dispatch.invalidates[2].vector);
    EXPECT_TRUE(dispatch.invalidates[2].scalar);
}

TEST_P(Pm4Executor, BadAddressFaultNamesTheDwordOffset) {
    Stream s = stream();
    s.writeData({.address = kBase}, {1}).writeData({.address = kUnmapped}, {2, 3}).writeData({.address = kBase + 4}, {4});
    const ExecResult r = executor().execute(s.dwords());
    ASSERT_FALSE(r.ok());
    const Fault& f = *r.fault;
    EXPECT_EQ(f.kind, FaultKind::BadAddress);
    EXPECT_EQ(f.offset, 5u);
    EXPECT_EQ(f.ibDepth, 0u);
    EXPECT_EQ(f.packet, "WRITE_DATA");
    EXPECT_NE(f.reason.find("0xDEAD0000"), std::string::npos) << f.reason;
    EXPECT_EQ(f.packetDwords.size(), 6u);
    EXPECT_EQ(memory.load(kBase + 4), 0u);  // execution stopped at the fault
    EXPECT_NE(f.describe().find("bad address at dword 5: WRITE_DATA, header 0xC0043700"), std::string::npos)
        << f.describe();
}

TEST_P(Pm4Executor, FaultInsideAnIbNamesTheIb) {
    const uint64_t ib = kBase + 0x1000;
    std::array<uint32_t, 256> b{};
    Stream s = ibAt(b);
    s.nop(2).releaseMem({.address = kUnmapped, .value = 1});
    upload(ib, s);
    Stream top = stream();
    top.nop().indirectBuffer(ib, s.size());
    const ExecResult r = executor().execute(top.dwords());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.fault->offset, 2u);
    EXPECT_EQ(r.fault->ibDepth, 1u);
    EXPECT_EQ(r.fault->streamAddress, ib);
    EXPECT_EQ(r.fault->packet, "RELEASE_MEM");
    EXPECT_EQ(r.position, 1u);
    EXPECT_NE(r.fault->describe().find("of the IB at 0x7F0000001000 (depth 1)"), std::string::npos)
        << r.fault->describe();
}

TEST_P(Pm4Executor, MalformedStreamsAreFaults) {
    const std::vector<uint32_t> unknown = {nopHeaderOnly(), 0xC000EE00, 0};
    ExecResult r = executor().execute(unknown);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.fault->kind, FaultKind::UnknownOpcode);
    EXPECT_EQ(r.fault->offset, 1u);

    const std::vector<uint32_t> badType = {0x00001234};
    r = executor().execute(badType);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.fault->kind, FaultKind::MalformedPacket);

    const std::vector<uint32_t> truncated = {0xC0064900, 0x514, 0};
    r = executor().execute(truncated);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.fault->reason.find("only 3 dwords remain in the stream"), std::string::npos) << r.fault->reason;

    // An IB pointing at unmapped memory faults fetching its first header.
    Stream s = stream();
    s.indirectBuffer(kUnmapped, 16);
    r = executor().execute(s.dwords());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.fault->kind, FaultKind::BadAddress);
    EXPECT_EQ(r.fault->ibDepth, 1u);
    EXPECT_EQ(r.fault->packet, "(packet not fetched)");
}

TEST_P(Pm4Executor, EventWriteIsRecorded) {
    Stream s = stream();
    s.eventWrite(gfx11::CS_PARTIAL_FLUSH, 4);
    ASSERT_TRUE(executor().execute(s.dwords()).ok());
    ASSERT_EQ(observer.events.size(), 1u);
    EXPECT_EQ(observer.events[0], (std::pair<uint32_t, uint32_t>{7, 4}));
}

TEST_P(Pm4Executor, RandomStreamsStopCleanly) {
    std::mt19937 rng(99);
    const uint32_t opcodes[] = {0x10, 0x15, 0x16, 0x37, 0x3C, 0x3F, 0x40, 0x46, 0x49, 0x58, 0x76};
    for (int iter = 0; iter < 3000; ++iter) {
        std::vector<uint32_t> dwords(rng() % 32);
        for (uint32_t& d : dwords) {
            d = rng() % 3 ? static_cast<uint32_t>(rng()) : static_cast<uint32_t>(kBase + (rng() % 64) * 4);
            if (rng() % 2)
                d = (3u << 30) | ((rng() % 8) << 16) | (opcodes[rng() % std::size(opcodes)] << 8) | (d & 0x3);
        }
        Executor ex = executor({.waitTimeoutNs = 5'000'000});
        const ExecResult r = ex.execute(dwords);
        EXPECT_LE(r.position, dwords.size());
    }
}

INSTANTIATE_TEST_SUITE_P(Gfx, Pm4Executor, ::testing::Values(Gfx::Gfx11, Gfx::Gfx12), test::gfxParamName);

}  // namespace
}  // namespace zinc::pm4
