#include "kfd/tier/tier_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>

#include "kernels/kernel_args.h"
#include "kfd/tier/staged_upload.h"
#include "runtime/host_pages.h"
#include "runtime/tier.h"

namespace zinc::kfd {

using runtime::TierError;

DeviceMemory::DeviceMemory(Device& device, uint64_t bytes, MemoryKind kind, const std::string& what, AllocOptions options)
    : device_(&device) {
    Result<Memory> m = device.allocMemory(std::max<uint64_t>(bytes, 4096), kind, options);
    if (!m)
        throw TierError(fmt::format("kfd tier: allocating {} ({} bytes of {}) on {}: {}", what, bytes, memoryKindName(kind),
                                    device.name(), m.error().describe()));
    memory_ = *m;
}

DeviceMemory::~DeviceMemory() { release(); }

DeviceMemory::DeviceMemory(DeviceMemory&& other) noexcept : device_(other.device_), memory_(other.memory_) {
    other.memory_ = {};
}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept {
    if (this != &other) {
        release();
        device_ = other.device_;
        memory_ = other.memory_;
        other.memory_ = {};
    }
    return *this;
}

void DeviceMemory::release() {
    if (device_ && memory_.size) (void)device_->freeMemory(memory_);
    memory_ = {};
}

ActFormat actFormatFor(const model::WeightRef& w) {
    using model::GgmlType;
    switch (w.type) {
        case GgmlType::F32: case GgmlType::F16: case GgmlType::BF16: case GgmlType::Q8_0: case GgmlType::Q4_0:
        case GgmlType::Q5_0: case GgmlType::IQ4_NL: case GgmlType::Q4_1: case GgmlType::Q5_1: case GgmlType::Q2_K:
        case GgmlType::Q3_K: case GgmlType::Q4_K: case GgmlType::Q5_K: case GgmlType::Q6_K: case GgmlType::IQ4_XS:
            return *graph::actFormatOf(w.type);
        default:
            throw TierError(fmt::format("kfd tier: weight {} has type {}, which no kfd matvec kernel reads "
                                        "(kernels: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, "
                                        "Q6_K, IQ4_NL, IQ4_XS)",
                                        w.name, model::ggmlTypeName(w.type)));
    }
}

uint64_t actRowBytes(ActFormat format, int64_t k) {
    const auto n = static_cast<uint64_t>(k);
    switch (format) {
        case ActFormat::F32: return 4 * n;
        case ActFormat::F16: return 2 * n;
        case ActFormat::Q8_0: return n / 32 * 34;
        case ActFormat::Q8_K: return n / 256 * 292;
        case ActFormat::Q8_1: return n / 32 * 36;
        case ActFormat::BF16: return 2 * n;
    }
    return 4 * n;
}

namespace {

// Every weight the graph uses, once, in graph order.
std::vector<const model::WeightRef*> weightsOf(const graph::Graph& graph) {
    std::vector<const model::WeightRef*> refs;
    std::set<const model::WeightRef*> seen;
    for (const auto& op : graph.ops)
        for (const model::WeightRef* w : op.weights())
            if (w && seen.insert(w).second) refs.push_back(w);
    return refs;
}

uint64_t alignedWeightBytes(const model::WeightRef& w) { return (w.nbytes + 255) / 256 * 256; }

void checkFits(const Device& device, uint64_t weights, uint64_t kvCache, uint64_t activations, uint64_t limitBytes) {
    const uint64_t vram = device.caps().vramBytes;
    const bool capped = limitBytes > 0 && (vram == 0 || limitBytes < vram);
    const uint64_t available = capped ? limitBytes : vram;
    const uint64_t needed = weights + kvCache + activations;
    if (available == 0 || needed <= available) return;  // 0: the device does not say
    const auto mib = [](uint64_t bytes) { return double(bytes) / (1 << 20); };
    throw TierError(fmt::format("kfd tier: the model needs {:.1f} MiB of VRAM (weights {:.1f}, KV cache {:.1f}, activations {:.1f}) "
                                "but {} has {:.1f} MiB{}; lower --ctx or --batch, or use a smaller model",
                                mib(needed), mib(weights), mib(kvCache), mib(activations), device.name(), mib(available),
                                capped ? fmt::format(" to use (--device-memory; {:.1f} MiB in all)", mib(vram)) : ""));
}

}  // namespace

TierMemory::TierMemory(Device& device, const graph::Graph& graph, int32_t contextLength, int32_t maxBatch, uint64_t limitBytes,
                       int32_t sequences)
    : graph_(&graph), plan_(graph::planMemory(graph, maxBatch, std::max(1, sequences))), sequences_(std::max(1, sequences)), maxBatch_(maxBatch) {
    const auto& c = *graph.config;
    uint64_t weightBytes = 0;
    for (const model::WeightRef* w : weightsOf(graph)) weightBytes += alignedWeightBytes(*w);
    // F16 K and V rows laid out by graph::KvLayout (a ring on sliding-window layers), as StepLimits
    // plans them; one copy of the layout per sequence slot.
    kvLayout_ = graph::planKv(c, contextLength, maxBatch);
    const uint64_t rowBytes = 2 * uint64_t(c.kvDim());
    const uint64_t kvRows = uint64_t(kvLayout_.rows) * uint64_t(sequences_);
    const uint64_t kvCacheBytes = 2 * rowBytes * kvRows;
    checkFits(device, weightBytes, kvCacheBytes, plan_.arenaBytes, limitBytes);
    // A small BAR: what the host writes or reads (arena, scratch) stays visible; weights and KV,
    // the bulk, move out of the window.
    const uint64_t bar = device.caps().cpuVisibleVramBytes;
    const bool staged = bar != 0 && weightBytes + kvCacheBytes + plan_.arenaBytes > bar;
    uploadWeights(device, graph, staged);
    arena_ = DeviceMemory(device, plan_.arenaBytes, MemoryKind::Vram, "activation arena");
    kvRowBytes_ = rowBytes;
    kvBytes_ = std::max<uint64_t>(rowBytes * kvRows, rowBytes);
    kv_ = DeviceMemory(device, 2 * kvBytes_, MemoryKind::Vram, "F16 KV cache", {.hostAccess = !staged});
    // Uncached GTT: the host and the CP (WRITE_DATA) write it, kernels and the host read it.
    state_ = DeviceMemory(device, TokenStateBlock::bytes(maxBatch), MemoryKind::Gtt, "token state", {.uncached = true});

    // Widest matvec input: hidden, attention output, FFN, expert, and the hybrids' ssm_out (value dim) and shared expert.
    int64_t maxK = std::max<int64_t>({c.nEmbd, c.qDim(), c.nFf, c.nFfExpert, c.hybrid.valueDim(), c.hybrid.sharedFf});
    std::set<ActFormat> formats;
    for (const auto& op : graph.ops)
        if (op.kind == graph::OpKind::MatMul || op.kind == graph::OpKind::MoeRoute || op.kind == graph::OpKind::MoeFfn)
            for (const model::WeightRef* w : op.weights())
                if (w) formats.insert(actFormatFor(*w));
    for (ActFormat f : formats)
        if (f != ActFormat::F32)
            actSlots_[size_t(f)] = DeviceMemory(device, actRowBytes(f, maxK) * uint64_t(maxBatch) + 256, MemoryKind::Vram,
                                                "quantized activations");
    // Decode attention split over the KV cache (kernels/kernel_args.h attentionSplits): the
    // per-split partial results of one token, or of a row per sequence slot (a step over rows
    // of several sequences splits each row as it splits alone), for the longest layer.
    int32_t maxSlots = 1;
    for (const graph::KvLayer& layer : kvLayout_.layers) maxSlots = std::max(maxSlots, layer.slots);
    attentionSplits_ = kernels::attentionSplits(maxSlots);
    attentionPartialRows_ = std::min(sequences_, maxBatch);
    if (attentionSplits_ > 1)
        attentionPartials_ = DeviceMemory(device,
                                          4 * kernels::attentionPartialFloats(attentionPartialRows_, c.nHead, c.headDim, attentionSplits_),
                                          MemoryKind::Vram, "attention partials");
    if (c.isMoe()) {
        const uint64_t batch = uint64_t(maxBatch), used = uint64_t(c.nExpertUsed);
        routerLogits_ = DeviceMemory(device, 4 * batch * uint64_t(c.nExpert), MemoryKind::Vram, "router logits");
        gateSlots_ = DeviceMemory(device, 4 * batch * used * uint64_t(c.nFfExpert), MemoryKind::Vram, "expert gate rows");
        upSlots_ = DeviceMemory(device, 4 * batch * used * uint64_t(c.nFfExpert), MemoryKind::Vram, "expert up rows");
        downSlots_ = DeviceMemory(device, 4 * batch * used * uint64_t(c.nEmbd), MemoryKind::Vram, "expert down rows");
        uint64_t rowBytes = 0;  // the widest format the down projections read
        for (const auto& op : graph.ops)
            if (op.kind == graph::OpKind::MoeFfn && op.downWeight)
                if (const ActFormat f = actFormatFor(*op.downWeight); f != ActFormat::F32)
                    rowBytes = std::max(rowBytes, actRowBytes(f, c.nFfExpert));
        if (rowBytes) expertRowsAct_ = DeviceMemory(device, rowBytes * batch * used + 256, MemoryKind::Vram, "quantized expert rows");
    }
}

// One VRAM allocation for every weight the graph uses, each 256-byte aligned, copied once in
// GGUF block layout (the kernels read blocks as the file stores them).
void TierMemory::uploadWeights(Device& device, const graph::Graph& graph, bool staged) {
    const std::vector<const model::WeightRef*> refs = weightsOf(graph);
    uint64_t total = 0;
    std::vector<uint64_t> offsets;
    for (const model::WeightRef* w : refs) {
        if (!w->present()) throw TierError(fmt::format("kfd tier: weight {} has no data", w->name));
        offsets.push_back(total);
        total += alignedWeightBytes(*w);
    }
    weights_ = DeviceMemory(device, total, MemoryKind::Vram, "weights", {.hostAccess = !staged});
    std::unique_ptr<StagedUpload> upload;
    if (staged) upload = std::make_unique<StagedUpload>(device, std::min(StagedUpload::kStagingBytes, std::max<uint64_t>(total, 4096)));
    for (size_t i = 0; i < refs.size(); ++i) {
        if (upload)
            upload->copy(weights_.gpu(offsets[i]), refs[i]->data, refs[i]->nbytes, "weights " + refs[i]->name);
        else
            std::memcpy(weights_.cpu<uint8_t>(offsets[i]), refs[i]->data, refs[i]->nbytes);
        runtime::giveBackPages(refs[i]->data, refs[i]->nbytes);  // the device copy is the one used
        weightAt_[refs[i]] = weights_.gpu(offsets[i]);
    }
    if (upload) upload->flush();
    if (upload)
        stagingNote_ = fmt::format(" outside the {:.0f} MiB BAR (staged through a {:.1f} MiB GTT buffer, {} DMA_DATA cop{}; KV cache outside it too)",
                                   double(device.caps().cpuVisibleVramBytes) / (1 << 20), double(upload->stagingBytes()) / (1 << 20),
                                   upload->packets(), upload->packets() == 1 ? "y" : "ies");
}

uint64_t TierMemory::weight(const model::WeightRef& w) const {
    const auto it = weightAt_.find(&w);
    if (it == weightAt_.end()) throw TierError(fmt::format("kfd tier: weight {} was not uploaded", w.name));
    return it->second;
}

uint64_t TierMemory::at(graph::BufferId id, int32_t token) const {
    return arena_.gpu(plan_.offsets[size_t(id)] + uint64_t(token) * uint64_t(graph_->buffer(id).width) * 4);
}

}  // namespace zinc::kfd
