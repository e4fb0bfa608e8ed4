#include "kfd/tier/submitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>

#include "kfd/tier/plan_builder.h"
#include "runtime/tier.h"
#include "kfd/device/load_acquire.h"

namespace zinc::kfd {

using runtime::TierError;

namespace {

void writeDwords(const std::filesystem::path& path, std::span<const uint32_t> dwords) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(dwords.data()), std::streamsize(dwords.size() * 4));
    if (!out) throw TierError(fmt::format("kfd tier: --dump-pm4: cannot write {}", path.string()));
}

}  // namespace

Submitter::Submitter(Device& device, pm4::Gfx gfx, SubmitterOptions options)
    : device_(device), gfx_(gfx), options_(std::move(options)), storage_(4096), tailStorage_(256), what_(64) {
    if (options_.route == SubmitRoute::Cs) {
        Result<std::unique_ptr<KernelRing>> ring = device.openKernelRing();
        if (!ring) throw TierError(fmt::format("kfd tier: --submit=cs on {}: {}", device.name(), ring.error().describe()));
        kernelRing_ = std::move(*ring);
        jobIbs_ = DeviceMemory(device, uint64_t(kJobSlots) * 2 * kJobSlotDwords * 4, MemoryKind::Gtt, "CS head and tail IBs", {.uncached = true});
    } else {
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
    }
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
        if (!abandoned_ && completed() < submitted()) wait(submitted());
        // Abandoned on the CS route: the kernel still runs (or has signalled after a reset) the
        // jobs in flight, whose head and tail IBs are freed below; wait for their syncobjs.
        if (abandoned_ && kernelRing_ && submitted() > 0) (void)kernelRing_->wait(jobOf_[submitted() % jobOf_.size()], options_.timeoutMs);
    } catch (const std::exception&) {
        // Destroying the queue below stops the CP whatever it was doing.
    }
    fences_ = DeviceMemory();
    jobIbs_ = DeviceMemory();
    kernelRing_.reset();
    if (options_.route == SubmitRoute::Doorbell) {
        (void)device_.destroyEvent(event_);
        (void)device_.destroyQueue(queue_);
    }
}

std::string Submitter::route() const {
    if (kernelRing_) return "cs, " + kernelRing_->name();
    return "doorbell, queue " + std::to_string(queue_.id);
}

std::string Submitter::describeState() const {
    if (kernelRing_) return kernelRing_->describe();
    return device_.readQueueState(queue_).describe();
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
    pm4::Stream head(storage_, gfx_);
    // The token state: the previous IB ended with CS_PARTIAL_FLUSH, so no dispatch still reads it.
    if (t.stateAddress)
        head.writeData({.address = t.stateAddress}, {uint32_t(t.position), uint32_t(t.nTokens), uint32_t(t.kvLength)});
    if (!t.tokens.empty()) {
        if (t.tokens.size() > 1024) throw TierError(fmt::format("kfd tier: {}: {} token ids in one submission", t.what, t.tokens.size()));
        head.writeData({.address = t.tokensAddress}, std::span<const uint32_t>(reinterpret_cast<const uint32_t*>(t.tokens.data()), t.tokens.size()));
    }
    if (!t.rowWords.empty()) {
        if (t.rowWords.size() > 2048) throw TierError(fmt::format("kfd tier: {}: {} row words in one submission", t.what, t.rowWords.size()));
        head.writeData({.address = t.rowsAddress},
                       std::span<const uint32_t>(reinterpret_cast<const uint32_t*>(t.rowWords.data()), t.rowWords.size()));
    }
    head.copyData({.src = pm4::CopySrc::GpuClock, .dst = pm4::CopyDst::Memory, .destination = stamp, .count64 = true});
    IbRange ib{t.ibAddress, t.ibDwords};
    if (t.gateAddress) {
        // COND_EXEC (5 dwords) + INDIRECT_BUFFER (4) per token; the CP reads the live word after the
        // previous plan's closing CS_PARTIAL_FLUSH, so the kernel's store is in the L2.
        if (t.repeat * 9 + 64 > storage_.size())
            throw TierError(fmt::format("kfd tier: {}: {} tokens do not fit one submission", t.what, t.repeat));
        for (uint32_t i = 0; i < t.repeat; ++i) {
            head.condExec(t.gateAddress, 4);
            head.indirectBuffer(t.ibAddress, t.ibDwords);
        }
        ib = {};
    }
    pm4::Stream tail(tailStorage_, gfx_);
    if (t.copySampledId)
        tail.copyData({.src = pm4::CopySrc::Memory, .dst = pm4::CopyDst::Memory, .source = t.tokensAddress,
                       .destination = fences_.gpu(kIdsOffset + 4 * (value % kIdRing))});
    tail.releaseMem({.gcrCntl = kReleaseFlush, .data = pm4::ReleaseData::GpuClock, .address = stamp + 8});
    if (!options_.dumpDir.empty()) dumpIb(t.ibName, ibHostCopy);
    return finishSubmission(head.dwords(), ib, tail, t.what);
}

