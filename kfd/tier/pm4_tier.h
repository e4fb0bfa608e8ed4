#pragma once
// T1, the kfd tier: the decode graph as one PM4 indirect buffer recorded once (per batch
// shape), submitted on a KFD compute queue with one doorbell per token, fences on a timeline,
// greedy tokens sampled on the GPU and queued ahead. Runs on any kfd::Device: /dev/kfd, or the
// simulated GPU (selected explicitly, never as a fallback).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "kfd/device/device.h"
#include "kfd/tier/fault_spec.h"
#include "kfd/tier/submitter.h"
#include "runtime/tier.h"

namespace zinc::kfd {

class PlanBuilder;

struct Pm4TierOptions {
    std::string dumpPm4Dir;      // --dump-pm4: the IBs and ring dwords submitted, for `zinc-rt pm4 decode`
    uint32_t timeoutMs = 120000;  // bound on every wait for the GPU
    int32_t queueAhead = 3;       // greedy tokens in flight at once
    // Sampled generation on the GPU: tokens queued per submission (one doorbell), each behind a
    // COND_EXEC on the sampler's live word; at least 16 (tiers.md "Tokens in flight").
    int32_t tokensPerSubmission = 32;
    // Ids that end a generation on the GPU (the tokenizer's end-of-generation ids); the stop id
    // itself is returned, nothing after it is computed.
    std::vector<int32_t> stopTokens;
    // --loop: sampled generation as one persistent command-processor loop (kfd/tier/README.md):
    // one submission starts it, further calls that go on from where it is grant more tokens
    // without a doorbell or a syscall; anything else cancels it first.
    bool loop = false;
    // Tests: with it, sampled generation runs one token per submission and hands each step's
    // logits (read back) and the id the GPU drew to this callback.
    std::function<void(int32_t step, std::span<const float> logits, int32_t id)> checkSampledStep;
    SubmitRoute route = SubmitRoute::Doorbell;  // --submit: a queue + doorbell, or the kernel's ring (CS)
    // What name() says: "kfd" (T1), or "umq" when the device's queues are amdgpu user queues (T2,
    // the same PM4 tier over umq/'s device).
    std::string tierName = "kfd";
    // Tests: called after each op is recorded into a plan, the instrumented one too (op index,
    // op), to inject packets (a WAIT_REG_MEM nobody releases) or take barriers out. Plans recorded
    // with it take no fused ops (graph::fuse), so every graph op has its own dispatches.
    std::function<void(PlanBuilder&, size_t, const graph::Op&)> afterOp;
    // Tests (`ZINC_SIM_FAULT` with --sim): a fault the simulated GPU makes once, at the first
    // token at that position that runs the op (kfd/tier/fault_spec.h).
    std::optional<FaultSpec> injectFault;
};

std::unique_ptr<runtime::Tier> makePm4Tier(const graph::Graph& graph, const runtime::TierOptions& options,
                                           std::shared_ptr<Device> device, const Pm4TierOptions& kfdOptions = {});

}  // namespace zinc::kfd
