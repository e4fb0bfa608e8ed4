#pragma once
// The submission side of the PM4 tier: per token one submission — the token state written by
// the CP (WRITE_DATA), a GPU-clock stamp, the recorded plan as one indirect buffer, optionally
// the sampled id copied out (COPY_DATA), then RELEASE_MEMs for the end timestamp and the
// timeline fence value. Two routes to the CP carry the same packets:
//   doorbell  a queue of ours (a KFD queue, or an amdgpu user queue on umq/): head + INDIRECT_BUFFER
//             + tail + the event signal on the ring, then one doorbell;
//   cs        the kernel's ring (kfd/kernel_ring.h, the amdgpu CS ioctl): head and tail written as
//             two small IBs, the job is [head, plan, tail], completion is the kernel's syncobj.
// Several submissions may be in flight; every wait is bounded and fails with a TierError naming
// the route, the token, the fence memory and (doorbell) rptr, wptr and the packet the CP is on.
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kfd/device/device.h"
#include "kfd/device/kernel_ring.h"
#include "kfd/device/queue_writer.h"
#include "kfd/tier/tier_memory.h"
#include "pm4/stream.h"

namespace zinc::kfd {

// How a submission reaches the command processor (`--submit`).
enum class SubmitRoute : uint8_t { Doorbell, Cs };

struct SubmitterOptions {
    uint32_t timeoutMs = 60000;  // per wait; the timer covers one token's submission
    std::string dumpDir;         // --dump-pm4: write every IB once and the ring dwords submitted
    uint32_t ringBytes = 64 * 1024;
    SubmitRoute route = SubmitRoute::Doorbell;
};

// What one submission carries besides its IB.
struct TokenSubmission {
    uint64_t ibAddress = 0;
    uint32_t ibDwords = 0;
    std::string ibName;  // for the dump ("decode", "prefill-12")
    // Written into the token-state block by the CP before the IB runs.
    uint64_t stateAddress = 0;
    int32_t position = 0, nTokens = 1, kvLength = 1;
    uint64_t tokensAddress = 0;
    std::span<const int32_t> tokens;  // empty: the ids already there (argmax wrote them) stay
    // A step over rows of several sequences: the rows block (TierMemory::rows(): per row
    // {position, first KV row of its slot}, then the wanted rows), written with the ids.
    uint64_t rowsAddress = 0;
    std::span<const int32_t> rowWords;
    bool copySampledId = false;       // COPY_DATA tokens[0] into the id ring after the IB
    // Tokens in flight: the IB `repeat` times, each behind a COND_EXEC on the dword at
    // `gateAddress` (the GPU sampler's live word), so a generation the GPU ended skips the rest.
    uint32_t repeat = 1;
    uint64_t gateAddress = 0;
    std::string what;                 // "token 3 at position 17", for errors
};

class Submitter {
public:
    static constexpr uint32_t kIdRing = 4096;  // sampled ids, one slot per submission (mod)

    Submitter(Device& device, pm4::Gfx gfx, SubmitterOptions options);
    ~Submitter();  // waits (bounded) for what is in flight, unless abandoned, then destroys the queue
    Submitter(const Submitter&) = delete;
    Submitter& operator=(const Submitter&) = delete;

    // Returns the timeline value that retires this submission.
    uint64_t submit(const TokenSubmission& s, std::span<const uint32_t> ibHostCopy);
    // Extra packets straight on the ring, followed by a fence (tests: a wait nobody releases).
    uint64_t submitRaw(std::span<const uint32_t> packets, const std::string& what);
    // Waits until the timeline reaches `value`; throws TierError with the queue state.
    void wait(uint64_t value);
    uint64_t completed() const;
    uint64_t submitted() const { return next_ - 1; }
    // After a failure: what is in flight is given up; the destructor then destroys the queue (or
    // closes the kernel ring's context) at once instead of waiting for it.
    void abandon() { abandoned_ = true; }
    // The timeline fence a submission's RELEASE_MEM writes, and the value the next one writes
    // (tests aim an injected bad fence at it).
    uint64_t fenceAddress() const { return fences_.gpu(kFenceOffset); }
    uint64_t nextValue() const { return next_; }
    // What submission `value` carried ("greedy token 3 at position 7"), while it is recent.
    const std::string& what(uint64_t value) const { return what_[value % what_.size()]; }
    // The id the argmax of submission `value` wrote (valid once it retired).
    int32_t sampledId(uint64_t value) const;
    // The start and end GPU-clock stamps of submission `value` themselves, for traces.
    std::pair<uint64_t, uint64_t> gpuStamps(uint64_t value) const;
    // GPU clock ticks between the start and end stamps of submission `value` (0 if unknown).
    uint64_t gpuTicks(uint64_t value) const;

