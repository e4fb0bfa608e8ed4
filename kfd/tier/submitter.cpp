#include "kfd/tier/submitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>

#include "kfd/tier/plan_builder.h"
#include "runtime/tier.h"

namespace zinc::kfd {

using runtime::TierError;

namespace {

template <class T> T loadAcquire(const T* p) { return std::atomic_ref<T>(*const_cast<T*>(p)).load(std::memory_order_acquire); }

void writeDwords(const std::filesystem::path& path, std::span<const uint32_t> dwords) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(dwords.data()), std::streamsize(dwords.size() * 4));
    if (!out) throw TierError(fmt::format("kfd tier: --dump-pm4: cannot write {}", path.string()));
}

}  // namespace

Submitter::Submitter(Device& device, pm4::Gfx gfx, SubmitterOptions options)
    : device_(device), gfx_(gfx), options_(std::move(options)), storage_(4096), what_(64) {
    Result<Queue> q = device.createQueue({.ringBytes = options_.ringBytes});
    if (!q) throw TierError(fmt::format("kfd tier: creating a compute queue on {}: {}", device.name(), q.error().describe()));
    queue_ = *q;
    writer_ = std::make_unique<QueueWriter>(device, queue_);
    Result<Event> e = device.createEvent(true);
    if (!e) {
        (void)device.destroyQueue(queue_);
        throw TierError(fmt::format("kfd tier: creating the fence event on {}: {}", device.name(), e.error().describe()));
    }
    event_ = *e;
    fences_ = DeviceMemory(device, kIdsOffset + 4 * kIdRing, MemoryKind::Gtt, "fence and timestamp page", {.uncached = true});
    if (!options_.dumpDir.empty()) {
        std::filesystem::create_directories(options_.dumpDir);
        ringDump_.open(std::filesystem::path(options_.dumpDir) / "ring.pm4", std::ios::binary | std::ios::trunc);
        if (!ringDump_) throw TierError(fmt::format("kfd tier: --dump-pm4: cannot write {}/ring.pm4", options_.dumpDir));
    }
}

Submitter::~Submitter() {
    try {
        // Bounded more tightly than a token: a hung GPU must not hold the process at exit.
        options_.timeoutMs = std::min<uint32_t>(options_.timeoutMs, 5000);
        if (completed() < submitted()) wait(submitted());
    } catch (const std::exception&) {
        // Destroying the queue below stops the CP whatever it was doing.
    }
    fences_ = DeviceMemory();
    (void)device_.destroyEvent(event_);
    (void)device_.destroyQueue(queue_);
}

uint64_t Submitter::completed() const { return loadAcquire(fences_.cpu<uint64_t>(kFenceOffset)); }

int32_t Submitter::sampledId(uint64_t value) const { return loadAcquire(fences_.cpu<int32_t>(kIdsOffset + 4 * (value % kIdRing))); }

std::pair<uint64_t, uint64_t> Submitter::gpuStamps(uint64_t value) const {
    const uint64_t slot = kStampsOffset + 16 * (value % kStampSlots);
    return {loadAcquire(fences_.cpu<uint64_t>(slot)), loadAcquire(fences_.cpu<uint64_t>(slot + 8))};
}

uint64_t Submitter::gpuTicks(uint64_t value) const {
    const uint64_t slot = kStampsOffset + 16 * (value % kStampSlots);
    const uint64_t begin = loadAcquire(fences_.cpu<uint64_t>(slot)), end = loadAcquire(fences_.cpu<uint64_t>(slot + 8));
    return end > begin ? end - begin : 0;
}

