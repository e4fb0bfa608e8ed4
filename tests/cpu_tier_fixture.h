#pragma once
// A model from ../shared/models with its decode graph and a cpu tier of `slots` sequence slots
// (2 threads): the continuous-batching tests' set-up (tests/cpu, tests/serve).
#include <memory>
#include <string>

#include "graph/graph.h"
#include "model/model.h"
#include "runtime/cpu/cpu_tier.h"
#include "runtime/tier.h"
#include "tests/test_paths.h"

namespace zinc::test {

struct OpenedCpuTier {
    std::unique_ptr<model::Model> model;
    graph::Graph graph;
    std::unique_ptr<runtime::Tier> tier;
};

inline OpenedCpuTier openCpuTier(const std::string& file, int32_t contextLength, int32_t slots) {
    OpenedCpuTier o;
    o.model = model::Model::load(sharedPath("models/" + file));
    o.graph = graph::buildDecodeGraph(o.model->config(), o.model->weights());
    runtime::TierOptions options;
    options.threads = 2;
    options.contextLength = contextLength;
    options.sequences = slots;
    o.tier = cpu::makeCpuTier(o.graph, options);
    return o;
}

}  // namespace zinc::test
