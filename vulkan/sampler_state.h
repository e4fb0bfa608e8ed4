#pragma once
// The sampler block sample.comp reads (its k* constants): the chain's parameters, the seed
// and the first draw index, then a ring of the recent token ids for the repetition penalty,
// which the shader extends with every token it samples. Written by the host before a
// generation, copied to the device with the token state.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>

#include "runtime/sampler.h"

namespace zinc::vk {

inline constexpr int32_t kMaxDeviceTopK = 256;     // sample.comp's candidate slots
inline constexpr int32_t kMaxRecentTokens = 256;   // penalty window the device keeps

struct SamplerStateHeader {
    float temperature = 0;
    float topP = 1;
    float minP = 0;
    float repeatPenalty = 1;
    int32_t topK = 0;
    int32_t recentCapacity = 0;  // the penalty window (repeat_last_n); 0 = no penalty
    int32_t recentCount = 0;     // ids the host wrote (at most recentCapacity)
    uint32_t seedLo = 0, seedHi = 0;
    uint32_t drawBase = 0;       // the draw index of the first token sampled
    int32_t reserved[6] = {};
};
static_assert(sizeof(SamplerStateHeader) == 16 * sizeof(int32_t), "recent ids start at int 16 (sample.comp kRecent)");

inline constexpr size_t kSamplerStateBytes = sizeof(SamplerStateHeader) + sizeof(int32_t) * kMaxRecentTokens;

// The block for a generation with the chain `p` whose first draw is `drawBase`, the penalty's
// window taken from the end of `history`, at `dst` (kSamplerStateBytes). The window must fit
// (repeatLastN <= kMaxRecentTokens: the tier's samplesOnDevice checks).
inline void writeSamplerBlock(void* dst, const runtime::SamplerParams& p, uint64_t drawBase, std::span<const int32_t> history) {
    auto* header = static_cast<SamplerStateHeader*>(dst);
    *header = SamplerStateHeader{};
    header->temperature = p.temperature;
    header->topP = p.topP;
    header->minP = p.minP;
    header->repeatPenalty = p.repeatPenalty;
    header->topK = p.topK;
    const bool penalty = p.repeatPenalty != 1.0f && p.repeatLastN > 0;
    header->recentCapacity = penalty ? p.repeatLastN : 0;
    const size_t recent = penalty ? std::min(history.size(), static_cast<size_t>(p.repeatLastN)) : 0;
    header->recentCount = static_cast<int32_t>(recent);
    header->seedLo = static_cast<uint32_t>(p.seed);
    header->seedHi = static_cast<uint32_t>(p.seed >> 32);
    header->drawBase = static_cast<uint32_t>(drawBase);
    if (recent > 0)  // an empty history's data() may be null, which memcpy may not take
        std::memcpy(reinterpret_cast<int32_t*>(header + 1), history.data() + history.size() - recent, recent * sizeof(int32_t));
}

// sample.comp's scratch: a workgroup ranks each slice of kSampleSlice logits and leaves its top
// k there for the last workgroup. For `rows` logits rows sampled in one dispatch (a step of
// several sequences, a row a sampler block): a counter of slices finished per row (16 bytes
// each, zeroed with each state upload and by the row's last workgroup), then per row
// kMaxDeviceTopK logits a slice, then as many ids.
inline constexpr uint32_t kSampleSlice = 2048;
inline constexpr uint32_t sampleSlices(int64_t nVocab) {
    return static_cast<uint32_t>((nVocab + kSampleSlice - 1) / kSampleSlice);
}
inline constexpr size_t kSampleCountersBytes = 16;
inline constexpr size_t sampleRowCandidatesBytes(int64_t nVocab) {
    return size_t{2} * sizeof(int32_t) * kMaxDeviceTopK * sampleSlices(nVocab);
}
inline constexpr size_t sampleScratchBytes(int64_t nVocab, int32_t rows = 1) {
    return static_cast<size_t>(rows) * (kSampleCountersBytes + sampleRowCandidatesBytes(nVocab));
}

}  // namespace zinc::vk
