#include "vulkan/plan_instrument.h"

#include <fmt/format.h>

#include <cstring>

#include "vulkan/ops.h"
#include "vulkan/vk_error.h"

namespace zinc::vk {
namespace {

using graph::OpKind;

}  // namespace

PlanInstrument::PlanInstrument(const Device& device, const graph::Graph& graph, const DeviceBuffer& arena,
                               const graph::MemoryPlan& plan)
    : device_(device), graph_(graph), arena_(arena), plan_(plan) {
    // One row per op (its captured output), then the expert ids of each router.
    uint64_t bytes = 0;
    for (const auto& op : graph.ops) {
        slots_.push_back(bytes);
        bytes += static_cast<uint64_t>(graph.buffer(runtime::capturedBuffer(op)).width) * 4;
    }
    for (const auto& op : graph.ops) {
        slots_.push_back(bytes);
        if (op.kind == OpKind::MoeRoute) bytes += static_cast<uint64_t>(graph.config->nExpertUsed) * 4;
    }
    readback_ = DeviceBuffer(device, bytes, MemoryKind::HostVisible, "trace and capture readback");
    queryCount_ = static_cast<uint32_t>(graph.ops.size()) + 2;
}

PlanInstrument::~PlanInstrument() {
    if (pool_) vkDestroyQueryPool(device_.handle(), pool_, nullptr);
}

void PlanInstrument::setLog(runtime::EventLog* log) {
    if (log && !device_.caps().timestamps)
        throw runtime::TierError(fmt::format("vulkan tier: device {} ({}) has no timestamp queries on its compute queue; "
                                             "op events need them",
                                             device_.caps().index, device_.caps().name));
    if (log && !pool_) {
        VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        info.queryType = VK_QUERY_TYPE_TIMESTAMP;
        info.queryCount = queryCount_;
        check(vkCreateQueryPool(device_.handle(), &info, nullptr, &pool_), "vkCreateQueryPool", "op timestamps");
    }
    log_ = log;
}

void PlanInstrument::beginPlan(VkCommandBuffer cmd) {
    ranges_.clear();
    copies_.clear();
    queriesUsed_ = 0;
    if (!log_) return;
    vkCmdResetQueryPool(cmd, pool_, 0, queryCount_);
    // Query 0: everything submitted before the plan (the token-state upload) has finished.
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, queriesUsed_++);
}

GraphRecorder::OpHook PlanInstrument::hook() {
    return [this](const PlanContext& ctx, const graph::LoweredOp& op, uint32_t dispatches) { afterOps(ctx, op, dispatches); };
}

void PlanInstrument::afterOps(const PlanContext& ctx, const graph::LoweredOp& lowered, uint32_t dispatches) {
    const size_t first = lowered.first, last = lowered.last();
    const bool dispatched = dispatches > 0;
    if (log_) {
        if (dispatched)  // the end of the run's last dispatch (each dispatch ends with a barrier)
            vkCmdWriteTimestamp(ctx.rec.cmd(), VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, pool_, queriesUsed_++);
        ranges_.push_back({first, last, queriesUsed_ - 1, dispatched});
    }
    const graph::Op& op = graph_.ops[last];
    if (capture_ && dispatched && capture_->wants(last) && graph::writesF32Output(lowered)) {
        const graph::BufferId b = runtime::capturedBuffer(op);
        copyRow(ctx, b, slots_[last]);
        copies_.push_back({last, slots_[last], static_cast<uint32_t>(graph_.buffer(b).width), false});
    }
    if (log_ && op.kind == OpKind::MoeRoute) {
        const size_t slot = graph_.ops.size() + last;
        copyRow(ctx, op.expertIds, slots_[slot]);
        copies_.push_back({last, slots_[slot], static_cast<uint32_t>(graph_.config->nExpertUsed), true});
    }
}

// The last token's row of `buffer` into readback_ at `slotOffset`, ordered after the dispatch
// that wrote it and before any later dispatch that overwrites it.
void PlanInstrument::copyRow(const PlanContext& ctx, graph::BufferId buffer, uint64_t slotOffset) {
    const uint64_t rowBytes = static_cast<uint64_t>(graph_.buffer(buffer).width) * 4;
    const uint64_t src = plan_.offsets[static_cast<size_t>(buffer)] + static_cast<uint64_t>(ctx.firstRow + ctx.rows - 1) * rowBytes;
    ctx.rec.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                    VK_ACCESS_TRANSFER_READ_BIT);
    ctx.rec.copy(arena_.handle(), src, readback_.handle(), slotOffset, rowBytes);
    ctx.rec.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT);
}

void PlanInstrument::endPlan(VkCommandBuffer cmd) {
    if (log_) vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, queriesUsed_++);
}

void PlanInstrument::collect() {
    const auto* base = static_cast<const uint8_t*>(readback_.mapped());
    if (capture_) {
        ++capture_->steps;
        capture_->clearValues();
        for (const Copy& c : copies_)
            if (!c.ids) {
                const auto* row = reinterpret_cast<const float*>(base + c.offset);
                capture_->at(c.op).assign(row, row + c.count);
            }
    }
    if (!log_) return;
    std::vector<uint64_t> t(queriesUsed_);
    check(vkGetQueryPoolResults(device_.handle(), pool_, 0, queriesUsed_, t.size() * sizeof(uint64_t), t.data(),
                                sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults", "op timestamps");
    const double period = device_.caps().timestampPeriodNs;
    auto ns = [&](uint32_t q) { return static_cast<int64_t>(static_cast<double>(t[q] - t[0]) * period); };
    // Device times are kept relative to the plan's start, offset by its raw stamp in ns.
    const auto origin = static_cast<int64_t>(static_cast<double>(t[0]) * period);
    std::vector<std::vector<int32_t>> experts(static_cast<size_t>(std::max(graph_.config->nLayer, 1)));
    for (const Copy& c : copies_)
        if (c.ids) {
            const auto* ids = reinterpret_cast<const int32_t*>(base + c.offset);
            experts[static_cast<size_t>(graph_.ops[c.op].layer)].assign(ids, ids + c.count);
        }
    runtime::Event device;
    device.kind = runtime::EventKind::Device;
    device.clock = runtime::EventClock::Device;
    device.beginNs = origin;
    device.endNs = origin + ns(queriesUsed_ - 1);
    log_->add(device);
    int64_t previous = origin;
    for (const Range& r : ranges_) {
        const int64_t end = r.dispatched ? origin + ns(r.query) : previous;
        for (size_t i = r.first; i <= r.last; ++i) {
            const graph::Op& op = graph_.ops[i];
            runtime::Event e;
            e.clock = runtime::EventClock::Device;
            e.op = static_cast<int32_t>(i);
            e.layer = op.layer;
            e.fused = !r.dispatched || i != r.first;
            e.beginNs = e.fused ? end : previous;
            e.endNs = end;
            if ((op.kind == OpKind::MoeRoute || op.kind == OpKind::MoeFfn) && op.layer >= 0)
                e.experts = experts[static_cast<size_t>(op.layer)];
            log_->add(std::move(e));
        }
        previous = end;
    }
}

}  // namespace zinc::vk
