#pragma once
// The kfd tier on the simulated GPU (CI has no AMD GPU): one simulated gfx1100 and one PoCL
// runner for the whole test binary (PoCL builds the kernel program once per runner), golden
// models opened on it and on the cpu tier, and the zinc-rt binary for command-line checks.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "graph/graph.h"
#include "kernels/pocl_runner.h"
#include "tests/sim_pocl_runner.h"
#include "kfd/sim/sim_device.h"
#include "kfd/tier/pm4_tier.h"
#include "model/make_model/make_model.h"
#include "model/model.h"
#include "runtime/cpu/cpu_tier.h"
#include "runtime/session.h"
#include "tests/run_zinc.h"
#include "tests/test_paths.h"
#include "umq/sim_amdgpu.h"

namespace zinc::test {

// A test model's file: ../shared/models/NAME, or for "make-model:PRESET:MIX" a make-model file of
// that preset and tensor mix (random weights, seed 7), written once into the scratch directory.
inline std::string modelFile(const std::string& name) {
    if (name.rfind("make-model:", 0) != 0) return sharedPath("models/" + name);
    const auto colon = name.find(':', 11);
    model::MakeModelOptions options;
    options.preset = name.substr(11, colon - 11);
    options.quantMix = name.substr(colon + 1);
    options.outputPath = (scratchDir() / ("kfd-" + options.preset + "-" + options.quantMix + ".gguf")).string();
    options.seed = 7;
    options.progress = false;
    options.threads = 2;
    if (!std::filesystem::exists(options.outputPath)) model::makeModel(options);
    return options.outputPath;
}

inline std::shared_ptr<kernels::PoclRunner> sharedRunner() {
    return test::sharedPoclRunner();
}

// The target the in-process tests simulate unless they name one: gfx1100, or ZINC_TEST_SIM_GFX
// (by hand: `ZINC_TEST_SIM_GFX=gfx1201 kfd_tier_tests --gtest_filter='Doors/DoorGoldenTest.*'`
// runs every golden through the umq and cs doors on RDNA4).
inline std::string defaultSimGfx() {
    const char* gfx = std::getenv("ZINC_TEST_SIM_GFX");
    return gfx && *gfx ? gfx : "gfx1100";
}

// One simulated GPU per target for the whole binary.
inline std::shared_ptr<kfd::Device> simDevice(const std::string& gfx = defaultSimGfx()) {
    static std::map<std::string, std::shared_ptr<kfd::Device>> devices;
    auto& device = devices[gfx];
    if (!device) {
        auto sim = kfd::openSimulatedDevice(gfx, {.runner = sharedRunner()});
        if (!sim) throw std::runtime_error(sim.error().describe());
        device = std::shared_ptr<kfd::Device>(std::move(*sim));
    }
    return device;
}

// One simulated amdgpu render node per target (the umq and cs doors), sharing the runner.
inline std::shared_ptr<kfd::Device> simDrmDevice(const std::string& gfx = defaultSimGfx()) {
    static std::map<std::string, std::shared_ptr<kfd::Device>> devices;
    auto& device = devices[gfx];
    if (!device) {
        auto sim = umq::openSimulatedDrmDevice(gfx, {.runner = sharedRunner()});
        if (!sim) throw std::runtime_error(sim.error().describe());
        device = *sim;
    }
    return device;
}

struct Loaded {
    std::unique_ptr<model::Model> model;
    graph::Graph graph;
    std::unique_ptr<runtime::Tier> tier;
    std::unique_ptr<runtime::Session> session;
};

// The doors to the simulated GPU: a KFD queue + doorbell, an amdgpu user queue + doorbell (the
// umq tier), the amdgpu CS ioctl (the kfd tier's cs route).
enum class Door { Kfd, Umq, Cs };
inline std::string doorName(Door d) { return d == Door::Umq ? "umq" : d == Door::Cs ? "cs" : "kfd"; }

inline Loaded loadOnDoor(const std::string& file, Door door, int32_t contextLength = 256) {
    Loaded l;
    l.model = model::Model::load(sharedPath("models/" + file));
    l.graph = graph::buildDecodeGraph(l.model->config(), l.model->weights());
    runtime::TierOptions options;
    options.threads = 2;
    options.contextLength = contextLength;
    options.maxBatch = 16;
    kfd::Pm4TierOptions o;
    o.route = door == Door::Cs ? kfd::SubmitRoute::Cs : kfd::SubmitRoute::Doorbell;
    o.tierName = door == Door::Umq ? "umq" : "kfd";
    l.tier = kfd::makePm4Tier(l.graph, options, door == Door::Kfd ? simDevice() : simDrmDevice(), o);
    l.session = std::make_unique<runtime::Session>(l.model->config(), *l.tier);
    return l;
}

inline Loaded load(const std::string& file, bool kfd, int32_t contextLength = 256, const std::string& gfx = defaultSimGfx()) {
    Loaded l;
    l.model = model::Model::load(sharedPath("models/" + file));
    l.graph = graph::buildDecodeGraph(l.model->config(), l.model->weights());
    runtime::TierOptions options;
    options.threads = 2;
    options.contextLength = contextLength;
    options.maxBatch = 16;
    l.tier = kfd ? kfd::makePm4Tier(l.graph, options, simDevice(gfx)) : cpu::makeCpuTier(l.graph, options);
    l.session = std::make_unique<runtime::Session>(l.model->config(), *l.tier);
    return l;
}


}  // namespace zinc::test
