#include "kfd/sim/sim_queue.h"
#include "kfd/device/hex.h"

#include <chrono>
#include <cstdio>

namespace zinc::kfd {
namespace {

// Time for the simulated CP. Both clock counters tick at 100 MHz, the rate of the RDNA
// "GPU clock counter" and system clock KFD's GET_CLOCK_COUNTERS reports (amdgpu
// gfx_v11_0_get_gpu_clock_counter reads the 100 MHz REFCLK-based counter).
class SimClock final : public pm4::Clock {
public:
    uint64_t gpuClock() override { return nowNs() / 10; }
    uint64_t systemClock() override { return nowNs() / 10; }
    uint64_t nowNs() override {
        return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
    }
    // Between two polls of a WAIT_REG_MEM: the machine running the simulator is small and shared,
    // so sleep rather than spin. 50 us is well under any fence a test or a token waits for.
    void idle() override { std::this_thread::sleep_for(std::chrono::microseconds(50)); }
};

}  // namespace

SimQueue::SimQueue(const Queue& queue, pm4::Gfx gfx, SimMemory& memory, pm4::DispatchHandler* dispatch, SimInterruptSink& sink,
                   SimFaults* faults)
    : queue_(queue), memory_(memory), sink_(sink), faults_(faults), clock_(std::make_unique<SimClock>()) {
    pm4::ExecutorOptions options;
    options.stop = &stop_;  // hardware waits forever; only destroying the queue ends a wait
    executor_ = std::make_unique<pm4::Executor>(gfx, memory_, *clock_, dispatch, static_cast<pm4::ExecutionObserver*>(this), options);
    thread_ = std::thread([this] { run(); });
}

SimQueue::~SimQueue() {
    {
        std::lock_guard lock(mutex_);
        stop_.store(true, std::memory_order_release);
    }
    wake_.notify_all();
    thread_.join();
}

void SimQueue::doorbellRung() {
    {
        std::lock_guard lock(mutex_);
        doorbellPending_ = true;
    }
    wake_.notify_all();
}

void SimQueue::run() {
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [&] { return doorbellPending_ || stop_.load(std::memory_order_acquire); });
        if (stop_.load(std::memory_order_acquire)) return;
        doorbellPending_ = false;
        if (fault_) continue;  // a faulted queue stays stopped, as after a GPU fault
        // The CP takes the new wptr from the doorbell write (64-bit doorbells carry it).
        const uint64_t wptr = std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(queue_.doorbell)).load(std::memory_order_acquire);
        lock.unlock();
        execute(wptr);
        lock.lock();
    }
}

void SimQueue::execute(uint64_t wptr) {
    const pm4::RingLayout ring{queue_.ring.gpuVa, queue_.ringDwords()};
    uint64_t rptr;
    {
        std::lock_guard lock(mutex_);
        rptr = rptr_;
    }
    const pm4::ExecResult result = executor_->executeRing(ring, rptr, wptr);
    {
        std::lock_guard lock(mutex_);
        rptr_ = result.position;
        stats_ = executor_->stats();
        if (!result.fault || stop_.load(std::memory_order_acquire)) return;
        const pm4::Fault& f = *result.fault;
        QueueFault fault;
        fault.dwordOffset = result.position % queue_.ringDwords();
        fault.header = f.header;
        fault.packet = f.packet;
        fault.reason = std::string(pm4::faultKindName(f.kind)) + ": " + f.reason;
        if (f.ibDepth > 0)
            fault.reason += " (dword " + std::to_string(f.offset) + " of the IB at " + hex(f.streamAddress) + ", depth " + std::to_string(f.ibDepth) + ")";
        fault.decoded = f.report(executor_->gfx());
        fault_ = std::move(fault);
        // The CP stopped at the faulting packet: for a dispatch that ran late (overlapped with
        // later packets) that is its own packet, not the one the CP had reached.
        if (f.ibDepth > 0 && f.packetAddress != 0) {
            cpAddress_.store(f.packetAddress, std::memory_order_relaxed);
            cpDepth_.store(f.ibDepth, std::memory_order_release);
        }
    }
    // Outside the queue's lock: the device takes its own lock, and waiters read queue state
    // while holding theirs.
    sink_.queueFaulted(queue_.id);
}

void SimQueue::onRelease(const pm4::ReleaseEvent& release) {
    {
        std::lock_guard lock(mutex_);
        if (release.dataSel != 0) lastFence_ = FenceRecord{release.address, release.data};
    }
    if (release.intSel != 0) sink_.interrupt(queue_.id, release.intCtxId);
}

void SimQueue::onRptr(uint64_t rptr) {
    // The CP reports rptr as a 32-bit dword offset that wraps at the ring size (kfdtest
    // PM4Queue::Rptr: "still 32-bit even on Vega10").
    std::atomic_ref<uint32_t>(*const_cast<uint32_t*>(queue_.rptr())).store(uint32_t(rptr % queue_.ringDwords()), std::memory_order_release);
}

void SimQueue::onPacket(uint32_t depth, uint64_t address) {
    cpAddress_.store(address, std::memory_order_relaxed);
    cpDepth_.store(depth, std::memory_order_release);
    // An injected hang: the CP never gets past this packet. Only destroying the queue (or the
    // driver resetting its ring) ends it; the executor then stops before the next packet.
    if (faults_ && faults_->hangBefore(address, memory_))
        while (!stop_.load(std::memory_order_acquire)) clock_->idle();
}

uint64_t SimQueue::releaseData(const pm4::ReleaseEvent& release, uint64_t data) {
    if (!faults_) return data;
    return faults_->fenceValue(release.address, data).value_or(data);
}

QueueState SimQueue::state() const {
    QueueState s;
    s.queueId = queue_.id;
    s.ringDwords = queue_.ringDwords();
    s.rptr = std::atomic_ref<uint32_t>(*const_cast<uint32_t*>(queue_.rptr())).load(std::memory_order_acquire);
    s.wptr = std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(queue_.wptr())).load(std::memory_order_acquire);
    s.doorbell = std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(queue_.doorbell)).load(std::memory_order_acquire);
    {
        std::lock_guard lock(mutex_);
        s.lastFence = lastFence_;
        s.fault = fault_;
    }
    fillPacketAtRptr(queue_, s);
    // Only while work is pending: once the ring drains the last position is history.
    if (const uint32_t depth = cpDepth_.load(std::memory_order_acquire); depth > 0 && s.pendingDwords() > 0)
        s.insideIb = QueueState::IbPosition{depth, cpAddress_.load(std::memory_order_relaxed)};
    return s;
}

std::optional<QueueFault> SimQueue::fault() const {
    std::lock_guard lock(mutex_);
    return fault_;
}

pm4::ExecStats SimQueue::stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
}

}  // namespace zinc::kfd
