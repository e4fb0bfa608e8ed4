#pragma once
// Checks of one tier against a reference tier (the cpu tier, with its generic kernels: the GPU
// kernels match those bit for bit), through the Tier interface only, so every tier is checked
// the same way: `zinc-rt probe`'s model rungs. Each returns one line saying what agreed and
// throws std::runtime_error naming what differs.
#include <cstdint>
#include <string>

#include "graph/graph.h"
#include "runtime/tier.h"

namespace zinc::runtime {

// `token` at position 0 on both: the same top-1 and every logit within 1e-3 of the largest
// reference logit (at least 1).
std::string checkOneToken(Tier& reference, Tier& tier, int32_t token, int32_t nVocab);

// The check mode (STYLE.md §8): `token` at position 0 on both with every op's output captured
// (Tier::setCapture, Capture::everyOp), compared op by op; names the first op whose output
// differs by more than `tolerance` of its largest value (at least 1). Ops a fused dispatch never
// writes on `tier` are skipped and counted.
std::string checkEveryOp(Tier& reference, Tier& tier, const graph::Graph& graph, int32_t token, double tolerance = 1e-3);

// `n` greedy tokens after token 1 at position 0 (tier.generateGreedy against the reference's
// evaluate and host argmax): equal token for token.
std::string checkGreedy(Tier& reference, Tier& tier, int32_t n, int32_t nVocab);

}  // namespace zinc::runtime
