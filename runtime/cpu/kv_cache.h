#pragma once
// The cpu tier's KV cache: per layer, K and V rows of kvDim halves (IEEE binary16) for every
// position -- llama.cpp's default cache type, which the goldens were computed with.
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
    uint16_t* k(int32_t layer, int32_t pos) { return k_.data() + index(layer, pos); }
    uint16_t* v(int32_t layer, int32_t pos) { return v_.data() + index(layer, pos); }
    size_t bytes() const { return (k_.size() + v_.size()) * sizeof(uint16_t); }

private:
    size_t index(int32_t layer, int32_t pos) const {
        return (static_cast<size_t>(layer) * static_cast<size_t>(contextLength_) + static_cast<size_t>(pos)) *
               static_cast<size_t>(kvDim_);
    }
    int32_t contextLength_;
    int32_t kvDim_;
    std::vector<uint16_t> k_;
    std::vector<uint16_t> v_;
};

}  // namespace zinc::cpu
