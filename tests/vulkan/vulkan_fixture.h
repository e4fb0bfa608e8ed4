#pragma once
// Opening a golden model on the vulkan tier (lavapipe in CI) and on the cpu tier, for tests
// that hold the one to the other. Skips only when no Vulkan device exists at all.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "graph/graph.h"
#include "model/model.h"
#include "runtime/cpu/cpu_tier.h"
#include "runtime/session.h"
#include "tests/test_paths.h"
#include "vulkan/vk_device.h"
#include "vulkan/vulkan_tier.h"

namespace zinc::test {

inline bool vulkanDeviceExists() {
    try {
        return !vk::listDevices().empty();
    } catch (const std::exception&) {
        return false;
    }
}

#define ZINC_REQUIRE_VULKAN() \
    if (!::zinc::test::vulkanDeviceExists()) GTEST_SKIP() << "no Vulkan device on this machine"

struct Loaded {
    std::unique_ptr<model::Model> model;
    graph::Graph graph;
    std::unique_ptr<runtime::Tier> tier;
    std::unique_ptr<runtime::Session> session;
};

// deltaChunk: hybrid models' DeltaNet prefill chunk (TierOptions::deltaChunk; 0 = the recurrence).
inline Loaded loadPath(const std::string& path, bool vulkan, int32_t contextLength = 512,
                       int32_t deltaChunk = runtime::TierOptions{}.deltaChunk) {
    Loaded l;
    l.model = model::Model::load(path);
    l.graph = graph::buildDecodeGraph(l.model->config(), l.model->weights());
    runtime::TierOptions options;
    options.threads = 2;
    options.contextLength = contextLength;
    options.maxBatch = 64;
    options.deltaChunk = deltaChunk;
    l.tier = vulkan ? zinc::vulkan::makeVulkanTier(l.graph, options, 0) : cpu::makeCpuTier(l.graph, options);
    l.session = std::make_unique<runtime::Session>(l.model->config(), *l.tier);
    return l;
}

inline Loaded load(const std::string& file, bool vulkan, int32_t contextLength = 512,
                   int32_t deltaChunk = runtime::TierOptions{}.deltaChunk) {
    return loadPath(sharedPath("models/" + file), vulkan, contextLength, deltaChunk);
}

}  // namespace zinc::test
