// bench --kernels: every distinct matvec shape of the decode graph, timed alone. Each
// measurement is one command buffer of N calls of one kernel between two timestamps, N chosen
// from a first short run so the calls take about targetMs of GPU time (thousands of calls for
// a 10 us kernel): the per-submission cost is amortised over them. The calls cycle through a
// weight arena larger than the L2 (1 GiB on a discrete GPU), so each call reads its weights from
// memory, not from the previous call's L2 lines. Two figures per kernel: back to back (no
// barrier: consecutive calls may overlap, the kernel's own throughput) and with the barrier a
// plan puts after every dispatch (the fixed cost of a dispatch included).
#include "vulkan/kernel_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <tuple>

#include "graph/lower.h"
#include "vulkan/ops.h"
#include "vulkan/recorder.h"
#include "vulkan/shared_device.h"
#include "vulkan/vk_buffer.h"
#include "vulkan/vk_error.h"
#include "vulkan/vk_queue.h"

namespace zinc::vulkan {
namespace {

using vk::MatVecOp;

struct Shape {
    std::string label;
    const model::WeightRef* w = nullptr;
    const model::WeightRef* up = nullptr;
    uint32_t experts = 0;  // (token, slot) pairs per token in expert mode
    uint32_t actDiv = 1;   // expert mode: activation row = slot / actDiv
    uint32_t perToken = 1; // times a decode step runs this shape (its layers)
};

// The graph's matrices: MatMul ops, gate and up pairs (the SwiGlu whose two inputs two MatMuls
// of pairable weights write: the tier runs them as one dispatch), MoE experts and routers.
std::vector<Shape> shapesOf(const graph::Graph& g) {
    std::vector<Shape> all;
    std::map<graph::BufferId, const graph::Op*> writer;
    for (const graph::Op& op : g.ops)
        if (op.kind == graph::OpKind::MatMul || op.kind == graph::OpKind::MatMulAdd) writer[op.out] = &op;
    std::vector<const graph::Op*> paired;
    for (const graph::Op& op : g.ops) {
        if (op.kind != graph::OpKind::SwiGlu || op.gelu) continue;
        const auto gate = writer.find(op.in), up = writer.find(op.up);
        if (gate == writer.end() || up == writer.end()) continue;
        if (!MatVecOp::pairable(*gate->second->weight, *up->second->weight)) continue;
        all.push_back({gate->second->label + "+" + up->second->label, gate->second->weight, up->second->weight});
        paired.push_back(gate->second);
        paired.push_back(up->second);
    }
    const auto nUsed = static_cast<uint32_t>(std::max(g.config->nExpertUsed, 1));
    for (const graph::Op& op : g.ops) {
        switch (op.kind) {
            case graph::OpKind::MatMul:
            case graph::OpKind::MatMulAdd:
            case graph::OpKind::MoeRoute:
                if (std::find(paired.begin(), paired.end(), &op) == paired.end()) all.push_back({op.label, op.weight});
                break;
            case graph::OpKind::GateUpSwiGlu: all.push_back({op.label, op.weight, op.upWeight}); break;
            case graph::OpKind::MoeFfn:
            case graph::OpKind::MoeFfnAdd:
                if (MatVecOp::pairable(*op.weight, *op.upWeight)) {
                    all.push_back({op.label + ".gate+up", op.weight, op.upWeight, nUsed, nUsed});
                } else {
                    all.push_back({op.label + ".gate", op.weight, nullptr, nUsed, nUsed});
                    all.push_back({op.label + ".up", op.upWeight, nullptr, nUsed, nUsed});
                }
                all.push_back({op.label + ".down", op.downWeight, nullptr, nUsed, 1});
                break;
            default: break;
        }
    }
    std::vector<Shape> distinct;
    std::map<std::tuple<int, int64_t, int64_t, bool, uint32_t>, size_t> seen;
    for (const Shape& s : all) {
        const auto [at, fresh] = seen.insert({{int(s.w->type), s.w->rows, s.w->cols, s.up != nullptr, s.experts}, distinct.size()});
        if (fresh) distinct.push_back(s);
        else ++distinct[at->second].perToken;
    }
    return distinct;
}

uint32_t actWords(const model::WeightRef& w) {
    const auto k = static_cast<uint32_t>(w.cols);
    const graph::ActFormat f = MatVecOp::formatFor(w.type);
    return f == graph::ActFormat::F32 || f == graph::ActFormat::F16 || f == graph::ActFormat::BF16 ? k : k / 4 + k / 16;
}

class Bench {
public:
    explicit Bench(const KernelBenchOptions& o)
        : options_(o),
          shared_(vk::SharedDevice::get(o.device)),
          device_(shared_->device()),
          pipelines_(shared_->pipelines()),
          queue_(device_),
          matVec_(pipelines_, device_.caps().integerDotProduct) {
        if (!device_.caps().timestamps)
            throw runtime::TierError(fmt::format("bench --kernels: {} has no compute timestamps", device_.caps().name));
        VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        info.queryType = VK_QUERY_TYPE_TIMESTAMP;
        info.queryCount = 2;
        vk::check(vkCreateQueryPool(device_.handle(), &info, nullptr, &queries_), "vkCreateQueryPool", "bench --kernels");
    }
    ~Bench() { vkDestroyQueryPool(device_.handle(), queries_, nullptr); }

