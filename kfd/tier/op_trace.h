#pragma once
// The check mode of the kfd tier (STYLE.md §8): one decode step with every op's output kept. The
// plan is the tier's own, with a copy of each op's output row appended after the op (the `add`
// kernel with a zero row: x + 0 is x for every finite x), all in one submission; the host then
// holds each op's output to compare with the cpu tier op by op and name the first that differs.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "kfd/device/device.h"

namespace zinc::kfd {

struct OpOutput {
    size_t op = 0;             // index in graph.ops
    graph::BufferId buffer = graph::kNoBuffer;  // the F32 buffer captured (ops writing only ids are skipped)
    std::vector<float> values;  // one token's row
};

// Runs `token` at position 0 on a fresh KV cache (its own memory, queue and plan on `device`).
std::vector<OpOutput> traceFirstToken(const graph::Graph& graph, std::shared_ptr<Device> device, int32_t token,
                                      uint32_t timeoutMs = 60000);

}  // namespace zinc::kfd
