#pragma once
// Continuous batching through the shared graph: what a tier needs to run rows of several
// sequences in one step (runtime::Tier::evaluateRows). The layer stack runs on every row as in
// a prefill step, except that each row brings its own position (RoPE) and its own sequence's KV
// region (the KV store and attention); after the layer stack only the rows whose logits are
// wanted go on, gathered to the first rows of the step. tiers.md, "Continuous batching".
#include <vector>

#include "graph/graph.h"

namespace zinc::graph {

// The buffers alive where the layer stack ends: written before the first op that runs on the
// wanted rows only (graph::runsOnWantedRowsOnly) and read by it or after it. Gathering the
// wanted rows of these to rows 0..k-1 lets the rest of the graph run on k rows.
std::vector<BufferId> buffersCrossingLayerEnd(const Graph& graph);

// Whether the graph keeps recurrent state (a persistent buffer: a hybrid's conv windows and
// DeltaNet matrices), which every tier holds a copy of per sequence slot
// (graph::MemoryPlan::stateCopies).
bool keepsRecurrentState(const Graph& graph);

}  // namespace zinc::graph