    // What the host did to the GPU so far: doorbells rung (doorbell route) and calls into the
    // kernel (CS submissions, and waits that found the fence not yet reached and blocked).
    struct HostCounts {
        int64_t doorbells = 0, syscalls = 0;
    };
    HostCounts hostCounts() const { return counts_; }

    // "doorbell, queue 3" / "cs, amdgpu CS, context 1, compute ring 0 (...)".
    std::string route() const;
    // The route's state for an error report: the queue's rptr/wptr/packet, or the CS jobs.
    std::string describeState() const;
    // The queue's state (the simulated GPU also says where its CP is in an IB); on the CS route
    // what the kernel ring can tell (the simulated driver: its CP as it stood at its last reset).
    std::optional<QueueState> queueState() const {
        return kernelRing_ ? kernelRing_->queueState() : std::optional<QueueState>(device_.readQueueState(queue_));
    }
    bool usesKernelRing() const { return kernelRing_ != nullptr; }
    // How long one job may run before the kernel resets the ring (CS); 0 on a queue of ours.
    uint32_t jobTimeoutMs() const { return kernelRing_ ? kernelRing_->jobTimeoutMs() : 0; }
    Device& device() { return device_; }
    // --dump-pm4: writes `ib` as ib-NAME.pm4 once (submit() does it for the IB it submits).
    void dumpIb(const std::string& ibName, std::span<const uint32_t> ib);

private:
    // Puts head, the IB (when ib.dwords), tail and the fence on the route.
    uint64_t finishSubmission(std::span<const uint32_t> head, IbRange ib, pm4::Stream& tail, const std::string& what);
    void submitOnRing(std::span<const uint32_t> head, IbRange ib, pm4::Stream& tail, const std::string& what);
    void checkFence(uint64_t value) const;
    std::string resetNote() const;  // cs: "; context 1 was reset by the kernel (guilty: ...)", or ""
    void submitAsJob(uint64_t value, std::span<const uint32_t> head, IbRange ib, pm4::Stream& tail, const std::string& what);

    static constexpr uint32_t kStampSlots = 256;
    static constexpr uint64_t kFenceOffset = 0, kStampsOffset = 64, kIdsOffset = kStampsOffset + 16 * kStampSlots;
    // cs: head + tail IBs of jobs in flight; a head holds up to maxBatch ids and, for a step over
    // rows of several sequences, 3 x maxBatch row words (512-row steps: 2,048 dwords and packets)
    static constexpr uint32_t kJobSlots = 16, kJobSlotDwords = 4096;

    Device& device_;
    pm4::Gfx gfx_;
    SubmitterOptions options_;
    Queue queue_;                        // doorbell
    std::unique_ptr<QueueWriter> writer_;
    Event event_;
    std::unique_ptr<KernelRing> kernelRing_;  // cs
    DeviceMemory jobIbs_;                     // cs: per slot a head IB then a tail IB (GTT)
    std::vector<uint64_t> jobOf_ = std::vector<uint64_t>(64);  // cs: timeline value -> kernel job
    DeviceMemory fences_;  // timeline fence, timestamps, sampled ids (GTT, uncached)
    std::vector<uint32_t> storage_, tailStorage_, ringStorage_;
    uint64_t next_ = 1;
    std::vector<std::string> what_;  // per in-flight value, for errors (value % size)
    std::ofstream ringDump_;
    std::vector<std::string> dumpedIbs_;
    HostCounts counts_;
    bool abandoned_ = false;
};

}  // namespace zinc::kfd
