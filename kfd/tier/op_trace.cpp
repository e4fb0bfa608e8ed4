#include "kfd/tier/op_trace.h"

#include <fmt/format.h>

#include <cstring>

#include "kernels/kernel_args.h"
#include "kfd/tier/graph_recorder.h"
#include "kfd/tier/plan_builder.h"
#include "kfd/tier/submitter.h"
#include "kfd/tier/tier_memory.h"

namespace zinc::kfd {

std::vector<OpOutput> traceFirstToken(const graph::Graph& graph, std::shared_ptr<Device> device, int32_t token, uint32_t timeoutMs) {
    KernelTable kernels(*device);
    TierMemory memory(*device, graph, 8, 1);
    // Which buffer each op leaves its result in (F32 ones only), and where its copy goes.
    std::vector<OpOutput> outputs;
    std::vector<uint64_t> offsets;
    uint64_t traceBytes = 0;
    int64_t widest = 0;
    for (size_t i = 0; i < graph.ops.size(); ++i) {
        const graph::Op& op = graph.ops[i];
        graph::BufferId b = op.kind == graph::OpKind::MoeRoute ? op.out2 : op.out != graph::kNoBuffer ? op.out : op.in;
        if (b == graph::kNoBuffer || graph.buffer(b).elem != graph::ElemType::F32) continue;
        outputs.push_back({i, b, {}});
        offsets.push_back(traceBytes);
        traceBytes += uint64_t(graph.buffer(b).width) * 4;
        widest = std::max(widest, graph.buffer(b).width);
    }
    DeviceMemory trace(*device, traceBytes, MemoryKind::Gtt, "op trace");
    DeviceMemory zeros(*device, uint64_t(widest) * 4, MemoryKind::Vram, "zero row");
    size_t next = 0;
    const ResourceKey traceKey = 3'000'000;
    const AfterOp copyOut = [&](PlanBuilder& b, size_t i, const graph::Op& op) {
        if (next >= outputs.size() || outputs[next].op != i) return;
        const graph::BufferId id = outputs[next].buffer;
        const auto n = int32_t(graph.buffer(id).width);
        b.launch("add", kernels::AddArgs{memory.at(id, 0), zeros.gpu(), trace.gpu(offsets[next]), n, n},
                 {uint32_t((n + 255) / 256), 1, 1}, {id}, {traceKey + ResourceKey(next)}, op.label + ".trace");
        ++next;
    };
    const RecordedPlan plan = recordGraph(*device, kernels, graph, memory, {1, false, false}, copyOut, uint32_t(outputs.size()));
    SubmitterOptions options;
    options.timeoutMs = timeoutMs;
    Submitter submitter(*device, kernels.gfx(), options);
    TokenSubmission s;
    s.ibAddress = plan.built.ib.gpu();
    s.ibDwords = plan.built.ibDwords;
    s.ibName = "trace";
    s.stateAddress = memory.state();
    s.position = 0;
    s.nTokens = 1;
    s.kvLength = 1;
    s.tokensAddress = memory.tokens();
    s.tokens = {&token, 1};
    s.what = fmt::format("op trace of token {} at position 0", token);
    submitter.wait(submitter.submit(s, plan.built.hostCopy));
    for (size_t k = 0; k < outputs.size(); ++k) {
        const float* row = trace.cpu<float>(offsets[k]);
        outputs[k].values.assign(row, row + graph.buffer(outputs[k].buffer).width);
    }
    return outputs;
}

}  // namespace zinc::kfd
