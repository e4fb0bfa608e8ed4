#include "kfd/tier/sampler_block.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "runtime/tier.h"
#include "kfd/device/load_acquire.h"

namespace zinc::kfd {
namespace {

uint32_t bitsOf(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

}  // namespace

const char* endReasonName(EndReason r) {
    switch (r) {
        case EndReason::Running: return "running";
        case EndReason::StopId: return "stop token";
        case EndReason::Budget: return "token budget";
        case EndReason::ContextFull: return "context full";
        case EndReason::Cancelled: return "cancelled";
    }
    return "?";
}

// The chain block holds words the host writes while the GPU runs (cancel, the loop's grant) and
// the CP polls (live, go): uncached GTT, as the fence page. The ring is read by the host: GTT.
SamplerBlock::SamplerBlock(Device& device, int32_t nVocab)
    : chain_(device, SamplerChain::kBytes, MemoryKind::Gtt, "sampler chain block", {.uncached = true}),
      scratch_(device, 4 * uint64_t(nVocab), MemoryKind::Vram, "penalised logits"),
      ring_(device, 4 * uint64_t(kRingCapacity), MemoryKind::Gtt, "sampled id ring", {.uncached = true}) {}

bool SamplerBlock::supports(const runtime::SamplerParams& p) {
    const bool penalty = p.repeatPenalty != 1.0f && p.repeatLastN != 0;
    if (penalty && (p.repeatLastN < 0 || p.repeatLastN > SamplerChain::kMaxRecent)) return false;
    return p.greedy() || (p.topK >= 1 && p.topK <= SamplerChain::kMaxTopK);
}

void SamplerBlock::write(const GenerationSetup& s) {
    const runtime::SamplerParams& p = *s.params;
    if (s.stopIds.size() > size_t(SamplerChain::kMaxStopIds))
        throw runtime::TierError(fmt::format("kfd tier: {} stop tokens; the GPU sampler keeps at most {}", s.stopIds.size(),
                                             SamplerChain::kMaxStopIds));
    uint32_t* w = chain_.cpu<uint32_t>();
    std::fill_n(w, SamplerChain::kBytes / 4, 0u);
    w[0] = bitsOf(p.temperature);
    w[1] = bitsOf(p.topP);
    w[2] = bitsOf(p.minP);
    w[3] = bitsOf(p.repeatPenalty);
    w[4] = uint32_t(p.topK);
    const bool penalty = p.repeatPenalty != 1.0f && p.repeatLastN > 0;
    const size_t recent = penalty ? std::min(s.history.size(), size_t(p.repeatLastN)) : 0;
    w[5] = penalty ? uint32_t(p.repeatLastN) : 0;
    w[6] = uint32_t(recent);
    w[7] = uint32_t(p.seed);
    w[8] = uint32_t(p.seed >> 32);
    w[9] = uint32_t(s.drawBase);
    w[SamplerChain::kStep] = 0;
    w[SamplerChain::kLive] = s.maxSteps > 0 ? 1 : 0;
    w[SamplerChain::kMaxSteps] = uint32_t(s.maxSteps);
    w[SamplerChain::kContext] = uint32_t(s.contextLength);
    w[SamplerChain::kStopCount] = uint32_t(s.stopIds.size());
    w[SamplerChain::kGo] = 1;
    w[SamplerChain::kLoop] = s.loop ? 1 : 0;
    std::copy(s.stopIds.begin(), s.stopIds.end(), reinterpret_cast<int32_t*>(w + SamplerChain::kStopIds));
    std::copy(s.history.end() - ptrdiff_t(recent), s.history.end(), reinterpret_cast<int32_t*>(w + SamplerChain::kRecent));
    std::atomic_thread_fence(std::memory_order_release);
}

// live = 0 makes the CP skip every token not begun (COND_EXEC); cancel ends the one the kernel
// is on; go = 1 lets a paused loop run to its exit.
void SamplerBlock::cancel() {
    store(SamplerChain::kCancel, 1);
    store(SamplerChain::kLive, 0);
    store(SamplerChain::kGo, 1);
}

void SamplerBlock::grant(int32_t more) {
    store(SamplerChain::kMaxSteps, word(SamplerChain::kMaxSteps) + more);
    store(SamplerChain::kGo, 1);  // after the budget: the CP's WAIT_REG_MEM lets the loop go on
}

void SamplerBlock::store(uint32_t index, int32_t value) {
    std::atomic_ref<int32_t>(chain_.cpu<int32_t>()[index]).store(value, std::memory_order_release);
}

int32_t SamplerBlock::word(uint32_t index) const { return loadAcquire(chain_.cpu<int32_t>() + index); }
int32_t SamplerBlock::steps() const { return word(SamplerChain::kStep); }
EndReason SamplerBlock::endReason() const { return EndReason(word(SamplerChain::kEndReason)); }

std::vector<int32_t> SamplerBlock::ids(int32_t from, int32_t to) const {
    std::vector<int32_t> out;
    for (int32_t i = from; i < to; ++i) out.push_back(loadAcquire(ring_.cpu<int32_t>() + uint32_t(i) % kRingCapacity));
    return out;
}

}  // namespace zinc::kfd
