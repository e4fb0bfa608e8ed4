#pragma once
// The cpu tier's KV cache: per layer, K and V rows of kvDim values for every position. Halves
// (IEEE binary16, llama.cpp's default cache type, which the goldens were computed with), or
// floats in the F32 precision mode. With several sequence slots (continuous batching) each slot
// has its own region of every layer; the two-argument accessors address slot 0.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace zinc::cpu {

class KvCache {
public:
    KvCache(int32_t layers, int32_t contextLength, int32_t kvDim, bool halves, int32_t slots = 1)
        : layers_(layers), contextLength_(contextLength), kvDim_(kvDim), slots_(slots) {
        const size_t n = static_cast<size_t>(slots) * static_cast<size_t>(layers) * static_cast<size_t>(contextLength) *
                         static_cast<size_t>(kvDim);
        if (halves) {
            kHalf_.resize(n);
            vHalf_.resize(n);
        } else {
            kFull_.resize(n);
            vFull_.resize(n);
        }
    }

    int32_t contextLength() const { return contextLength_; }
    int32_t slots() const { return slots_; }
    bool halves() const { return !kHalf_.empty(); }
    uint16_t* kHalf(int32_t layer, int32_t pos) { return kHalf(0, layer, pos); }
    uint16_t* vHalf(int32_t layer, int32_t pos) { return vHalf(0, layer, pos); }
    float* kFull(int32_t layer, int32_t pos) { return kFull(0, layer, pos); }
    float* vFull(int32_t layer, int32_t pos) { return vFull(0, layer, pos); }
    uint16_t* kHalf(int32_t slot, int32_t layer, int32_t pos) { return kHalf_.data() + index(slot, layer, pos); }
    uint16_t* vHalf(int32_t slot, int32_t layer, int32_t pos) { return vHalf_.data() + index(slot, layer, pos); }
    float* kFull(int32_t slot, int32_t layer, int32_t pos) { return kFull_.data() + index(slot, layer, pos); }
    float* vFull(int32_t slot, int32_t layer, int32_t pos) { return vFull_.data() + index(slot, layer, pos); }
    size_t bytes() const { return (kHalf_.size() + vHalf_.size()) * 2 + (kFull_.size() + vFull_.size()) * 4; }

private:
    size_t index(int32_t slot, int32_t layer, int32_t pos) const {
        const size_t region = static_cast<size_t>(slot) * static_cast<size_t>(layers_) + static_cast<size_t>(layer);
        return (region * static_cast<size_t>(contextLength_) + static_cast<size_t>(pos)) * static_cast<size_t>(kvDim_);
    }
    int32_t layers_;
    int32_t contextLength_;
    int32_t kvDim_;
    int32_t slots_;
    std::vector<uint16_t> kHalf_, vHalf_;
    std::vector<float> kFull_, vFull_;
};

}  // namespace zinc::cpu
