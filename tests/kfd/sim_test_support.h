#pragma once
// What the simulated-GPU tests share: a device with one queue, a PM4 stream buffer, and the
// RELEASE_MEM that signals a KFD event the way a runtime does it.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <vector>

#include "kfd/device/queue_writer.h"
#include "kfd/sim/sim_device.h"
#include "pm4/stream.h"

namespace zinc::kernels {
class PoclRunner;
}

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

// One PoCL runner for the whole binary: building the kernel program is the slow part.
std::shared_ptr<kernels::PoclRunner> sharedRunner();

// The ladder's fixture: a simulated GPU of the parameter's gfx target (every rung runs on gfx1100
// and gfx1201), one queue, a writer and an event. Without PoCL unless a test asks for it, so the
// queue rungs do not depend on an OpenCL runtime.
class KfdSim : public ::testing::TestWithParam<const char*> {
protected:
    void open(const QueueOptions& queueOptions = {}, SimOptions simOptions = {.pocl = false});
    void openWithPocl() { open({}, {.runner = sharedRunner()}); }
    void SetUp() override { open(); }
    void TearDown() override;
    // Replaces the queue with one of these options.
    void recreateQueue(const QueueOptions& options);
    Memory alloc(uint64_t bytes, MemoryKind kind = MemoryKind::Gtt);
    pm4::Gfx gfx() const { return device->caps().gfxMajor >= 12 ? pm4::Gfx::Gfx12 : pm4::Gfx::Gfx11; }
    // Appends the event signal, submits and waits for it.
    void submitAndWait(Packets& p, uint32_t timeoutMs = 10000);

    std::unique_ptr<Device> device;
    Queue queue;
    std::unique_ptr<QueueWriter> writer;
    Event event;
};

}  // namespace zinc::kfd::testing
