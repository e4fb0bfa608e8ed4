#include "kfd/tier/plan_instrument.h"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/kernel_args.h"

namespace zinc::kfd {
namespace {

// The GPU clock counter RELEASE_MEM and COPY_DATA sample ticks at 100 MHz on RDNA (pm4_tier.cpp
// assumes the same; the simulated GPU counts in 10 ns steps). Unverified on hardware.
constexpr int64_t kNsPerGpuTick = 10;

}  // namespace

PlanInstrument::PlanInstrument(Device& device, KernelTable& kernels, const graph::Graph& graph, const TierMemory& memory,
                               AfterOp testHook)
    : device_(device), kernels_(kernels), graph_(graph), memory_(memory), testHook_(std::move(testHook)) {
    const size_t ops = graph.ops.size();
    uint64_t bytes = 8 * ops;  // one GPU-clock stamp per op
    int64_t widest = 0;
    for (const graph::Op& op : graph.ops) {
        idsAt_.push_back(bytes);
        if (op.kind == graph::OpKind::MoeRoute) bytes += (uint64_t(graph.config->nExpertUsed) * 4 + 7) / 8 * 8;
    }
    for (const graph::Op& op : graph.ops) {
        const int64_t width = graph.buffer(runtime::capturedBuffer(op)).width;
        rowAt_.push_back(bytes);
        bytes += (uint64_t(width) * 4 + 255) / 256 * 256;
        widest = std::max(widest, width);
    }
    page_ = DeviceMemory(device, bytes, MemoryKind::Gtt, "trace and capture page", {.uncached = true});
    zeros_ = DeviceMemory(device, uint64_t(widest) * 4, MemoryKind::Vram, "capture zero row");
    std::fill_n(zeros_.cpu<float>(), widest, 0.0f);
}

void PlanInstrument::setLog(runtime::EventLog* log) {
    log_ = log;
    plan_.reset();
    samplingPlan_.reset();
}

void PlanInstrument::setCapture(runtime::Capture* capture) {
    capture_ = capture;
    plan_.reset();
    samplingPlan_.reset();
}

const RecordedPlan& PlanInstrument::plan() {
    if (!plan_) plan_ = record({1, false, false}, nullptr);
    return *plan_;
}

const RecordedPlan& PlanInstrument::samplingPlan(const SamplerBlock& sampler) {
    if (!samplingPlan_) samplingPlan_ = record({1, false, false, true}, &sampler);
    return *samplingPlan_;
}

RecordedPlan PlanInstrument::record(const PlanShape& shape, const SamplerBlock* sampler) {
    const uint32_t extra = uint32_t(graph_.ops.size()) * 2 + uint32_t(std::max(graph_.config->nExpertUsed, 1)) *
                                                                 uint32_t(graph_.config->nLayer) + 1;
    return recordGraph(device_, kernels_, graph_, memory_, shape,
                       [this](PlanBuilder& b, size_t i, const graph::Op& op) { afterOp(b, i, op); }, extra, sampler,
                       /*fuseOps=*/false);  // every op materialised, timed and captured
}

void PlanInstrument::afterOp(PlanBuilder& b, size_t i, const graph::Op& op) {
    if (testHook_) testHook_(b, i, op);
    if (log_) {
        // Written at end of pipe: once the dispatches before it are done (no cache action).
        b.stream().releaseMem({.gcrCntl = 0, .data = pm4::ReleaseData::GpuClock, .address = page_.gpu(8 * i)});
        if (op.kind == graph::OpKind::MoeRoute) {
            // The CP reads the ids moe_topk wrote: wait for it first.
            b.barrier();
            const int32_t n = graph_.config->nExpertUsed;
            for (int32_t k = 0; k < n; k += 2)
                b.stream().copyData({.src = pm4::CopySrc::Memory, .dst = pm4::CopyDst::Memory,
                                     .source = memory_.at(op.expertIds, 0) + 4 * uint64_t(k),
                                     .destination = page_.gpu(idsAt_[i] + 4 * uint64_t(k)), .count64 = k + 1 < n});
        }
    }
    if (capture_ && capture_->wants(i)) {
        const graph::BufferId id = runtime::capturedBuffer(op);
        const auto n = int32_t(graph_.buffer(id).width);
        b.launch("add", kernels::AddArgs{memory_.at(id, 0), zeros_.gpu(), page_.gpu(rowAt_[i]), n, n},
                 {uint32_t((n + 255) / 256), 1, 1}, {id}, {}, op.label + ".capture");  // the page is read by the host only
    }
}

void PlanInstrument::collect(std::pair<uint64_t, uint64_t> submissionStamps) {
    if (capture_) {
        ++capture_->steps;
        capture_->clearValues();
        for (size_t i = 0; i < graph_.ops.size(); ++i)
            if (capture_->wants(i)) {
                const float* row = page_.cpu<float>(rowAt_[i]);
                capture_->at(i).assign(row, row + graph_.buffer(runtime::capturedBuffer(graph_.ops[i])).width);
            }
    }
    if (!log_) return;
    const auto [begin, end] = submissionStamps;
    auto ns = [](uint64_t ticks) { return int64_t(ticks) * kNsPerGpuTick; };
    runtime::Event device;
    device.kind = runtime::EventKind::Device;
    device.clock = runtime::EventClock::Device;
    device.beginNs = ns(begin);
    device.endNs = ns(end);
    log_->add(device);
    std::vector<int32_t> experts;
    int64_t previous = ns(begin);
    for (size_t i = 0; i < graph_.ops.size(); ++i) {
        const graph::Op& op = graph_.ops[i];
        runtime::Event e;
        e.clock = runtime::EventClock::Device;
        e.op = int32_t(i);
        e.layer = op.layer;
        e.beginNs = previous;
        e.endNs = previous = ns(*page_.cpu<uint64_t>(8 * i));
        if (op.kind == graph::OpKind::MoeRoute) {
            const int32_t* ids = page_.cpu<int32_t>(idsAt_[i]);
            experts.assign(ids, ids + graph_.config->nExpertUsed);
        }
        if (op.kind == graph::OpKind::MoeRoute || op.kind == graph::OpKind::MoeFfn) e.experts = experts;
        log_->add(std::move(e));
    }
}

}  // namespace zinc::kfd
