#pragma once
// The cpu tier's KV cache: K and V rows of kvDim values laid out by graph::KvLayout (a row per
// position on global layers, a ring on sliding-window layers). Halves (IEEE binary16,
// llama.cpp's default cache type, which the goldens were computed with), or floats in the F32
// precision mode.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/kv_layout.h"

namespace zinc::cpu {

class KvCache {
public:
    KvCache(const graph::KvLayout& layout, int32_t kvDim, bool halves) : layout_(layout), kvDim_(kvDim) {
        const size_t n = static_cast<size_t>(layout.rows) * static_cast<size_t>(kvDim);
        if (halves) {
            kHalf_.resize(n);
            vHalf_.resize(n);
        } else {
            kFull_.resize(n);
            vFull_.resize(n);
        }
    }

    const graph::KvLayer& layer(int32_t il) const { return layout_.layer(il); }
    bool halves() const { return !kHalf_.empty(); }
    // The row holding position `pos` of layer `il` (pos 0: the layer's first row; rows kvDim apart).
    uint16_t* kHalf(int32_t il, int32_t pos) { return kHalf_.data() + index(il, pos); }
    uint16_t* vHalf(int32_t il, int32_t pos) { return vHalf_.data() + index(il, pos); }
    float* kFull(int32_t il, int32_t pos) { return kFull_.data() + index(il, pos); }
    float* vFull(int32_t il, int32_t pos) { return vFull_.data() + index(il, pos); }
    size_t bytes() const { return (kHalf_.size() + vHalf_.size()) * 2 + (kFull_.size() + vFull_.size()) * 4; }

private:
    size_t index(int32_t il, int32_t pos) const {
        const graph::KvLayer& l = layout_.layer(il);
        return static_cast<size_t>(l.firstRow + l.slot(pos)) * static_cast<size_t>(kvDim_);
    }
    graph::KvLayout layout_;
    int32_t kvDim_;
    std::vector<uint16_t> kHalf_, vHalf_;
    std::vector<float> kFull_, vFull_;
};

}  // namespace zinc::cpu
