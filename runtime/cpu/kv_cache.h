#pragma once
// The cpu tier's KV cache: K and V rows of kvDim values laid out by graph::KvLayout (a row per
// position on global layers, a ring on sliding-window layers). Halves (IEEE binary16,
// llama.cpp's default cache type, which the goldens were computed with), or floats in the F32
// precision mode. With several sequence slots (continuous batching) each slot has its own copy
// of the whole layout; the two-argument accessors address slot 0.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/kv_layout.h"

namespace zinc::cpu {

class KvCache {
public:
    KvCache(const graph::KvLayout& layout, int32_t kvDim, bool halves, int32_t slots = 1)
        : layout_(layout), kvDim_(kvDim), slots_(slots) {
        const size_t n = static_cast<size_t>(slots) * static_cast<size_t>(layout.rows) * static_cast<size_t>(kvDim);
        if (halves) {
            kHalf_.resize(n);
            vHalf_.resize(n);
        } else {
            kFull_.resize(n);
            vFull_.resize(n);
        }
    }

    const graph::KvLayer& layer(int32_t il) const { return layout_.layer(il); }
    int32_t slots() const { return slots_; }
    bool halves() const { return !kHalf_.empty(); }
    // The row holding position `pos` of layer `il` in `slot` (pos 0: the layer's first row; rows
    // kvDim apart).
    uint16_t* kHalf(int32_t il, int32_t pos) { return kHalf(0, il, pos); }
    uint16_t* vHalf(int32_t il, int32_t pos) { return vHalf(0, il, pos); }
    float* kFull(int32_t il, int32_t pos) { return kFull(0, il, pos); }
    float* vFull(int32_t il, int32_t pos) { return vFull(0, il, pos); }
    uint16_t* kHalf(int32_t slot, int32_t il, int32_t pos) { return kHalf_.data() + index(slot, il, pos); }
    uint16_t* vHalf(int32_t slot, int32_t il, int32_t pos) { return vHalf_.data() + index(slot, il, pos); }
    float* kFull(int32_t slot, int32_t il, int32_t pos) { return kFull_.data() + index(slot, il, pos); }
    float* vFull(int32_t slot, int32_t il, int32_t pos) { return vFull_.data() + index(slot, il, pos); }
    size_t bytes() const { return (kHalf_.size() + vHalf_.size()) * 2 + (kFull_.size() + vFull_.size()) * 4; }

private:
    size_t index(int32_t slot, int32_t il, int32_t pos) const {
        const graph::KvLayer& l = layout_.layer(il);
        const size_t row = static_cast<size_t>(slot) * static_cast<size_t>(layout_.rows) + static_cast<size_t>(l.firstRow + l.slot(pos));
        return row * static_cast<size_t>(kvDim_);
    }
    graph::KvLayout layout_;
    int32_t kvDim_;
    int32_t slots_;
    std::vector<uint16_t> kHalf_, vHalf_;
    std::vector<float> kFull_, vFull_;
};

}  // namespace zinc::cpu