    const vk::Device& device() const { return device_; }
    bool discrete() const { return device_.caps().type == "discrete"; }

    // GPU seconds of `n` calls recorded by `call(rec, i)`.
    double time(uint32_t n, bool barriers, const std::function<void(vk::Recorder&, uint32_t)>& call) {
        queue_.runOnce(
            [&](VkCommandBuffer cmd) {
                vkCmdResetQueryPool(cmd, queries_, 0, 2);
                vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 0);
                vk::Recorder rec(cmd, pipelines_.layout());
                rec.setBarriers(barriers);
                for (uint32_t i = 0; i < n; ++i) call(rec, i);
                vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
            },
            std::chrono::milliseconds(600000), "bench --kernels");
        uint64_t t[2] = {};
        vk::check(vkGetQueryPoolResults(device_.handle(), queries_, 0, 2, sizeof(t), t, sizeof(uint64_t),
                                        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
                  "vkGetQueryPoolResults", "bench --kernels");
        return double(t[1] - t[0]) * device_.caps().timestampPeriodNs * 1e-9;
    }

    // Calls for about targetMs of GPU time, from a first run of `probe` calls.
    uint32_t callsFor(uint32_t probe, uint32_t most, const std::function<void(vk::Recorder&, uint32_t)>& call) {
        const double per = std::max(time(probe, true, call) / probe, 1e-9);
        return static_cast<uint32_t>(std::clamp(options_.targetMs * 1e-3 / per, double(probe), double(most)));
    }

