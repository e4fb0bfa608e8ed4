#pragma once
// Where each layer's K and V rows live, the same on every tier. A global layer keeps one row per
// position of the context. A sliding-window layer never reads a key at distance >= window again,
// so it keeps a ring: window - 1 older positions plus one step's tokens (a step stores all its
// k/v rows before any of them attends), position p in row p % slots. Its memory is then bounded by
// the window and the step size, not by the context. Layers without attention (DeltaNet) keep none.
#include <cstdint>
#include <vector>

#include "model/model_config.h"

namespace zinc::graph {

struct KvLayer {
    int32_t window = 0;    // 0: a global layer
    int32_t slots = 0;     // rows kept: the context length, or the ring's length (0: no attention)
    int64_t firstRow = 0;  // this layer's first row in one cache holding every layer's rows

    bool ring() const { return window > 0 && slots > 0; }
    int32_t slot(int32_t position) const { return slots > 0 ? position % slots : 0; }
    // The first position a query at `position` attends to.
    int32_t firstKey(int32_t position) const { return window > 0 && position >= window ? position - window + 1 : 0; }
};

struct KvLayout {
    std::vector<KvLayer> layers;  // per layer of the model
    int64_t rows = 0;             // every layer's rows together

    const KvLayer& layer(int32_t il) const { return layers[static_cast<size_t>(il)]; }
    // Whether a sequence whose cache holds positions [0, stored) may go on at `position` (<=
    // stored): false when a ring has overwritten a key the query at `position` needs.
    bool canResumeAt(int32_t position, int32_t stored) const;
};

// `maxStepTokens`: the most tokens one step stores before they attend (the tier's batch limit).
KvLayout planKv(const model::ModelConfig& config, int32_t contextLength, int32_t maxStepTokens);

}  // namespace zinc::graph