uint64_t Submitter::submit(const TokenSubmission& t, std::span<const uint32_t> ibHostCopy) {
    const uint64_t value = next_;
    const uint64_t stamp = fences_.gpu(kStampsOffset + 16 * (value % kStampSlots));
    pm4::Stream s(storage_, gfx_);
    // The token state: the previous IB ended with CS_PARTIAL_FLUSH, so no dispatch still reads it.
    if (t.stateAddress)
        s.writeData({.address = t.stateAddress}, {uint32_t(t.position), uint32_t(t.nTokens), uint32_t(t.kvLength)});
    if (!t.tokens.empty()) {
        if (t.tokens.size() > 1024) throw TierError(fmt::format("kfd tier: {}: {} token ids in one submission", t.what, t.tokens.size()));
        s.writeData({.address = t.tokensAddress}, std::span<const uint32_t>(reinterpret_cast<const uint32_t*>(t.tokens.data()), t.tokens.size()));
    }
    s.copyData({.src = pm4::CopySrc::GpuClock, .dst = pm4::CopyDst::Memory, .destination = stamp, .count64 = true});
    s.indirectBuffer(t.ibAddress, t.ibDwords);
    if (t.copySampledId)
        s.copyData({.src = pm4::CopySrc::Memory, .dst = pm4::CopyDst::Memory, .source = t.tokensAddress,
                    .destination = fences_.gpu(kIdsOffset + 4 * (value % kIdRing))});
    s.releaseMem({.gcrCntl = kReleaseFlush, .data = pm4::ReleaseData::GpuClock, .address = stamp + 8});
    if (!options_.dumpDir.empty()) dumpIb(t.ibName, ibHostCopy);
    return finishSubmission(s, 0, t.what);
}

uint64_t Submitter::submitRaw(std::span<const uint32_t> packets, const std::string& what) {
    if (packets.size() + 64 > storage_.size()) throw TierError(fmt::format("kfd tier: {}: {} dwords is too large a raw submission", what, packets.size()));
    std::copy(packets.begin(), packets.end(), storage_.begin());
    pm4::Stream s(std::span<uint32_t>(storage_).subspan(packets.size()), gfx_);
    return finishSubmission(s, uint32_t(packets.size()), what);
}

uint64_t Submitter::finishSubmission(pm4::Stream& s, uint32_t prefixDwords, const std::string& what) {
    const uint64_t value = next_++;
    // The timeline value, after every write of the submission is visible to the host, then the
    // KFD event signal that wakes a waiting host (tinygrad's signalling pair, FACTS.md §5.7).
    s.releaseMem({.gcrCntl = kReleaseFlush, .data = pm4::ReleaseData::Value64, .address = fences_.gpu(kFenceOffset), .value = value});
    s.releaseMem({.data = pm4::ReleaseData::Value32, .interrupt = pm4::ReleaseInterrupt::InterruptAfterWriteConfirm,
                  .address = event_.mailboxGpuVa, .value = event_.id, .intCtxId = event_.id});
    what_[value % what_.size()] = what;
    const std::span<const uint32_t> dwords(storage_.data(), prefixDwords + s.size());
    if (Status w = writer_->waitForSpace(uint32_t(dwords.size()), options_.timeoutMs); !w)
        throw TierError(fmt::format("kfd tier: {}: no room on the ring: {}", what, w.error().describe()));
    if (Status w = writer_->submit(dwords); !w)
        throw TierError(fmt::format("kfd tier: {}: submitting: {}", what, w.error().describe()));
    if (ringDump_.is_open()) {
        ringDump_.write(reinterpret_cast<const char*>(dwords.data()), std::streamsize(dwords.size() * 4));
        ringDump_.flush();
    }
    return value;
}

void Submitter::wait(uint64_t value) {
    const Fence fence{fences_.cpu<uint64_t>(kFenceOffset), fences_.gpu(kFenceOffset), &event_};
    if (Status s = waitFence(device_, queue_, fence, value, options_.timeoutMs); !s)
        throw TierError(fmt::format("kfd tier: queue {} on {}: {} (timeline value {}, {} retired) did not retire: {}; event {} "
                                    "mailbox at {:#x} holds {:#x}",
                                    queue_.id, device_.name(), what_[value % what_.size()], value, completed(), s.error().describe(),
                                    event_.id, event_.mailboxGpuVa, loadAcquire(const_cast<const uint64_t*>(event_.mailbox))));
}

void Submitter::dumpIb(const std::string& ibName, std::span<const uint32_t> ib) {
    for (const std::string& done : dumpedIbs_)
        if (done == ibName) return;
    writeDwords(std::filesystem::path(options_.dumpDir) / ("ib-" + ibName + ".pm4"), ib);
    dumpedIbs_.push_back(ibName);
}

}  // namespace zinc::kfd
