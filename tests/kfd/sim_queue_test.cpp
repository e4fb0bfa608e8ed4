// The bring-up ladder on the simulated GPU, rung by rung as kfdtest climbs it on hardware:
// queue created -> NOP retired -> doorbell observed -> fence retired -> GPU wait released by the
// CPU -> copy -> wraparound; then the failures that must never hang: a fence that never
// signals, and a fault that stops the queue.
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <thread>

#include "tests/kfd/sim_test_support.h"

namespace zinc::kfd {
namespace {
using namespace zinc::kfd::testing;
using namespace std::chrono_literals;

TEST_P(KfdSim, CreatesAndDestroysQueue) {
    EXPECT_EQ(device->name(), std::string("simulated ") + GetParam() + " (no kernel execution)");
    const QueueBufferSizes& sizes = device->caps().queueBuffers;
    EXPECT_EQ(queue.ring.size, QueueOptions{}.ringBytes);
    EXPECT_EQ(queue.ringDwords(), QueueOptions{}.ringBytes / 4);
    EXPECT_EQ(queue.pointers.size, 4096u);
    EXPECT_EQ(queue.eop.size, sizes.eopBytes);
    EXPECT_EQ(queue.ctxSave.size, sizes.ctxSaveMappingBytes);
    ASSERT_NE(queue.doorbell, nullptr);
    EXPECT_EQ(*queue.rptr(), 0u);
    EXPECT_EQ(*queue.wptr(), 0u);

    // More queues get their own doorbells; KFD's checks are the simulator's checks.
    Result<Queue> second = device->createQueue({.ringBytes = 4096});
    ASSERT_TRUE(second.ok()) << second.error().describe();
    EXPECT_NE(second->id, queue.id);
    EXPECT_NE(second->doorbell, queue.doorbell);
    EXPECT_TRUE(device->destroyQueue(*second).ok());
    Result<Queue> odd = device->createQueue({.ringBytes = 3 * 4096});
    ASSERT_FALSE(odd.ok());
    EXPECT_EQ(odd.error().errnum, EINVAL);
    EXPECT_NE(odd.error().message.find("power of two"), std::string::npos);
    Result<Queue> greedy = device->createQueue({.percentage = 101});
    ASSERT_FALSE(greedy.ok());

    Queue copy = queue;
    EXPECT_TRUE(device->destroyQueue(queue).ok());
    EXPECT_FALSE(device->destroyQueue(copy).ok());  // already gone
    queue = Queue{};
}

TEST_P(KfdSim, RetiresNop) {
    Packets p(gfx());
    p->nop().nop(4).nop();  // header-only, a 4-dword NOP, header-only
    ASSERT_TRUE(writer->submit(p.dwords()).ok());
    Status idle = writer->waitIdle(10000);
    ASSERT_TRUE(idle.ok()) << idle.error().describe();
    EXPECT_EQ(*queue.rptr(), 6u);  // rptr moved past all three
    EXPECT_EQ(device->readQueueState(queue).pendingDwords(), 0u);
}

TEST_P(KfdSim, DoorbellWakesTheProcessor) {
    Packets p(gfx());
    p->nop(8);
    // Packets and wptr in memory, but no doorbell: the CP sleeps and rptr stays put.
    ASSERT_TRUE(writer->write(p.dwords()).ok());
    storeRelease(const_cast<uint64_t*>(queue.wptr()), writer->wptr());
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(loadAcquire(queue.rptr()), 0u);
    EXPECT_EQ(device->readQueueState(queue).pendingDwords(), 8u);
    // The doorbell carries the wptr and wakes it.
    writer->submit();
    Status idle = writer->waitIdle(10000);
    ASSERT_TRUE(idle.ok()) << idle.error().describe();
    EXPECT_EQ(loadAcquire(queue.rptr()), 8u);
    EXPECT_EQ(device->readQueueState(queue).doorbell, 8u);
}

TEST_P(KfdSim, FenceRetires) {
    Memory fence = alloc(4096);
    Packets p(gfx());
    p->releaseMem({.data = pm4::ReleaseData::Value64, .address = fence.gpuVa, .value = 0x1234'5678'9ABC'DEF0ull});
    p->releaseMem({.data = pm4::ReleaseData::GpuClock, .address = fence.gpuAddress(8)});
    submitAndWait(p);
    EXPECT_EQ(loadAcquire(fence.as<uint64_t>()), 0x1234'5678'9ABC'DEF0ull);
    EXPECT_NE(loadAcquire(fence.as<uint64_t>(8)), 0u);  // a timestamp landed
    const QueueState state = device->readQueueState(queue);
    ASSERT_TRUE(state.lastFence.has_value());
    EXPECT_EQ(state.lastFence->address, event.mailboxGpuVa);  // the signalling RELEASE_MEM was last
    // The event is auto-reset: a second wait needs a second signal.
    Status again = device->waitEvents({&event, 1}, 20);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().errnum, ETIME);
}

TEST_P(KfdSim, GpuWaitReleasedByCpu) {
    Memory flag = alloc(4096);
    Memory marker = alloc(4096);
    Packets p(gfx());
    p->waitRegMem({.address = flag.gpuVa, .function = pm4::CompareFunc::Equal, .reference = 1});
    p->writeData({.address = marker.gpuVa}, {7});
    p->releaseMem(signalEvent(event));
    ASSERT_TRUE(writer->submit(p.dwords()).ok());

    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(loadAcquire(marker.as<uint32_t>()), 0u);  // the CP is held at WAIT_REG_MEM
    const QueueState held = device->readQueueState(queue);
    EXPECT_EQ(held.rptr, 0u);
    EXPECT_EQ(held.packetName, "WAIT_REG_MEM") << held.describe();

    storeRelease(flag.as<uint32_t>(), 1u);  // the CPU releases it
    Status s = device->waitEvents({&event, 1}, 10000);
    ASSERT_TRUE(s.ok()) << s.error().describe();
    EXPECT_EQ(loadAcquire(marker.as<uint32_t>()), 7u);
}

TEST_P(KfdSim, CopiesData) {
    Memory src = alloc(4096);
    Memory dst = alloc(4096);
    Packets p(gfx());
    p->writeData({.address = src.gpuVa}, {0x11111111, 0x22222222, 0x33333333, 0x44444444});
    p->copyData({.source = src.gpuVa, .destination = dst.gpuVa});  // 32-bit
    p->copyData({.source = src.gpuAddress(8), .destination = dst.gpuAddress(8), .count64 = true});
    p->copyData({.src = pm4::CopySrc::Immediate, .source = 0xCAFE, .destination = dst.gpuAddress(16)});
    submitAndWait(p);
    const uint32_t* d = dst.as<uint32_t>();
    EXPECT_EQ(loadAcquire(d + 0), 0x11111111u);
    EXPECT_EQ(loadAcquire(d + 1), 0u);  // a 32-bit copy moves one dword
    EXPECT_EQ(loadAcquire(d + 2), 0x33333333u);
    EXPECT_EQ(loadAcquire(d + 3), 0x44444444u);
    EXPECT_EQ(loadAcquire(d + 4), 0xCAFEu);
}

TEST_P(KfdSim, RingWraparound) {
    // The smallest ring (one page, 1024 dwords) and 5-dword packets: packets straddle the end and
    // the ring wraps 5 times.
    recreateQueue({.ringBytes = 4096});
    Memory counter = alloc(4096);
    constexpr uint32_t kPackets = 1000;
    Packets p(gfx());
    for (uint32_t i = 1; i <= kPackets; ++i) {
        p.clear();
        p->writeData({.address = counter.gpuVa}, {i});
        ASSERT_EQ(p.dwords().size(), 5u);
        Status room = writer->waitForSpace(5, 10000);
        ASSERT_TRUE(room.ok()) << room.error().describe();
        ASSERT_TRUE(writer->submit(p.dwords()).ok());
    }
    Status idle = writer->waitIdle(10000);
    ASSERT_TRUE(idle.ok()) << idle.error().describe();
    EXPECT_EQ(writer->wptr(), 5u * kPackets);
    EXPECT_EQ(loadAcquire(queue.rptr()), (5u * kPackets) % 1024);
    EXPECT_EQ(loadAcquire(counter.as<uint32_t>()), kPackets);
    // A packet bigger than the ring can never be written.
    std::vector<uint32_t> huge(1024, pm4::nopHeaderOnly());
    EXPECT_FALSE(writer->write(huge).ok());
}

TEST_P(KfdSim, FenceTimesOutWithQueueState) {
    Memory fence = alloc(4096);
    Memory flag = alloc(4096);
    Packets p(gfx());
    p->releaseMem({.data = pm4::ReleaseData::Value64, .address = fence.gpuVa, .value = 1});
    submitAndWait(p);
    // Fence 2 sits behind a WAIT_REG_MEM nobody will release.
    p.clear();
    p->waitRegMem({.address = flag.gpuVa, .function = pm4::CompareFunc::Equal, .reference = 1});
    p->releaseMem({.data = pm4::ReleaseData::Value64, .address = fence.gpuVa, .value = 2});
    p->releaseMem(signalEvent(event));
    ASSERT_TRUE(writer->submit(p.dwords()).ok());

    const auto start = std::chrono::steady_clock::now();
    Status s = device->waitEvents({&event, 1}, 200);
    const auto waited = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().errnum, ETIME);
    EXPECT_GE(waited, 200ms);
    EXPECT_LT(waited, 5s);  // bounded: no hang
    const std::string& m = s.error().message;
    EXPECT_NE(m.find("queue " + std::to_string(queue.id) + ": rptr 0x"), std::string::npos) << m;
    EXPECT_NE(m.find("wptr 0x"), std::string::npos) << m;
    EXPECT_NE(m.find("packet at rptr: WAIT_REG_MEM"), std::string::npos) << m;
    EXPECT_NE(m.find("last fence: 0x"), std::string::npos) << m;

    // The fence-level wait names the fence memory as well.
    Status f = waitFence(*device, queue, Fence{fence.as<uint64_t>(), fence.gpuVa, &event}, 2, 200);
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.error().errnum, ETIME);
    const std::string& fm = f.error().message;
    char where[64];
    std::snprintf(where, sizeof where, "fence at 0x%llx holds 0x1, waited for >= 0x2", static_cast<unsigned long long>(fence.gpuVa));
    EXPECT_NE(fm.find(where), std::string::npos) << fm;
    EXPECT_NE(fm.find("WAIT_REG_MEM"), std::string::npos) << fm;

    // Releasing the wait lets the same fence retire.
    storeRelease(flag.as<uint32_t>(), 1u);
    Status done = waitFence(*device, queue, Fence{fence.as<uint64_t>(), fence.gpuVa, &event}, 2, 10000);
    EXPECT_TRUE(done.ok()) << done.error().describe();
}

TEST_P(KfdSim, FaultStopsTheQueue) {
    Memory marker = alloc(4096);
    Packets p(gfx());
    p->nop(2);
    p->writeData({.address = 0x10}, {1});  // nothing is mapped at 0x10: a GPU page fault
    p->writeData({.address = marker.gpuVa}, {5});
    p->releaseMem(signalEvent(event));
    ASSERT_TRUE(writer->submit(p.dwords()).ok());

    Status s = device->waitEvents({&event, 1}, 10000);  // ends with the fault, not the timeout
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().errnum, EFAULT) << s.error().describe();
    EXPECT_NE(s.error().message.find("bad address"), std::string::npos) << s.error().describe();
    const QueueState state = device->readQueueState(queue);
    ASSERT_TRUE(state.fault.has_value()) << state.describe();
    EXPECT_EQ(state.fault->dwordOffset, 2u);  // the WRITE_DATA after the 2-dword NOP
    EXPECT_EQ(state.fault->packet, "WRITE_DATA");
    EXPECT_EQ(state.rptr, 2u);  // stopped at the faulting packet
    EXPECT_EQ(state.packetName, "WRITE_DATA");
    EXPECT_NE(state.describe().find("FAULT at ring dword 0x2"), std::string::npos) << state.describe();
    EXPECT_EQ(loadAcquire(marker.as<uint32_t>()), 0u);  // nothing after the fault ran

