#pragma once
// One hardware queue of the simulated GPU (an HQD of the MEC): a command-processor thread that
// sleeps until its doorbell is written, then runs pm4::Executor over the ring from rptr to the
// doorbell's wptr (wrapping), publishing rptr after every packet as the CP does. A fault stops
// the queue for good — later doorbells are ignored — and is kept for readQueueState and waiters.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>

#include "kfd/device/device.h"
#include "kfd/sim/sim_faults.h"
#include "kfd/sim/sim_memory.h"
#include "pm4/executor.h"

namespace zinc::kfd {

// What the queue tells its device: a RELEASE_MEM interrupt (the IH ring entry KFD's interrupt
// handler would see) and a fault.
class SimInterruptSink {
public:
    virtual ~SimInterruptSink() = default;
    virtual void interrupt(uint32_t queueId, uint32_t contextId) = 0;
    virtual void queueFaulted(uint32_t queueId) = 0;
};

class SimQueue final : private pm4::ExecutionObserver {
public:
    // `faults`: where an armed hang or bad fence comes from (null: none).
    SimQueue(const Queue& queue, pm4::Gfx gfx, SimMemory& memory, pm4::DispatchHandler* dispatch, SimInterruptSink& sink,
             SimFaults* faults = nullptr);
    ~SimQueue() override;  // stops a waiting packet and joins the thread
    SimQueue(const SimQueue&) = delete;
    SimQueue& operator=(const SimQueue&) = delete;

    const Queue& queue() const { return queue_; }
    // The doorbell was written: wake the command processor.
    void doorbellRung();
    QueueState state() const;
    std::optional<QueueFault> fault() const;
    // Packets and dispatches executed so far (tests, probe).
    pm4::ExecStats stats() const;

private:
    void run();
    void execute(uint64_t wptr);
    void onRelease(const pm4::ReleaseEvent& release) override;
    void onRptr(uint64_t rptr) override;
    void onPacket(uint32_t depth, uint64_t address) override;
    uint64_t releaseData(const pm4::ReleaseEvent& release, uint64_t data) override;

    const Queue queue_;
    SimMemory& memory_;
    SimInterruptSink& sink_;
    SimFaults* faults_;
    std::atomic<bool> stop_{false};
    std::unique_ptr<pm4::Clock> clock_;
    std::unique_ptr<pm4::Executor> executor_;  // used by the CP thread only
    std::atomic<uint32_t> cpDepth_{0};          // where the CP is (onPacket), read by state()
    std::atomic<uint64_t> cpAddress_{0};

    mutable std::mutex mutex_;  // guards everything below
    std::condition_variable wake_;
    bool doorbellPending_ = false;
    uint64_t rptr_ = 0;  // the CP's own 64-bit read pointer; memory gets its ring offset
    std::optional<FenceRecord> lastFence_;
    std::optional<QueueFault> fault_;
    pm4::ExecStats stats_;
    std::thread thread_;  // last: started once everything above exists
};

}  // namespace zinc::kfd