uint64_t Submitter::submitRaw(std::span<const uint32_t> packets, const std::string& what) {
    if (packets.size() + 64 > storage_.size()) throw TierError(fmt::format("kfd tier: {}: {} dwords is too large a raw submission", what, packets.size()));
    std::copy(packets.begin(), packets.end(), storage_.begin());
    pm4::Stream tail(tailStorage_, gfx_);
    return finishSubmission(std::span<const uint32_t>(storage_).first(packets.size()), {}, tail, what);
}

uint64_t Submitter::finishSubmission(std::span<const uint32_t> head, IbRange ib, pm4::Stream& tail, const std::string& what) {
    const uint64_t value = next_++;
    // The timeline value, after every write of the submission is visible to the host.
    tail.releaseMem({.gcrCntl = kReleaseFlush, .data = pm4::ReleaseData::Value64, .address = fences_.gpu(kFenceOffset), .value = value});
    what_[value % what_.size()] = what;
    if (kernelRing_) {
        submitAsJob(value, head, ib, tail, what);
    } else {
        // Then the event signal that wakes a waiting host (tinygrad's signalling pair, FACTS.md §5.7).
        tail.releaseMem({.data = pm4::ReleaseData::Value32, .interrupt = pm4::ReleaseInterrupt::InterruptAfterWriteConfirm,
                         .address = event_.mailboxGpuVa, .value = event_.id, .intCtxId = event_.id});
        submitOnRing(head, ib, tail, what);
    }
    return value;
}

void Submitter::submitOnRing(std::span<const uint32_t> head, IbRange ib, pm4::Stream& tail, const std::string& what) {
    std::vector<uint32_t>& ring = ringStorage_;
    ring.assign(head.begin(), head.end());
    if (ib.dwords) {
        uint32_t packet[8];
        pm4::Stream s(packet, gfx_);
        s.indirectBuffer(ib.address, ib.dwords);
        ring.insert(ring.end(), s.dwords().begin(), s.dwords().end());
    }
    ring.insert(ring.end(), tail.dwords().begin(), tail.dwords().end());
    if (Status w = writer_->waitForSpace(uint32_t(ring.size()), options_.timeoutMs); !w)
        throw TierError(fmt::format("kfd tier: {}: no room on the ring: {}", what, w.error().describe()));
    if (Status w = writer_->submit(ring); !w) throw TierError(fmt::format("kfd tier: {}: submitting: {}", what, w.error().describe()));
    ++counts_.doorbells;
    if (ringDump_.is_open()) {
        ringDump_.write(reinterpret_cast<const char*>(ring.data()), std::streamsize(ring.size() * 4));
        ringDump_.flush();
    }
}

