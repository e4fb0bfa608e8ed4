#include "graph/batched_step.h"

#include <algorithm>

namespace zinc::graph {

std::vector<BufferId> buffersCrossingLayerEnd(const Graph& graph) {
    const auto end = std::find_if(graph.ops.begin(), graph.ops.end(), [](const Op& op) { return runsOnWantedRowsOnly(op); });
    std::vector<bool> writtenBefore(graph.buffers.size()), readAfter(graph.buffers.size());
    for (auto op = graph.ops.begin(); op != end; ++op)
        for (BufferId id : writesOf(*op)) writtenBefore[static_cast<size_t>(id)] = true;
    for (auto op = end; op != graph.ops.end(); ++op)
        for (BufferId id : readsOf(*op)) readAfter[static_cast<size_t>(id)] = true;
    std::vector<BufferId> crossing;
    for (size_t b = 0; b < graph.buffers.size(); ++b)
        if (writtenBefore[b] && readAfter[b] && !graph.buffers[b].persistent) crossing.push_back(static_cast<BufferId>(b));
    return crossing;
}

bool keepsRecurrentState(const Graph& graph) {
    for (const Buffer& b : graph.buffers)
        if (b.persistent) return true;
    return false;
}

}  // namespace zinc::graph
