#pragma once
// What the simulated-GPU tests share: a device with one queue, a PM4 stream buffer, and the
// RELEASE_MEM that signals a KFD event the way a runtime does it.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <vector>

#include "kfd/queue_writer.h"
#include "kfd/sim_device.h"
#include "pm4/stream.h"

namespace zinc::kfd::testing {

// A PM4 stream over its own storage.
class Packets {
public:
    explicit Packets(pm4::Gfx gfx = pm4::Gfx::Gfx11, uint32_t capacity = 4096) : storage_(capacity), stream_(storage_, gfx) {}
    pm4::Stream* operator->() { return &stream_; }
    pm4::Stream& stream() { return stream_; }
    std::span<const uint32_t> dwords() const { return stream_.dwords(); }
    void clear() { stream_.clear(); }

private:
    std::vector<uint32_t> storage_;
    pm4::Stream stream_;
};

// The KFD signalling idiom (tinygrad, FACTS.md §5.7): end-of-pipe RELEASE_MEM writing the event
// id into its mailbox with an interrupt whose context id is the event id.
inline pm4::ReleaseMem signalEvent(const Event& e) {
    return pm4::ReleaseMem{.data = pm4::ReleaseData::Value32, .interrupt = pm4::ReleaseInterrupt::InterruptAfterWriteConfirm,
                           .address = e.mailboxGpuVa, .value = e.id, .intCtxId = e.id};
}

template <class T> T loadAcquire(const T* p) { return std::atomic_ref<T>(*const_cast<T*>(p)).load(std::memory_order_acquire); }
template <class T> void storeRelease(T* p, T v) { std::atomic_ref<T>(*p).store(v, std::memory_order_release); }

// A simulated gfx1100 (no PoCL unless asked), one queue and a writer for it.
class SimFixture : public ::testing::Test {
protected:
    void open(const QueueOptions& queueOptions = {}, SimOptions simOptions = {.pocl = false}) {
        Result<std::unique_ptr<Device>> d = openSimulatedDevice("gfx1100", simOptions);
        ASSERT_TRUE(d.ok()) << d.error().describe();
        device = std::move(*d);
        Result<Queue> q = device->createQueue(queueOptions);
        ASSERT_TRUE(q.ok()) << q.error().describe();
        queue = *q;
        writer = std::make_unique<QueueWriter>(*device, queue);
        Result<Event> e = device->createEvent(true);
        ASSERT_TRUE(e.ok()) << e.error().describe();
        event = *e;
    }
    void SetUp() override { open(); }
    void TearDown() override {
        if (device && queue.id) EXPECT_TRUE(device->destroyQueue(queue).ok());
    }
    Memory alloc(uint64_t bytes, MemoryKind kind = MemoryKind::Gtt) {
        Result<Memory> m = device->allocMemory(bytes, kind, {});
        EXPECT_TRUE(m.ok()) << m.error().describe();
        return m.ok() ? *m : Memory{};
    }
    // Appends the event signal, submits and waits for it.
    void submitAndWait(Packets& p, uint32_t timeoutMs = 10000) {
        p->releaseMem(signalEvent(event));
        ASSERT_TRUE(writer->submit(p.dwords()).ok());
        Status s = device->waitEvents({&event, 1}, timeoutMs);
        ASSERT_TRUE(s.ok()) << s.error().describe();
    }

    std::unique_ptr<Device> device;
    Queue queue;
    std::unique_ptr<QueueWriter> writer;
    Event event;
};

}  // namespace zinc::kfd::testing
