#pragma once
// The model's weights in device-local memory, uploaded once in their GGUF block layout.
// Tensors are packed into chunks (one buffer each, at most the device's allocation limit);
// shaders reach a tensor by its device address.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"
#include "graph/kv_layout.h"
#include "vulkan/vk_buffer.h"
#include "vulkan/vk_queue.h"

namespace zinc::vk {

// What the tier needs in device memory besides the weights, and how much it may use. The
// WeightStore checks the whole before it allocates anything, so a model too large for the
// device is one error saying how much is needed and how much there is.
struct DeviceMemoryBudget {
    uint64_t kvCacheBytes = 0;
    uint64_t activationBytes = 0;
    uint64_t limitBytes = 0;  // 0: the device's largest device-local heap
    int32_t sequences = 1;    // KV slots in kvCacheBytes (serve --parallel)
};
DeviceMemoryBudget deviceMemoryBudget(const graph::Graph& graph, const graph::KvLayout& kv, int32_t maxBatch,
                                      uint64_t limitBytes, int32_t sequences = 1);

class WeightStore {
public:
    // Throws TierError when weights plus the budget's other needs exceed what the device has.
    WeightStore(const Device& device, Queue& queue, const graph::Graph& graph, const DeviceMemoryBudget& budget = {});
    // Throws TierError when the tensor was not uploaded.
    VkDeviceAddress address(const model::WeightRef& w) const;
    uint64_t bytes() const { return bytes_; }
    // Wall time of the upload (staging fills and device copies), for `describe`.
    double uploadSeconds() const { return uploadSeconds_; }

private:
    std::vector<DeviceBuffer> chunks_;
    std::unordered_map<const uint8_t*, VkDeviceAddress> addresses_;
    uint64_t bytes_ = 0;
    double uploadSeconds_ = 0;
};

}  // namespace zinc::vk
