#include "runtime/cpu/op_events.h"

#include <algorithm>

namespace zinc::cpu {

StepTrace::StepTrace(runtime::EventLog* log, runtime::Capture* capture, int32_t position, int32_t nTokens)
    : log_(log), capture_(nTokens == 1 ? capture : nullptr), opEvents_(log && nTokens == 1) {
    if (log_) {
        log_->beginStep(position, nTokens);
        stepBegin_ = runtime::EventLog::hostNs();
    }
    if (capture_) ++capture_->steps;
}

void StepTrace::record(const OpContext& ctx, size_t i) {
    const graph::Op& op = ctx.graph.ops[i];
    const int32_t lastRow = ctx.firstRow + ctx.rows - 1;
    if (capture_ && capture_->wants(i)) {
        const graph::BufferId b = runtime::capturedBuffer(op);
        const float* row = ctx.f32(b, lastRow);
        capture_->at(i).assign(row, row + ctx.graph.buffer(b).width);
    }
    if (!opEvents_) return;
    const int64_t now = runtime::EventLog::hostNs();
    runtime::Event e;
    e.op = static_cast<int32_t>(i);
    e.layer = op.layer;
    e.beginNs = opBegin_;
    e.endNs = now;
    if (op.kind == graph::OpKind::MoeRoute) {
        const int32_t* ids = ctx.i32(op.expertIds, lastRow);
        experts_.assign(ids, ids + ctx.graph.config->nExpertUsed);
    }
    if (op.kind == graph::OpKind::MoeRoute || op.kind == graph::OpKind::MoeFfn) e.experts = experts_;
    log_->add(std::move(e));
    opBegin_ = now;
}

}  // namespace zinc::cpu
