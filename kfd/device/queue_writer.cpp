#include "kfd/device/queue_writer.h"
#include "kfd/device/hex.h"
#include "kfd/device/load_acquire.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <thread>

namespace zinc::kfd {
namespace {

using Clock = std::chrono::steady_clock;

uint32_t loadRptr(const Queue& q) { return loadAcquire(q.rptr()); }

uint64_t loadFence(const Fence& f) { return loadAcquire(f.value); }

// Short sleeps: a host poll must not starve the simulated CP it waits for on a small machine.
void pause() { std::this_thread::sleep_for(std::chrono::microseconds(100)); }

}  // namespace

QueueWriter::QueueWriter(Device& device, const Queue& queue)
    : device_(device), queue_(queue), wptr_(loadAcquire(queue.wptr())) {}

uint32_t QueueWriter::space() const {
    const uint32_t n = queue_.ringDwords();
    const uint32_t pending = uint32_t((wptr_ % n + n - loadRptr(queue_)) % n);
    return n - 1 - pending;
}

Status QueueWriter::write(std::span<const uint32_t> dwords) {
    if (dwords.size() > space())
        return Error{"QueueWriter::write", ENOSPC, std::to_string(dwords.size()) + " dwords do not fit: " + std::to_string(space()) +
                                                        " free; " + device_.readQueueState(queue_).describe()};
    const uint32_t n = queue_.ringDwords();
    uint32_t* ring = queue_.ringData();
    for (size_t i = 0; i < dwords.size(); ++i) ring[(wptr_ + i) % n] = dwords[i];
    wptr_ += dwords.size();
    return {};
}

void QueueWriter::submit() { device_.ringDoorbell(queue_, wptr_); }

Status QueueWriter::submit(std::span<const uint32_t> dwords) {
    if (Status s = write(dwords); !s) return s;
    submit();
    return {};
}

Status QueueWriter::waitForSpace(uint32_t dwords, uint32_t timeoutMs) {
    if (dwords >= queue_.ringDwords())
        return Error{"QueueWriter::waitForSpace", EINVAL, std::to_string(dwords) + " dwords can never fit a ring of " + std::to_string(queue_.ringDwords())};
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
    while (space() < dwords) {
        if (Clock::now() >= deadline)
            return Error{"QueueWriter::waitForSpace", ETIME, "no room for " + std::to_string(dwords) + " dwords after " + std::to_string(timeoutMs) +
                                                                 " ms; " + device_.readQueueState(queue_).describe()};
        pause();
    }
    return {};
}

Status QueueWriter::waitIdle(uint32_t timeoutMs) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
    while (loadRptr(queue_) != wptr_ % queue_.ringDwords()) {
        const QueueState state = device_.readQueueState(queue_);
        if (state.fault) return Error{"QueueWriter::waitIdle", EFAULT, "the queue faulted; " + state.describe()};
        if (Clock::now() >= deadline)
            return Error{"QueueWriter::waitIdle", ETIME, "the CP has not consumed wptr " + hex(wptr_) + " after " + std::to_string(timeoutMs) + " ms; " + state.describe()};
        pause();
    }
    return {};
}

Status waitFence(Device& device, const Queue& queue, const Fence& fence, uint64_t target, uint32_t timeoutMs) {
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::milliseconds(timeoutMs);
    while (loadFence(fence) < target) {
        const auto now = Clock::now();
        if (now >= deadline) {
            const QueueState state = device.readQueueState(queue);
            return Error{"waitFence", ETIME,
                         "fence at " + hex(fence.gpuAddress) + " holds " + hex(loadFence(fence)) + ", waited for >= " + hex(target) + " for " +
                             std::to_string(timeoutMs) + " ms; " + state.describe()};
        }
        if (fence.event) {
            // The event wakes us at the interrupt; its own timeout is the time left. A timeout
            // there is not final: the loop re-reads the fence word and reports it.
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
            Status s = device.waitEvents({fence.event, 1}, uint32_t(std::max<int64_t>(1, left)));
            if (!s && s.error().errnum != ETIME) {
                if (loadFence(fence) >= target) return {};
                return s;
            }
        } else {
            pause();
        }
    }
    return {};
}

}  // namespace zinc::kfd
