#pragma once
// The model's weights in device-local memory, uploaded once in their GGUF block layout.
// Tensors are packed into chunks (one buffer each, at most the device's allocation limit);
// shaders reach a tensor by its device address.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"
#include "vulkan/vk_buffer.h"
#include "vulkan/vk_queue.h"

namespace zinc::vk {

class WeightStore {
public:
    WeightStore(const Device& device, Queue& queue, const graph::Graph& graph);
    // Throws TierError when the tensor was not uploaded.
    VkDeviceAddress address(const model::WeightRef& w) const;
    uint64_t bytes() const { return bytes_; }

private:
    std::vector<DeviceBuffer> chunks_;
    std::unordered_map<const uint8_t*, VkDeviceAddress> addresses_;
    uint64_t bytes_ = 0;
};

}  // namespace zinc::vk
