#pragma once
// The kfd tier's instrumented decode plan, recorded only while tracing or capturing: the
// decode IB with the same dispatches and barriers, plus after each op a RELEASE_MEM that
// stamps the GPU clock when the op's dispatches are done (end of pipe) into a trace page, the
// router's expert ids copied out by the CP (after a barrier), and for a capture each wanted
// op's output row copied by the `add` kernel with a zero row (x + 0 is x for every finite x). The plain
// plans are not touched. The stream is PM4 only, so a tier recording the same IB (umq) can
// use this class as it is.
#include <cstdint>
#include <optional>
#include <utility>

#include "graph/graph.h"
#include "kfd/device/device.h"
#include "kfd/tier/graph_recorder.h"
#include "kfd/tier/plan_builder.h"
#include "kfd/tier/tier_memory.h"
#include "runtime/capture.h"
#include "runtime/events.h"

namespace zinc::kfd {

class PlanInstrument {
public:
    // `testHook` (Pm4TierOptions::afterOp) runs after each op before the instrumentation's packets.
    PlanInstrument(Device& device, KernelTable& kernels, const graph::Graph& graph, const TierMemory& memory,
                   AfterOp testHook = {});

    // Changing either drops the recorded plan (recorded again when next needed); call only
    // while nothing is in flight.
    void setLog(runtime::EventLog* log);
    void setCapture(runtime::Capture* capture);
    runtime::EventLog* log() const { return log_; }
    bool active() const { return log_ || capture_; }

    const RecordedPlan& plan();  // the instrumented one-token plan, recorded on first use
    // The same ending with the GPU sampler (PlanShape::sample), for traced sampled generation.
    const RecordedPlan& samplingPlan(const SamplerBlock& sampler);
    // After the step's submission retired, with the submitter's GPU clock stamps around its IB:
    // Device and Op events into the log, captured rows into the capture.
    void collect(std::pair<uint64_t, uint64_t> submissionStamps);

private:
    void afterOp(PlanBuilder& b, size_t i, const graph::Op& op);
    RecordedPlan record(const PlanShape& shape, const SamplerBlock* sampler);

    Device& device_;
    KernelTable& kernels_;
    const graph::Graph& graph_;
    const TierMemory& memory_;
    AfterOp testHook_;
    runtime::EventLog* log_ = nullptr;
    runtime::Capture* capture_ = nullptr;
    DeviceMemory page_;   // stamps[ops], then expert ids per op, then captured rows per op
    DeviceMemory zeros_;  // a zero row as wide as the widest buffer (the copy kernel's x + 0)
    std::vector<uint64_t> idsAt_, rowAt_;
    std::optional<RecordedPlan> plan_, samplingPlan_;
};

}  // namespace zinc::kfd
