#include "graph/kv_layout.h"

#include <algorithm>

namespace zinc::graph {

KvLayout planKv(const model::ModelConfig& config, int32_t contextLength, int32_t maxStepTokens) {
    KvLayout layout;
    layout.layers.resize(static_cast<size_t>(config.nLayer));
    for (int32_t il = 0; il < config.nLayer; ++il) {
        KvLayer& l = layout.layers[static_cast<size_t>(il)];
        l.firstRow = layout.rows;
        if (config.hybrid.recurrent(il)) continue;  // a DeltaNet layer: no K/V
        l.window = config.slidingLayer(il) ? config.slidingWindow : 0;
        // A step's queries reach back window - 1 positions before the step's first token.
        const int64_t ring = int64_t{l.window} + std::max(1, maxStepTokens) - 1;
        l.slots = l.window > 0 ? static_cast<int32_t>(std::min<int64_t>(contextLength, ring)) : contextLength;
        layout.rows += l.slots;
    }
    return layout;
}

bool KvLayout::canResumeAt(int32_t position, int32_t stored) const {
    for (const KvLayer& l : layers)
        // The ring holds positions [stored - slots, stored); the query needs [firstKey, position).
        if (l.ring() && position < stored && l.firstKey(position) < int64_t{stored} - l.slots) return false;
    return true;
}

}  // namespace zinc::graph
