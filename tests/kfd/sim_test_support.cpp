#include "tests/kfd/sim_test_support.h"

#include "kernels/pocl_runner.h"
#include "tests/sim_pocl_runner.h"

namespace zinc::kfd::testing {

std::shared_ptr<kernels::PoclRunner> sharedRunner() {
    return test::sharedPoclRunner();
}

void KfdSim::open(const QueueOptions& queueOptions, SimOptions simOptions) {
    if (device && queue.id) {
        EXPECT_TRUE(device->destroyQueue(queue).ok());
    }
    Result<std::unique_ptr<Device>> d = openSimulatedDevice(GetParam(), simOptions);
    ASSERT_TRUE(d.ok()) << d.error().describe();
    device = std::move(*d);
    ASSERT_EQ(device->caps().gfxName, GetParam());
    Result<Queue> q = device->createQueue(queueOptions);
    ASSERT_TRUE(q.ok()) << q.error().describe();
    queue = *q;
    writer = std::make_unique<QueueWriter>(*device, queue);
    Result<Event> e = device->createEvent(true);
    ASSERT_TRUE(e.ok()) << e.error().describe();
    event = *e;
}

void KfdSim::TearDown() {
    if (device && queue.id) {
        EXPECT_TRUE(device->destroyQueue(queue).ok());
    }
}

void KfdSim::recreateQueue(const QueueOptions& options) {
    ASSERT_TRUE(device->destroyQueue(queue).ok());
    Result<Queue> q = device->createQueue(options);
    ASSERT_TRUE(q.ok()) << q.error().describe();
    queue = *q;
    writer = std::make_unique<QueueWriter>(*device, queue);
}

Memory KfdSim::alloc(uint64_t bytes, MemoryKind kind) {
    Result<Memory> m = device->allocMemory(bytes, kind, {});
    EXPECT_TRUE(m.ok()) << m.error().describe();
    return m.ok() ? *m : Memory{};
}

void KfdSim::submitAndWait(Packets& p, uint32_t timeoutMs) {
    p->releaseMem(signalEvent(event));
    ASSERT_TRUE(writer->submit(p.dwords()).ok());
    Status s = device->waitEvents({&event, 1}, timeoutMs);
    ASSERT_TRUE(s.ok()) << s.error().describe();
}

INSTANTIATE_TEST_SUITE_P(, KfdSim, ::testing::Values("gfx1100", "gfx1201"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace zinc::kfd::testing
