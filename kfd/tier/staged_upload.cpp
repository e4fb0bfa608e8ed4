#include "kfd/tier/staged_upload.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "pm4/stream.h"
#include "runtime/tier.h"

namespace zinc::kfd {

using runtime::TierError;

namespace {
constexpr uint64_t kFenceOffset = 0;   // 64-bit fence word the RELEASE_MEM after each copy writes
constexpr uint64_t kIbOffset = 256;    // kernel-ring route: the copy's IB
constexpr uint32_t kStreamDwords = 32;  // DMA_DATA (7) + RELEASE_MEM (8), with room
}  // namespace

StagedUpload::StagedUpload(Device& device, uint64_t stagingBytes, uint32_t timeoutMs) : device_(device), timeoutMs_(timeoutMs) {
    staging_ = DeviceMemory(device, stagingBytes, MemoryKind::Gtt, "GTT staging buffer for VRAM outside the BAR");
    control_ = DeviceMemory(device, 4096, MemoryKind::Gtt, "staging copy fence and IB", {.uncached = true});
    Result<Queue> queue = device.createQueue({});
    if (queue) {
        queue_ = *queue;
        writer_ = std::make_unique<QueueWriter>(device, queue_);
        return;
    }
    Result<std::unique_ptr<KernelRing>> ring = device.openKernelRing();
    if (!ring)
        throw TierError(fmt::format("kfd tier: staging copies into VRAM on {}: no compute queue ({}) and no kernel ring ({})", device.name(),
                                    queue.error().describe(), ring.error().describe()));
    ring_ = std::move(*ring);
}

StagedUpload::~StagedUpload() {
    // Pending bytes were not flushed: an exception is on its way; nothing more to copy.
    writer_.reset();
    if (queue_.id || queue_.ring) (void)device_.destroyQueue(queue_);
}

void StagedUpload::copy(uint64_t dst, const void* src, uint64_t bytes, const std::string& what) {
    const auto* from = static_cast<const uint8_t*>(src);
    bytes_ += bytes;
    while (bytes > 0) {
        const bool joins = pendingBytes_ > 0 && dst >= pendingDst_ + pendingBytes_ && dst < pendingDst_ + staging_.size();
        if (!joins) {
            flush();
            pendingDst_ = dst;
            pendingWhat_ = what;
        }
        const uint64_t at = dst - pendingDst_;
        const uint64_t n = std::min<uint64_t>(bytes, staging_.size() - at);
        std::memcpy(staging_.cpu<uint8_t>(at), from, n);  // a gap left by alignment carries whatever it held
        pendingBytes_ = at + n;
        if (pendingWhat_ != what && pendingWhat_.find(" .. ") == std::string::npos) pendingWhat_ += " .. " + what;
        from += n;
        dst += n;
        bytes -= n;
    }
}

void StagedUpload::flush() {
    if (pendingBytes_ == 0) return;
    // DMA_DATA copies whole dwords here (a real CP takes any count; the simulated one dwords).
    runChunk(pendingDst_, uint32_t((pendingBytes_ + 3) & ~uint64_t(3)), pendingWhat_);
    pendingBytes_ = 0;
}

void StagedUpload::runChunk(uint64_t dst, uint32_t bytes, const std::string& what) {
    std::array<uint32_t, kStreamDwords> dwords{};
    const pm4::Gfx gfx = device_.caps().gfxMajor >= 12 ? pm4::Gfx::Gfx12 : pm4::Gfx::Gfx11;
    pm4::Stream s(dwords, gfx);
    s.dmaData({.source = staging_.gpu(), .destination = dst, .bytes = bytes});
    ++packets_;
    const std::string where = fmt::format("kfd tier: staging copy of {} ({} bytes to 0x{:x}) on {}", what, bytes, dst, device_.name());
    if (ring_) {
        // The kernel's fence after the job covers the copy.
        std::memcpy(control_.cpu<uint8_t>(kIbOffset), s.dwords().data(), s.size() * 4);
        const IbRange ib{control_.gpu(kIbOffset), s.size()};
        Result<uint64_t> job = ring_->submit({&ib, 1});
        if (!job) throw TierError(fmt::format("{}: {}", where, job.error().describe()));
        if (Status w = ring_->wait(*job, timeoutMs_); !w) throw TierError(fmt::format("{}: {}", where, w.error().describe()));
        return;
    }
    // RELEASE_MEM at end of pipe after the copy: its fence word says the copy has landed.
    s.releaseMem({.data = pm4::ReleaseData::Value64, .address = control_.gpu(kFenceOffset), .value = ++fenceValue_});
    if (Status w = writer_->waitForSpace(s.size(), timeoutMs_); !w) throw TierError(fmt::format("{}: {}", where, w.error().describe()));
    if (Status sub = writer_->submit(s.dwords()); !sub) throw TierError(fmt::format("{}: {}", where, sub.error().describe()));
    const Fence fence{control_.cpu<volatile uint64_t>(kFenceOffset), control_.gpu(kFenceOffset), nullptr};
    if (Status w = waitFence(device_, queue_, fence, fenceValue_, timeoutMs_); !w) throw TierError(fmt::format("{}: {}", where, w.error().describe()));
}

}  // namespace zinc::kfd
