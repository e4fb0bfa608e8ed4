#pragma once
// The ring side of the kfd tier: one PM4 compute queue, and per token one submission —
// the token state written by the CP (WRITE_DATA), a GPU-clock stamp, the recorded plan as one
// INDIRECT_BUFFER, optionally the sampled id copied out (COPY_DATA), then RELEASE_MEMs for the
// end timestamp and the timeline fence value, and one doorbell. Several submissions may be in
// flight; every wait is bounded and fails with a TierError naming the queue, the token, rptr,
// wptr, the fence memory and the packet the CP is on.
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kfd/device.h"
#include "kfd/queue_writer.h"
#include "kfd/tier/tier_memory.h"
#include "pm4/stream.h"

namespace zinc::kfd {

struct SubmitterOptions {
    uint32_t timeoutMs = 60000;  // per wait; the timer covers one token's submission
    std::string dumpDir;         // --dump-pm4: write every IB once and the ring dwords submitted
    uint32_t ringBytes = 64 * 1024;
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
    bool copySampledId = false;       // COPY_DATA tokens[0] into the id ring after the IB
    std::string what;                 // "token 3 at position 17", for errors
};

class Submitter {
public:
    static constexpr uint32_t kIdRing = 4096;  // sampled ids, one slot per submission (mod)

    Submitter(Device& device, pm4::Gfx gfx, SubmitterOptions options);
    ~Submitter();  // waits (bounded) for what is in flight, then destroys the queue
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
    // The id the argmax of submission `value` wrote (valid once it retired).
    int32_t sampledId(uint64_t value) const;
    // The start and end GPU-clock stamps of submission `value` themselves, for traces.
    std::pair<uint64_t, uint64_t> gpuStamps(uint64_t value) const;
    // GPU clock ticks between the start and end stamps of submission `value` (0 if unknown).
    uint64_t gpuTicks(uint64_t value) const;

    const Queue& queue() const { return queue_; }
    Device& device() { return device_; }

private:
    // Submits storage_[0, prefixDwords) followed by `s` (a stream over the rest) and the fence.
    uint64_t finishSubmission(pm4::Stream& s, uint32_t prefixDwords, const std::string& what);
    void dumpIb(const std::string& ibName, std::span<const uint32_t> ib);

    static constexpr uint32_t kStampSlots = 256;
    static constexpr uint64_t kFenceOffset = 0, kStampsOffset = 64, kIdsOffset = kStampsOffset + 16 * kStampSlots;

    Device& device_;
    pm4::Gfx gfx_;
    SubmitterOptions options_;
    Queue queue_;
    std::unique_ptr<QueueWriter> writer_;
    Event event_;
    DeviceMemory fences_;  // timeline fence, timestamps, sampled ids (GTT, uncached)
    std::vector<uint32_t> storage_;
    uint64_t next_ = 1;
    std::vector<std::string> what_;  // per in-flight value, for errors (value % size)
    std::ofstream ringDump_;
    std::vector<std::string> dumpedIbs_;
};

}  // namespace zinc::kfd