    // The queue stays stopped: a later doorbell changes nothing, and waiters still get the fault.
    p.clear();
    p->nop();
    ASSERT_TRUE(writer->submit(p.dwords()).ok());
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(device->readQueueState(queue).rptr, 2u);
    Status later = device->waitEvents({&event, 1}, 10000);
    ASSERT_FALSE(later.ok());
    EXPECT_EQ(later.error().errnum, EFAULT);
}

TEST_P(KfdSim, MalformedPacketsFault) {
    struct Case {
        uint32_t header;
        const char* expect;
    };
    for (const Case& c : {Case{0xC0009900u, "unknown opcode"}, Case{0x00000000u, "malformed packet"}}) {
        SCOPED_TRACE(c.expect);
        recreateQueue({});
        const uint32_t dwords[] = {pm4::nopHeaderOnly(), c.header, 0, 0};
        ASSERT_TRUE(writer->submit(dwords).ok());
        Status s = device->waitEvents({&event, 1}, 10000);
        ASSERT_FALSE(s.ok());
        EXPECT_EQ(s.error().errnum, EFAULT);
        const QueueState state = device->readQueueState(queue);
        ASSERT_TRUE(state.fault.has_value());
        EXPECT_EQ(state.fault->dwordOffset, 1u);
        EXPECT_EQ(state.fault->header, c.header);
        EXPECT_NE(state.fault->reason.find(c.expect), std::string::npos) << state.describe();
    }
}

TEST_P(KfdSim, CpuSetEventWakesWaiter) {
    std::thread setter([&] {
        std::this_thread::sleep_for(20ms);
        EXPECT_TRUE(device->setEvent(event).ok());
    });
    Status s = device->waitEvents({&event, 1}, 10000);
    setter.join();
    EXPECT_TRUE(s.ok()) << s.error().describe();
}

}  // namespace
}  // namespace zinc::kfd
