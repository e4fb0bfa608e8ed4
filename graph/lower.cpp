#include "graph/lower.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace zinc::graph {

const char* actFormatName(ActFormat format) {
    switch (format) {
        case ActFormat::Q8_0: return "q8_0";
        case ActFormat::Q8_1: return "q8_1";
        case ActFormat::Q8_K: return "q8_k";
        case ActFormat::F16: return "f16";
        case ActFormat::BF16: return "bf16";
        case ActFormat::F32: return "f32";
    }
    return "?";
}

std::optional<ActFormat> actFormatOf(model::GgmlType type) {
    using model::GgmlType;
    switch (type) {
        case GgmlType::F32: return ActFormat::F32;
        case GgmlType::F16: return ActFormat::F16;
        case GgmlType::BF16: return ActFormat::BF16;
        case GgmlType::Q4_0: case GgmlType::Q5_0: case GgmlType::Q8_0: case GgmlType::IQ4_NL: return ActFormat::Q8_0;
        case GgmlType::Q4_1: case GgmlType::Q5_1: return ActFormat::Q8_1;
        case GgmlType::Q2_K: case GgmlType::Q3_K: case GgmlType::Q4_K: case GgmlType::Q5_K: case GgmlType::Q6_K:
        case GgmlType::IQ4_XS: return ActFormat::Q8_K;
        default: return std::nullopt;
    }
}

namespace {

class Lowering {
public:
    Lowering(const Graph& g, const FormatOf& formatOf) : g_(g), formatOf_(formatOf) {
        out_.graph = &g;
        out_.buffers = g.buffers;
        out_.scratch.assign(g.buffers.size(), Scratch::None);
    }

    Lowered run() {
        const auto& c = *g_.config;
        for (size_t i = 0; i < g_.ops.size(); ++i) {
            const Op& op = g_.ops[i];
            LoweredOp l{op, i, 1, runsOnWantedRowsOnly(op)};
            switch (op.kind) {
                case OpKind::Embed: out_.tokens = op.in; break;
                case OpKind::MatMul: l.act = quantized(l, *op.weight, op.in); break;
                case OpKind::MoeRoute:
                    l.act = quantized(l, *op.weight, op.in);
                    if (out_.routerLogits == kNoBuffer) out_.routerLogits = scratch("moe_router_logits", c.nExpert, Scratch::RouterLogits);
                    break;
                case OpKind::MoeFfn: {
                    l.act = quantized(l, *op.weight, op.in);
                    l.upAct = quantized(l, *op.upWeight, op.in);
                    l.downFormat = formatOf_(*op.downWeight);
                    const int64_t rows = int64_t(c.nExpertUsed);
                    if (out_.expertGate == kNoBuffer) {
                        out_.expertGate = scratch("moe_gate_rows", rows * c.nFfExpert, Scratch::ExpertGate);
                        out_.expertUp = scratch("moe_up_rows", rows * c.nFfExpert, Scratch::ExpertUp);
                        out_.expertDown = scratch("moe_down_rows", rows * c.nEmbd, Scratch::ExpertDown);
                    }
                    if (l.downFormat != ActFormat::F32) actBuffer(l.downFormat, c.nFfExpert);
                    break;
                }
                case OpKind::Attention: l.kvCache = kvCache(op.layer); break;
                default: break;  // every other kind passes through as it is
            }
            for (BufferId written : writesOf(op))
                for (auto& e : cache_)
                    if (e.buffer == written) e = {};
            out_.ops.push_back(std::move(l));
        }
        return std::move(out_);
    }

private:
    BufferId scratch(const std::string& name, int64_t width, Scratch kind) {
        out_.buffers.push_back({name, ElemType::F32, width});
        out_.scratch.push_back(kind);
        return BufferId(out_.buffers.size() - 1);
    }

    BufferId actBuffer(ActFormat f, int64_t width) {
        BufferId& id = out_.actBuffer[size_t(f)];
        if (id == kNoBuffer) id = scratch(fmt::format("act_{}", actFormatName(f)), width, Scratch::Activations);
        auto& b = out_.buffers[size_t(id)];
        b.width = std::max(b.width, width);
        return id;
    }

    BufferId kvCache(int32_t layer) {
        if (kv_.size() <= size_t(layer)) kv_.resize(size_t(layer) + 1, kNoBuffer);
        BufferId& id = kv_[size_t(layer)];
        if (id == kNoBuffer) id = scratch(fmt::format("blk.{}.kv_cache", layer), g_.config->kvDim(), Scratch::KvCache);
        return id;
    }

    // The buffer `consumer`'s weight `w` reads for input `in`: `in` itself (kNoBuffer) for F32,
    // else the format's buffer, with a Quantize step before the consumer unless it already holds
    // `in` over the same rows.
    BufferId quantized(const LoweredOp& consumer, const model::WeightRef& w, BufferId in) {
        const ActFormat f = formatOf_(w);
        if (f == ActFormat::F32) return kNoBuffer;
        const BufferId id = actBuffer(f, g_.buffer(in).width);
        Cached& e = cache_[size_t(f)];
        if (e.buffer == in && e.lastRowOnly == consumer.lastRowOnly) return id;
        LoweredOp q{Op{OpKind::Quantize, consumer.op.layer, consumer.op.label, in}, consumer.first, 0,
                    consumer.lastRowOnly};
        q.format = f;
        q.quantized = id;
        out_.ops.push_back(std::move(q));
        e = {in, consumer.lastRowOnly};
        return id;
    }

    struct Cached {
        BufferId buffer = kNoBuffer;
        bool lastRowOnly = false;
    };
    const Graph& g_;
    const FormatOf& formatOf_;
    Lowered out_;
    std::array<Cached, kActFormats> cache_{};
    std::vector<BufferId> kv_;
};

}  // namespace

Lowered lower(const Graph& graph, const FormatOf& formatOf) {
    return Lowering(graph, formatOf).run();
}

bool writesF32Output(const LoweredOp& op) {
    return op.op.kind != OpKind::Quantize && op.op.kind != OpKind::SwiGluQuantize && op.op.kind != OpKind::MoeExperts;
}

}  // namespace zinc::graph
