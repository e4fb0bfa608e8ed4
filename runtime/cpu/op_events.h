#pragma once
// Events and captures of one cpu-tier evaluate(): a steady-clock span per op on decode steps
// (each op begins where the previous one ended, so the spans tile the step), the experts the
// router picked, copies of the captured ops' outputs. Inert without a log and a capture.
#include <cstdint>
#include <vector>

#include "runtime/capture.h"
#include "runtime/cpu/op_context.h"
#include "runtime/events.h"

namespace zinc::cpu {

class StepTrace {
public:
    StepTrace(runtime::EventLog* log, runtime::Capture* capture, int32_t position, int32_t nTokens);
    // Just before the first op runs.
    void opsBegin() {
        if (opEvents_) opBegin_ = runtime::EventLog::hostNs();
    }
    void afterOp(const OpContext& ctx, size_t i) {
        if (opEvents_ || capture_) record(ctx, i);
    }
    // At the end of evaluate(): the Step event.
    void finish() {
        if (log_) log_->addHost(runtime::EventKind::Step, stepBegin_, runtime::EventLog::hostNs());
    }

private:
    void record(const OpContext& ctx, size_t i);

    runtime::EventLog* log_;
    runtime::Capture* capture_;  // set on decode steps only
    bool opEvents_;
    int64_t stepBegin_ = 0, opBegin_ = 0;
    std::vector<int32_t> experts_;  // routed by the current layer's router
};

}  // namespace zinc::cpu
