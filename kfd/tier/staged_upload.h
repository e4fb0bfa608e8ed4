#pragma once
// Host bytes into VRAM the CPU cannot map — a GPU without Resizable BAR shows the CPU only a
// window of its VRAM (typically 256 MiB, GpuCaps::cpuVisibleVramBytes), too small for weights
// and KV cache. The bytes go through a GTT staging buffer the CPU fills, and the command
// processor's own DMA engine (pm4 DMA_DATA) copies each chunk into VRAM: on a compute queue of
// our own (KFD, user queue) or, for a device without one, its kernel ring (amdgpu CS).
#include <cstdint>
#include <memory>
#include <string>

#include "kfd/device/device.h"
#include "kfd/device/kernel_ring.h"
#include "kfd/device/queue_writer.h"
#include "kfd/tier/tier_memory.h"

namespace zinc::kfd {

class StagedUpload {
public:
    // 32 MiB: a DMA_DATA moves at most 64 MiB - 1, and GTT is host memory we hold for the load.
    static constexpr uint64_t kStagingBytes = 32ull << 20;

    // Throws runtime::TierError when neither a queue nor a kernel ring opens.
    explicit StagedUpload(Device& device, uint64_t stagingBytes = kStagingBytes, uint32_t timeoutMs = 120000);
    ~StagedUpload();
    StagedUpload(const StagedUpload&) = delete;
    StagedUpload& operator=(const StagedUpload&) = delete;

    // Queues `bytes` from `src` for GPU address `dst`: writes that land within one staging
    // buffer's span of the pending ones (weights packed one after another) share a DMA_DATA;
    // otherwise the pending copy runs first. `what` names the copy in errors.
    void copy(uint64_t dst, const void* src, uint64_t bytes, const std::string& what);
    // Runs the pending copy and waits for it. Throws TierError with the queue's or ring's state.
    void flush();

    uint64_t packets() const { return packets_; }  // DMA_DATA packets run so far
    uint64_t bytes() const { return bytes_; }
    uint64_t stagingBytes() const { return staging_.size(); }

private:
    void runChunk(uint64_t dst, uint32_t bytes, const std::string& what);

    Device& device_;
    uint32_t timeoutMs_;
    DeviceMemory staging_, control_;  // control: the fence word, then (kernel ring) the IB
    Queue queue_;
    std::unique_ptr<QueueWriter> writer_;
    std::unique_ptr<KernelRing> ring_;
    uint64_t fenceValue_ = 0, packets_ = 0, bytes_ = 0;
    uint64_t pendingDst_ = 0, pendingBytes_ = 0;  // staging_[0, pendingBytes_) goes to pendingDst_
    std::string pendingWhat_;
};

}  // namespace zinc::kfd
