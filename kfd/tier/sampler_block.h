#pragma once
// What the GPU sampling kernel (kernels/cl/sample.cl, sample_token) works from and writes: the
// chain block — the sampler's parameters, seed and first draw index (as vulkan/sampler_state.h),
// then the generation's control words (step, live, budget, context, stop ids, end reason, the
// host's cancel word, the loop's go word) and the recent ids for the repetition penalty, in
// uncached GTT since the host writes control words while the GPU runs — the penalised logits
// scratch, and the ring of sampled ids the host reads. The CP's COND_EXEC before each queued
// token reads `live`: once the kernel clears it, the rest of the queue is skipped.
#include <cstdint>
#include <span>
#include <vector>

#include "kfd/tier/tier_memory.h"
#include "runtime/sampler.h"

namespace zinc::kfd {

// The chain block in ints (sample.cl ZKS_*).
struct SamplerChain {
    static constexpr uint32_t kStep = 10, kLive = 11, kMaxSteps = 12, kContext = 13, kStopCount = 14, kEndReason = 15,
                              kCancel = 16, kGo = 17, kLoop = 18, kStopIds = 32, kRecent = 48;
    static constexpr int32_t kMaxStopIds = 16;
    static constexpr int32_t kMaxTopK = 256;       // the kernel's candidate slots
    static constexpr int32_t kMaxRecent = 256;     // penalty window the block keeps
    static constexpr uint64_t kBytes = 4 * (kRecent + kMaxRecent);
};

// Why the GPU ended a generation (sample.cl ZKS_END_*).
enum class EndReason : int32_t { Running = 0, StopId = 1, Budget = 2, ContextFull = 3, Cancelled = 4 };
const char* endReasonName(EndReason r);

// One generation's settings for the chain block.
struct GenerationSetup {
    const runtime::SamplerParams* params = nullptr;
    uint64_t drawBase = 0;                 // the sampler's next draw index
    std::span<const int32_t> history;      // tokens fed so far, the first one of this generation included
    int32_t maxSteps = 0;                  // tokens to sample at most
    int32_t contextLength = 0;             // the step that would feed position contextLength ends it
    std::span<const int32_t> stopIds;      // a sampled id among these ends it (the id itself is returned)
    bool loop = false;                     // the persistent loop: the budget pauses (go = 0) instead of ending
};

class SamplerBlock {
public:
    static constexpr uint32_t kRingCapacity = 4096;

    SamplerBlock(Device& device, int32_t nVocab);

    // Whether the kernel can run this chain: a top-k of 1..kMaxTopK (or greedy) and a penalty
    // window of at most kMaxRecent.
    static bool supports(const runtime::SamplerParams& p);
    // Written through the CPU mapping while no submission is in flight.
    void write(const GenerationSetup& setup);
    // Stops the generation within the token the GPU is on: no further token starts.
    void cancel();
    // The persistent loop, paused at its budget (go = 0): `more` tokens more, then go on.
    void grant(int32_t more);
    bool paused() const { return word(SamplerChain::kGo) == 0; }

    int32_t steps() const;  // tokens sampled so far in this generation
    EndReason endReason() const;
    std::vector<int32_t> ids(int32_t from, int32_t to) const;

    uint64_t chain() const { return chain_.gpu(); }
    uint64_t live() const { return chain_.gpu(4 * SamplerChain::kLive); }
    uint64_t go() const { return chain_.gpu(4 * SamplerChain::kGo); }
    uint64_t scratch() const { return scratch_.gpu(); }
    uint64_t ring() const { return ring_.gpu(); }

private:
    int32_t word(uint32_t index) const;
    void store(uint32_t index, int32_t value);
    DeviceMemory chain_, scratch_, ring_;
};

}  // namespace zinc::kfd
