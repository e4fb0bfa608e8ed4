#pragma once
// The tiers the trace and ab tests run on: cpu, vulkan (lavapipe in CI), and the PM4 tier on
// the simulated GPU through both doors: kfd (a KFD queue) and umq (an amdgpu user queue). A
// tier added later goes into TierKind, allTiers() and open() here, and every test of this
// binary then runs on it too.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "kernels/pocl_runner.h"
#include "tests/sim_pocl_runner.h"
#include "kfd/sim/sim_device.h"
#include "kfd/tier/pm4_tier.h"
#include "model/model.h"
#include "runtime/cpu/cpu_tier.h"
#include "tests/test_paths.h"
#include "umq/sim_amdgpu.h"
#include "vulkan/vk_device.h"
#include "vulkan/vulkan_tier.h"

namespace zinc::test {

enum class TierKind { Cpu, Vulkan, Kfd, Umq };

inline std::vector<TierKind> allTiers() { return {TierKind::Cpu, TierKind::Vulkan, TierKind::Kfd, TierKind::Umq}; }

inline std::string tierName(TierKind kind) {
    switch (kind) {
        case TierKind::Cpu: return "cpu";
        case TierKind::Vulkan: return "vulkan";
        case TierKind::Kfd: return "kfd";
        case TierKind::Umq: return "umq";
    }
    return "?";
}

inline std::string tierParamName(const testing::TestParamInfo<TierKind>& info) { return tierName(info.param); }

inline bool vulkanDeviceExists() {
    try {
        return !vk::listDevices().empty();
    } catch (const std::exception&) {
        return false;
    }
}

// Skips only the vulkan tier, and only on a machine without any Vulkan device.
#define ZINC_REQUIRE_TIER(kind)                                                          \
    if ((kind) == ::zinc::test::TierKind::Vulkan && !::zinc::test::vulkanDeviceExists()) \
    GTEST_SKIP() << "no Vulkan device on this machine"

// One PoCL runner for the whole binary (PoCL builds the kernels once), one simulated gfx1100
// behind each door.
inline std::shared_ptr<kernels::PoclRunner> poclRunner() {
    return test::sharedPoclRunner();
}
inline std::shared_ptr<kfd::Device> simulatedGpu() {
    static std::shared_ptr<kfd::Device> device = [] {
        auto sim = kfd::openSimulatedDevice("gfx1100", {.runner = poclRunner()});
        if (!sim) throw std::runtime_error(sim.error().describe());
        return std::shared_ptr<kfd::Device>(std::move(*sim));
    }();
    return device;
}
inline std::shared_ptr<kfd::Device> simulatedAmdgpu() {
    static std::shared_ptr<kfd::Device> device = [] {
        auto sim = umq::openSimulatedDrmDevice("gfx1100", {.runner = poclRunner()});
        if (!sim) throw std::runtime_error(sim.error().describe());
        return std::shared_ptr<kfd::Device>(*sim);
    }();
    return device;
}

struct Opened {
    std::unique_ptr<model::Model> model;
    graph::Graph graph;
    std::unique_ptr<runtime::Tier> tier;
};

inline Opened openPath(const std::string& path, TierKind kind, int32_t contextLength = 128) {
    Opened o;
    o.model = model::Model::load(path);
    o.graph = graph::buildDecodeGraph(o.model->config(), o.model->weights());
    runtime::TierOptions options;
    options.threads = 2;
    options.contextLength = contextLength;
    options.maxBatch = 16;
    switch (kind) {
        case TierKind::Cpu: o.tier = cpu::makeCpuTier(o.graph, options); break;
        case TierKind::Vulkan: o.tier = vulkan::makeVulkanTier(o.graph, options, 0); break;
        case TierKind::Kfd: o.tier = kfd::makePm4Tier(o.graph, options, simulatedGpu()); break;
        case TierKind::Umq: o.tier = kfd::makePm4Tier(o.graph, options, simulatedAmdgpu(), {.tierName = "umq"}); break;
    }
    return o;
}

inline Opened open(const std::string& file, TierKind kind, int32_t contextLength = 128) {
    return openPath(sharedPath("models/" + file), kind, contextLength);
}

}  // namespace zinc::test
