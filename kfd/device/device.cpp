#include "kfd/device/device.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>

#include "kfd/device/kernel_ring.h"
#include "kfd/device/packet_names.h"

namespace zinc::kfd {

std::string_view memoryKindName(MemoryKind kind) {
    switch (kind) {
        case MemoryKind::Vram: return "VRAM";
        case MemoryKind::Gtt: return "GTT";
        case MemoryKind::Doorbell: return "doorbell";
    }
    return "?";
}

void Device::ringDoorbell(const Queue& queue, uint64_t wptr) {
    // 1. Every packet dword written before this call becomes visible before the new wptr.
    std::atomic_thread_fence(std::memory_order_release);
    std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(queue.wptr())).store(wptr, std::memory_order_release);
    // 2. wptr reaches memory before the doorbell write can start the CP fetching (kfdtest puts a
    // full MemoryBarrier between the two). On x86 the doorbell page is uncached, so the store
    // below is not reordered with earlier ones once this fence has drained the store buffer.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    // 64-bit doorbell on gfx9+ (FACTS.md §5.4). An atomic store is still one plain 64-bit mov on
    // x86; it also orders the ring writes for a reader that is another thread (the simulator).
    std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(queue.doorbell)).store(wptr, std::memory_order_release);
    doorbellRung(queue);
}

Result<std::unique_ptr<KernelRing>> Device::openKernelRing() {
    return plainError("open kernel ring", name() + " has no command-submission ioctl; the CS route needs an amdgpu render node");
}

Status Device::injectFault(const InjectedFault& fault) {
    return plainError("inject fault", std::string("a ") + std::string(injectedFaultName(fault.kind)) + " can be injected only on the simulated GPU, not on " + name());
}

std::string_view injectedFaultName(InjectedFault::Kind kind) {
    switch (kind) {
        case InjectedFault::Kind::PageFault: return "fault";
        case InjectedFault::Kind::Hang: return "hang";
        case InjectedFault::Kind::BadFence: return "fence";
    }
    return "?";
}

void fillPacketAtRptr(const Queue& queue, QueueState& state) {
    const uint32_t n = queue.ringDwords();
    if (n == 0 || !queue.ring.cpuPtr) return;
    const uint32_t* ring = queue.ringData();
    const uint32_t at = state.rptr % n;
    // Nothing pending: the "packet at rptr" is the one before it is unknowable; say so.
    if (state.pendingDwords() == 0) {
        state.packetName = "(ring drained: rptr == wptr)";
        return;
    }
    const uint32_t header = ring[at];
    const PacketShape shape = packetShape(header);
    state.packetName = shape.name;
    const uint32_t take = std::min<uint32_t>({shape.dwords, state.pendingDwords(), 16});
    for (uint32_t i = 0; i < take; ++i) state.packetAtRptr.push_back(ring[(at + i) % n]);
}

std::string QueueState::describe() const {
    char line[256];
    std::snprintf(line, sizeof line, "queue %u: rptr 0x%x, wptr 0x%llx (ring slot 0x%x of 0x%x dwords, %u pending), doorbell 0x%llx",
                  queueId, rptr, static_cast<unsigned long long>(wptr), ringDwords ? uint32_t(wptr % ringDwords) : 0,
                  ringDwords, pendingDwords(), static_cast<unsigned long long>(doorbell));
    std::string text = line;
    if (!packetName.empty()) {
        text += "; packet at rptr: " + packetName;
        for (size_t i = 0; i < packetAtRptr.size(); ++i) {
            std::snprintf(line, sizeof line, "%s0x%08x", i == 0 ? " [" : " ", packetAtRptr[i]);
            text += line;
        }
        if (!packetAtRptr.empty()) text += "]";
    }
    if (insideIb) {
        std::snprintf(line, sizeof line, "; the CP is inside an IB (depth %u) at the packet at 0x%llx", insideIb->depth,
                      static_cast<unsigned long long>(insideIb->packetAddress));
        text += line;
    }
    if (lastFence) {
        std::snprintf(line, sizeof line, "; last fence: 0x%llx written to 0x%llx",
                      static_cast<unsigned long long>(lastFence->value), static_cast<unsigned long long>(lastFence->address));
        text += line;
    } else {
        text += "; no fence retired yet";
    }
    if (fault) {
        std::snprintf(line, sizeof line, "; FAULT at ring dword 0x%llx (%s, header 0x%08x): ",
                      static_cast<unsigned long long>(fault->dwordOffset), fault->packet.c_str(), fault->header);
        text += line + fault->reason;
    }
    return text;
}

Error waitTimeoutError(std::string waitedFor, uint32_t timeoutMs, std::span<const QueueState> queues) {
    std::string message = waitedFor + " not signalled after " + std::to_string(timeoutMs) + " ms";
    if (queues.empty()) message += "; no queues exist";
    for (const QueueState& q : queues) message += "\n  " + q.describe();
    return Error{"waitEvents", ETIME, std::move(message)};
}

}  // namespace zinc::kfd
