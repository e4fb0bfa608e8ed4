#pragma once
// The vulkan tier: GLSL compute shaders over weights in device-local memory; a whole token is
// one command buffer recorded once and submitted per token after the host writes the token
// state (position, ids). Greedy generation samples on the GPU and queues several tokens ahead
// on a timeline semaphore.
#include <cstdint>
#include <memory>

#include "graph/graph.h"
#include "runtime/tier.h"

namespace zinc::vulkan {

// Throws runtime::TierError when there is no Vulkan device `deviceIndex`, or it lacks a
// feature the tier needs (the message lists them).
std::unique_ptr<runtime::Tier> makeVulkanTier(const graph::Graph& graph, const runtime::TierOptions& options,
                                              int32_t deviceIndex);

}  // namespace zinc::vulkan
