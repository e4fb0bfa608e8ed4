#pragma once
// The cpu tier's KV cache: per layer, K and V rows of kvDim floats for every position.
// fp32 so that the oracle adds no rounding of its own.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace zinc::cpu {

class KvCache {
public:
    KvCache(int32_t layers, int32_t contextLength, int32_t kvDim)
        : contextLength_(contextLength), kvDim_(kvDim),
          k_(static_cast<size_t>(layers) * static_cast<size_t>(contextLength) * static_cast<size_t>(kvDim)),
          v_(k_.size()) {}

    int32_t contextLength() const { return contextLength_; }
    float* k(int32_t layer, int32_t pos) { return k_.data() + index(layer, pos); }
    float* v(int32_t layer, int32_t pos) { return v_.data() + index(layer, pos); }
    size_t bytes() const { return (k_.size() + v_.size()) * sizeof(float); }

private:
    size_t index(int32_t layer, int32_t pos) const {
        return (static_cast<size_t>(layer) * static_cast<size_t>(contextLength_) + static_cast<size_t>(pos)) *
               static_cast<size_t>(kvDim_);
    }
    int32_t contextLength_;
    int32_t kvDim_;
    std::vector<float> k_;
    std::vector<float> v_;
};

}  // namespace zinc::cpu
