#pragma once
// T1, the kfd tier: the decode graph as one PM4 indirect buffer recorded once (per batch
// shape), submitted on a KFD compute queue with one doorbell per token, fences on a timeline,
// greedy tokens sampled on the GPU and queued ahead. Runs on any kfd::Device: /dev/kfd, or the
// simulated GPU (selected explicitly, never as a fallback).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "graph/graph.h"
#include "kfd/device/device.h"
#include "kfd/tier/submitter.h"
#include "runtime/tier.h"

namespace zinc::kfd {

class PlanBuilder;

struct Pm4TierOptions {
    std::string dumpPm4Dir;      // --dump-pm4: the IBs and ring dwords submitted, for `zinc-rt pm4 decode`
    uint32_t timeoutMs = 120000;  // bound on every wait for the GPU
    int32_t queueAhead = 3;       // greedy tokens in flight at once
    SubmitRoute route = SubmitRoute::Doorbell;  // --submit: a queue + doorbell, or the kernel's ring (CS)
    // What name() says: "kfd" (T1), or "umq" when the device's queues are amdgpu user queues (T2,
    // the same PM4 tier over umq/'s device).
    std::string tierName = "kfd";
    // Tests: called after each op is recorded into a plan, the instrumented one too (op index,
    // op), to inject packets (a WAIT_REG_MEM nobody releases) or take barriers out.
    std::function<void(PlanBuilder&, size_t, const graph::Op&)> afterOp;
};

std::unique_ptr<runtime::Tier> makePm4Tier(const graph::Graph& graph, const runtime::TierOptions& options,
                                           std::shared_ptr<Device> device, const Pm4TierOptions& kfdOptions = {});

}  // namespace zinc::kfd
