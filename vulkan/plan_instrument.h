#pragma once
// The vulkan tier's instrumented decode plan, recorded only while tracing or capturing: the
// same dispatches as the decode plan, plus a timestamp query after each graph op (or fused run
// of ops) for the event log, and copies of the ops' outputs (capture) and of the router's
// expert ids (event tags) into a host-visible buffer. The untraced plans are not touched.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "runtime/capture.h"
#include "runtime/events.h"
#include "vulkan/graph_recorder.h"
#include "vulkan/vk_buffer.h"
#include "vulkan/vk_device.h"

namespace zinc::vk {

class PlanInstrument {
public:
    // `arena` is the activation arena laid out by `plan`; the copies read it.
    PlanInstrument(const Device& device, const graph::Graph& graph, const DeviceBuffer& arena,
                   const graph::MemoryPlan& plan);
    ~PlanInstrument();
    PlanInstrument(const PlanInstrument&) = delete;
    PlanInstrument& operator=(const PlanInstrument&) = delete;

    // Throws TierError when events are asked of a device without timestamp queries.
    void setLog(runtime::EventLog* log);
    void setCapture(runtime::Capture* capture) { capture_ = capture; }
    runtime::EventLog* log() const { return log_; }
    bool active() const { return log_ || capture_; }

    // Recording the instrumented plan: beginPlan first in the command buffer, hook() given to
    // GraphRecorder::record, endPlan after everything else.
    void beginPlan(VkCommandBuffer cmd);
    GraphRecorder::OpHook hook();
    void endPlan(VkCommandBuffer cmd);

    // After the step's submission retired: Device and Op events into the log, the captured
    // rows into the capture.
    void collect();

private:
    void afterOps(const PlanContext& ctx, const graph::LoweredOp& op, uint32_t dispatches);
    void copyRow(const PlanContext& ctx, graph::BufferId buffer, uint64_t slotOffset);

    // Ops [first, last] whose dispatches ended at timestamp query `query`.
    struct Range {
        size_t first = 0, last = 0;
        uint32_t query = 0;
        bool dispatched = false;
    };
    struct Copy {
        size_t op = 0;
        uint64_t offset = 0;  // in readback_
        uint32_t count = 0;   // values
        bool ids = false;     // the router's expert ids (int32) rather than the op's output
    };

    const Device& device_;
    const graph::Graph& graph_;
    const DeviceBuffer& arena_;
    const graph::MemoryPlan& plan_;
    runtime::EventLog* log_ = nullptr;
    runtime::Capture* capture_ = nullptr;
    VkQueryPool pool_ = VK_NULL_HANDLE;
    uint32_t queryCount_ = 0;
    uint32_t queriesUsed_ = 0;
    DeviceBuffer readback_;
    std::vector<uint64_t> slots_;  // readback_ offset of each op's row; expert ids after them
    std::vector<Range> ranges_;
    std::vector<Copy> copies_;
};

}  // namespace zinc::vk