// The CS route: head and tail become IBs of their own in this value's slot (reused once the job
// that had it retired); the kernel puts [head, plan, tail] on its ring.
void Submitter::submitAsJob(uint64_t value, std::span<const uint32_t> head, IbRange ib, pm4::Stream& tail, const std::string& what) {
    if (value > kJobSlots && completed() < value - kJobSlots) wait(value - kJobSlots);
    if (head.size() > kJobSlotDwords || tail.size() > kJobSlotDwords)
        throw TierError(fmt::format("kfd tier: {}: {} + {} dwords do not fit a CS job slot", what, head.size(), tail.size()));
    const uint64_t slot = uint64_t(value % kJobSlots) * 2 * kJobSlotDwords * 4;
    std::vector<IbRange> ibs;
    if (!head.empty()) {
        std::copy(head.begin(), head.end(), jobIbs_.cpu<uint32_t>(slot));
        ibs.push_back({jobIbs_.gpu(slot), uint32_t(head.size())});
    }
    if (ib.dwords) ibs.push_back(ib);
    std::copy(tail.dwords().begin(), tail.dwords().end(), jobIbs_.cpu<uint32_t>(slot + kJobSlotDwords * 4));
    ibs.push_back({jobIbs_.gpu(slot + kJobSlotDwords * 4), tail.size()});
    Result<uint64_t> job = kernelRing_->submit(ibs);
    if (!job) throw TierError(fmt::format("kfd tier: {}: {}", what, job.error().describe()));
    jobOf_[value % jobOf_.size()] = *job;
    ++counts_.syscalls;
    if (ringDump_.is_open()) {
        ringDump_.write(reinterpret_cast<const char*>(head.data()), std::streamsize(head.size() * 4));
        ringDump_.write(reinterpret_cast<const char*>(tail.dwords().data()), std::streamsize(tail.size() * 4));
        ringDump_.flush();
    }
}

void Submitter::wait(uint64_t value) {
    if (completed() >= value) return checkFence(value);
    ++counts_.syscalls;
    if (kernelRing_) {
        const uint64_t job = jobOf_[value % jobOf_.size()];
        if (Status s = kernelRing_->wait(job, options_.timeoutMs); !s)
            throw TierError(fmt::format("kfd tier: {}: {} (timeline value {}, {} retired) did not retire: {}{}", route(), what_[value % what_.size()], value,
                                        completed(), s.error().describe(), resetNote()));
        if (completed() < value)
            throw TierError(fmt::format("kfd tier: {}: {}: the kernel signalled job {} but the fence at {:#x} holds {} (waited for {}): the job did "
                                        "not run to its end (a GPU fault or reset; on Linux see dmesg){}",
                                        route(), what_[value % what_.size()], job, fences_.gpu(kFenceOffset), completed(), value, resetNote()));
        return checkFence(value);
    }
    const Fence fence{fences_.cpu<uint64_t>(kFenceOffset), fences_.gpu(kFenceOffset), &event_};
    if (Status s = waitFence(device_, queue_, fence, value, options_.timeoutMs); !s) {
        // A queue that ran dry with the fence short wrote the fence wrong (or skipped it).
        const QueueState state = device_.readQueueState(queue_);
        const bool dry = !state.fault && state.ringDwords && state.pendingDwords() == 0;
        throw TierError(fmt::format("kfd tier: queue {} on {}: {} (timeline value {}, {} retired) did not retire: {}; event {} "
                                    "mailbox at {:#x} holds {:#x}{}",
                                    queue_.id, device_.name(), what_[value % what_.size()], value, completed(), s.error().describe(),
                                    event_.id, event_.mailboxGpuVa, loadAcquire(const_cast<const uint64_t*>(event_.mailbox)),
                                    dry ? "; the queue ran dry (rptr == wptr) without writing this value: a bad fence" : ""));
    }
    checkFence(value);
}

// The timeline only moves forward to values we submitted: anything past them is a fence the GPU
// wrote wrong, and every wait it would let through is unfounded.
void Submitter::checkFence(uint64_t value) const {
    const uint64_t fence = completed();
    if (fence <= submitted()) return;
    throw TierError(fmt::format("kfd tier: {}: {} (timeline value {}): bad fence: the fence at {:#x} holds {:#x}, past the {} submission(s) made",
                                route(), what_[value % what_.size()], value, fences_.gpu(kFenceOffset), fence, submitted()));
}

std::string Submitter::resetNote() const {
    if (!kernelRing_) return "";
    const std::string state = kernelRing_->resetState();
    return state.empty() ? "" : "; " + state;
}

void Submitter::dumpIb(const std::string& ibName, std::span<const uint32_t> ib) {
    if (options_.dumpDir.empty()) return;
    for (const std::string& done : dumpedIbs_)
        if (done == ibName) return;
    writeDwords(std::filesystem::path(options_.dumpDir) / ("ib-" + ibName + ".pm4"), ib);
    dumpedIbs_.push_back(ibName);
}

}  // namespace zinc::kfd