    vk::PipelineFactory& pipelines() { return pipelines_; }
    MatVecOp& matVec() { return matVec_; }

private:
    KernelBenchOptions options_;
    std::shared_ptr<vk::SharedDevice> shared_;
    const vk::Device& device_;
    vk::PipelineFactory& pipelines_;
    vk::Queue queue_;
    MatVecOp matVec_;
    VkQueryPool queries_ = VK_NULL_HANDLE;
};

struct CopyPc {
    VkDeviceAddress src, dst;
    uint32_t n;
};

void fill(vk::Queue& queue, const vk::DeviceBuffer& b, uint32_t pattern) {
    queue.runOnce([&](VkCommandBuffer cmd) { vkCmdFillBuffer(cmd, b.handle(), 0, VK_WHOLE_SIZE, pattern); },
                  std::chrono::milliseconds(600000), "bench --kernels: fill");
}

// The copy reference: two buffers of 512 MiB on a discrete GPU (ten times an H100's L2); the
// rate counts the bytes read and the bytes written.
double copyGbps(Bench& bench, vk::Queue& queue, uint64_t bytes) {
    const vk::Device& dev = bench.device();
    vk::DeviceBuffer src(dev, bytes, vk::MemoryKind::DeviceLocal, "bench copy source");
    vk::DeviceBuffer dst(dev, bytes, vk::MemoryKind::DeviceLocal, "bench copy destination");
    fill(queue, src, 0x3c003c00u);
    const VkPipeline copy = bench.pipelines().get(vk::Shader::Copy);
    const CopyPc pc{src.address(), dst.address(), static_cast<uint32_t>(bytes / 16)};
    auto call = [&](vk::Recorder& rec, uint32_t) { rec.dispatch(copy, pc, std::min<uint32_t>(pc.n / 256, 8192)); };
    const uint32_t n = bench.callsFor(2, 200, call);
    return 2.0 * double(bytes) * n / bench.time(n, true, call) * 1e-9;
}

struct SyncPc {
    VkDeviceAddress counter;
    uint32_t steps, spinLimit;
};

// counter[1] of the device-local grid-barrier counter, through a host-visible copy.
uint32_t gaveUpCount(vk::Queue& queue, const vk::DeviceBuffer& counter, const vk::DeviceBuffer& readback) {
    queue.runOnce(
        [&](VkCommandBuffer cmd) {
            const VkBufferCopy region{4, 0, 4};
            vkCmdCopyBuffer(cmd, counter.handle(), readback.handle(), 1, &region);
        },
        std::chrono::milliseconds(600000), "bench --kernels: grid-barrier counter");
    return *static_cast<const uint32_t*>(readback.mapped());
}

// Empty dispatches with barriers against grid barriers in one dispatch, at `groups` workgroups.
// The grid's residency is tried first with one barrier; a grid that gave up is not timed. The
// counter is device-local: polled across PCIe, a host-visible one would time the bus.
SyncTiming syncCosts(Bench& bench, vk::Queue& queue, const vk::DeviceBuffer& counter, const vk::DeviceBuffer& readback,
                     uint32_t groups) {
    const VkPipeline probe = bench.pipelines().get(vk::Shader::SyncProbe);
    constexpr uint32_t kSpinLimit = 1u << 16;  // ~tens of ms of polling: far past any resident grid's wait
    auto gridOf = [&](uint32_t steps) {
        fill(queue, counter, 0);
        const SyncPc pc{counter.address(), steps, kSpinLimit};
        return bench.time(1, true, [&](vk::Recorder& rec, uint32_t) { rec.dispatch(probe, pc, groups); });
    };
    SyncTiming t;
    t.groups = groups;
    const SyncPc empty{counter.address(), 0, kSpinLimit};
    auto emptyCall = [&](vk::Recorder& rec, uint32_t) { rec.dispatch(probe, empty, groups); };
    const uint32_t n = bench.callsFor(16, 20000, emptyCall);
    t.dispatchUs = bench.time(n, true, emptyCall) / n * 1e6;
    gridOf(1);
    t.gaveUp = gaveUpCount(queue, counter, readback);
    if (t.gaveUp != 0) return t;
    constexpr uint32_t kSteps = 4000;
    const double one = gridOf(1), many = gridOf(kSteps);
    t.gaveUp = gaveUpCount(queue, counter, readback);
    t.gridBarrierUs = (many - one) / (kSteps - 1) * 1e6;
    return t;
}

// What every call reads and writes: the weight arena the calls cycle through (past the L2 on
// a discrete GPU), activations, outputs, expert ids (slot s: expert s % nExpert).
struct Buffers {
    vk::DeviceBuffer arena, act, out, ids;
};

Buffers buffersFor(Bench& bench, vk::Queue& queue, const std::vector<Shape>& shapes, uint32_t maxTokens, uint32_t nExpert) {
    uint64_t largest = 0;
    uint32_t maxWords = 0, maxRows = 0, maxUsed = 1;
    for (const Shape& s : shapes) {
        const uint64_t matrix = s.w->rowBytes * uint64_t(s.w->rows);
        const uint64_t slices = s.experts ? std::min<uint64_t>(uint64_t(s.experts) * maxTokens, uint64_t(s.w->stack)) : 1;
        largest = std::max(largest, matrix * slices * (s.up ? 2 : 1));
        maxWords = std::max(maxWords, actWords(*s.w));
        maxRows = std::max(maxRows, static_cast<uint32_t>(s.w->rows));
        maxUsed = std::max(maxUsed, s.experts);
    }
    const vk::Device& dev = bench.device();
    const uint64_t arenaBytes = std::max<uint64_t>(largest + 256, bench.discrete() ? uint64_t{1} << 30 : uint64_t{64} << 20);
    const uint64_t actRows = uint64_t(maxTokens) * maxUsed;
    Buffers b{vk::DeviceBuffer(dev, arenaBytes, vk::MemoryKind::DeviceLocal, "bench weights"),
              vk::DeviceBuffer(dev, actRows * maxWords * 4, vk::MemoryKind::DeviceLocal, "bench activations"),
              vk::DeviceBuffer(dev, actRows * maxRows * 4, vk::MemoryKind::DeviceLocal, "bench output"),
              vk::DeviceBuffer(dev, actRows * 4, vk::MemoryKind::HostVisible, "bench expert ids")};
    fill(queue, b.arena, 0x2a112a11u);  // halves ~0.05, small normal floats: no NaN, no denormals
    fill(queue, b.act, 0x01010101u);
    for (uint32_t s = 0; s < actRows; ++s) static_cast<int32_t*>(b.ids.mapped())[s] = static_cast<int32_t>(s % nExpert);
    return b;
}

// One shape at one token count with one kernel: calls at successive arena offsets.
KernelTiming timeShape(Bench& bench, const Buffers& b, const Shape& s, uint32_t tokens, const MatVecOp::Kernel& kernel,
                       double copy) {
    const uint64_t matrix = s.w->rowBytes * uint64_t(s.w->rows);
    const uint32_t slots = s.experts * tokens;
    const uint64_t slices = s.experts ? std::min<uint64_t>(slots, uint64_t(s.w->stack)) : 1;  // experts 0..slices-1
    const uint64_t bytes = matrix * slices * (s.up ? 2 : 1);
    const uint64_t step = (bytes + 255) / 256 * 256;
    const uint64_t positions = std::max<uint64_t>(1, (b.arena.bytes() - step) / step + 1);
    auto call = [&](vk::Recorder& rec, uint32_t i) {
        MatVecOp::Call c;
        c.w = s.w;
        c.up = s.up;
        c.weights = b.arena.address() + (i % positions) * step;
        c.upWeights = s.up ? c.weights + matrix * slices : c.weights;
        c.act = b.act.address();
        c.out = b.out.address();
        c.ids = b.ids.address();
        c.actStride = actWords(*s.w);
        c.outStride = static_cast<uint32_t>(s.w->rows);
        c.tokens = tokens;
        c.expertSlots = slots;
        c.actDiv = s.actDiv;
        bench.matVec().recordCall(rec, c, kernel);
    };
    KernelTiming t;
    t.label = s.label;
    t.type = model::ggmlTypeName(s.w->type);
    t.rows = static_cast<uint32_t>(s.w->rows);
    t.cols = static_cast<uint32_t>(s.w->cols);
    t.pair = s.up != nullptr;
    t.experts = s.experts;
    t.perToken = s.perToken;
    t.tokens = tokens;
    t.kernel = kernel.name();
    t.calls = bench.callsFor(3, 20000, call);
    t.usPerCall = bench.time(t.calls, false, call) / t.calls * 1e6;
    t.usPerCallBarrier = bench.time(t.calls, true, call) / t.calls * 1e6;
    t.weightBytes = double(bytes);
    t.gbps = t.weightBytes / t.usPerCall * 1e-3;
    t.copyFraction = t.gbps / copy;
    return t;
}

}  // namespace

KernelBenchReport benchMatVecKernels(const graph::Graph& graph, const KernelBenchOptions& options) {
    Bench bench(options);
    vk::Queue fillQueue(bench.device());
    KernelBenchReport report;
    report.device = bench.device().caps().name;
    report.copyBytes = bench.discrete() ? uint64_t{512} << 20 : uint64_t{16} << 20;
    report.copyGbps = copyGbps(bench, fillQueue, report.copyBytes);
    {
        vk::DeviceBuffer counter(bench.device(), 256, vk::MemoryKind::DeviceLocal, "bench grid-barrier counter");
        vk::DeviceBuffer readback(bench.device(), 256, vk::MemoryKind::HostVisible, "bench grid-barrier readback");
        for (uint32_t groups : options.syncGroups)
            report.sync.push_back(syncCosts(bench, fillQueue, counter, readback, groups));
    }

    std::vector<MatVecOp::Kernel> kernels;
    for (const std::string& k : options.kernels) kernels.push_back(MatVecOp::Kernel::parse(k));
    const auto shapes = shapesOf(graph);
    const uint32_t maxTokens = *std::max_element(options.tokens.begin(), options.tokens.end());
    const Buffers buffers =
        buffersFor(bench, fillQueue, shapes, maxTokens, static_cast<uint32_t>(std::max(graph.config->nExpert, 1)));
    for (const Shape& s : shapes)
        for (uint32_t tokens : options.tokens)
            for (const MatVecOp::Kernel& kernel : kernels)
                if (!kernel.v2 || actWords(*s.w) != static_cast<uint32_t>(s.w->cols))  // v2: quantized weights only
                    report.kernels.push_back(timeShape(bench, buffers, s, tokens, kernel, report.copyGbps));
    return report;
}

}  // namespace zinc::vulkan
