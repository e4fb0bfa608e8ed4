// The qwen35 hybrid ops as the cpu tier computes them (runtime/cpu/ops_deltanet.cpp); each
// kernel's comment in kernels/cl/deltanet.cl has its grid.
#include "kfd/tier/hybrid_ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/kernel_args.h"
#include "runtime/tier.h"

namespace zinc::kfd {
namespace {

namespace ka = zinc::kernels;
using graph::OpKind;
using runtime::TierError;

constexpr int32_t kMaxDeltaHeadDim = 128;  // delta_net: one thread per state row

void requireF32(const graph::Op& op, const model::WeightRef* w) {
    if (w && w->type != model::GgmlType::F32)
        throw TierError(fmt::format("kfd tier: op {}: weight {} is {}, the hybrid kernels read F32", op.label, w->name,
                                    model::ggmlTypeName(w->type)));
}

class HybridRecorder {
public:
    HybridRecorder(PlanBuilder& b, const graph::Graph& g, const TierMemory& m, OpRows rows) : b_(b), g_(g), m_(m), r_(rows) {}

    void record(const graph::Op& op) {
        requireF32(op, op.weight);
        requireF32(op, op.biasWeight);
        switch (op.kind) {
            case OpKind::SsmConv: return conv(op);
            case OpKind::DeltaNet: return delta(op);
            case OpKind::GatedNorm: return gatedNorm(op);
            case OpKind::SplitGate: return splitGate(op);
            case OpKind::SigmoidGate: return sigmoidGate(op);
            default: throw TierError(fmt::format("kfd tier: op {} ({}) is not a hybrid-model op", op.label, graph::opKindName(op.kind)));
        }
    }

    // graph::fuse's MatMulConv: the projection's rows convolved by the matvec that sums them.
    void matMulConv(const graph::Op& op, const ConvMatVec& mv) {
        requireF32(op, op.convWeight);
        const auto& h = g_.config->hybrid;
        const int32_t channels = h.convChannels();
        if (mv.rows != channels)
            throw TierError(fmt::format("kfd tier: op {}: weight {} has {} rows for a conv of {} channels", op.label, op.weight->name,
                                        mv.rows, channels));
        if (r_.rowsBlock ? !r_.ownSlots : r_.rows != 1)
            throw TierError(fmt::format("kfd tier: op {}: the conv inside the matvec takes decode rows only (a row a sequence slot)",
                                        op.label));
        b_.launch(mv.kernel,
                  ka::MatVecConvArgs{mv.weight, mv.act, mv.rowBytes, mv.actStride, mv.k, channels, stateOf(op.state),
                                     m_.weight(*op.convWeight), row0(op.out), m_.state(), h.convKernel, width(op.out), r_.rowsBlock,
                                     slotFloats(op), kvRows()},
                  {ceilDiv(channels, ka::kMatVecShape.perGroupX), r_.rows, 1}, {mv.actId, op.state}, {op.out, op.state}, op.label);
    }

private:
    uint64_t row0(graph::BufferId id) const { return m_.at(id, r_.firstRow); }
    uint64_t stateOf(graph::BufferId id) const { return m_.at(id, 0); }  // persistent: slot 0's copy
    // Where a row's copy of the state is: one slot's floats and the KV rows a slot, which the
    // kernels divide each row's first KV row by (kernels/cl/deltanet.cl).
    int32_t slotFloats(const graph::Op& op) const {
        const uint64_t floats = m_.plan().stateStride / 4;
        if (r_.rowsBlock && floats > uint64_t(INT32_MAX))
            throw TierError(fmt::format("kfd tier: op {}: a sequence slot's recurrent state of {} floats (the kernels take 2^31 - 1)",
                                        op.label, floats));
        return r_.rowsBlock ? int32_t(floats) : 0;
    }
    int32_t kvRows() const { return int32_t(std::max<int64_t>(1, m_.kvLayout().rows)); }
    int32_t width(graph::BufferId id) const { return static_cast<int32_t>(g_.buffer(id).width); }
    int32_t tokens() const { return static_cast<int32_t>(r_.rows); }
    // The recurrent ops' rows: side by side (workgroup y a row) where each is in a slot of its own.
    int32_t rowOfGroup() const { return r_.rowsBlock && r_.ownSlots ? 1 : 0; }
    uint32_t rowGroups() const { return rowOfGroup() ? r_.rows : 1; }

    void conv(const graph::Op& op) {
        const auto& h = g_.config->hybrid;
        const int32_t channels = h.convChannels();
        b_.launch("ssm_conv",
                  ka::SsmConvArgs{row0(op.in), stateOf(op.state), m_.weight(*op.weight), row0(op.out), m_.state(), channels,
                                  h.convKernel, tokens(), width(op.in), width(op.out), r_.rowsBlock, slotFloats(op), kvRows(),
                                  rowOfGroup()},
                  {ceilDiv(channels, ka::kSsmConvShape.perGroupX), rowGroups(), 1}, {op.in, op.state}, {op.out, op.state}, op.label);
    }

    void delta(const graph::Op& op) {
        const auto& c = *g_.config;
        const auto& h = c.hybrid;
        if (h.headDim > kMaxDeltaHeadDim)
            throw TierError(fmt::format("kfd tier: op {}: DeltaNet head dim {} (delta_net takes up to {})", op.label, h.headDim,
                                        kMaxDeltaHeadDim));
        const float qScale = 1.0f / std::sqrt(static_cast<float>(h.headDim));  // as the cpu tier
        b_.launch("delta_net",
                  ka::DeltaNetArgs{row0(op.in), row0(op.alpha), row0(op.beta), row0(op.out), stateOf(op.state), m_.weight(*op.weight),
                                   m_.weight(*op.biasWeight), m_.state(), h.headDim, h.keyHeads, tokens(), width(op.in),
                                   width(op.alpha), width(op.out), c.normEps, qScale, r_.rowsBlock, slotFloats(op), kvRows(),
                                   rowOfGroup()},
                  {uint32_t(h.valueHeads), rowGroups(), 1}, {op.in, op.alpha, op.beta, op.state}, {op.out, op.state}, op.label);
    }

    void gatedNorm(const graph::Op& op) {
        const auto n = static_cast<int32_t>(op.weight->cols);
        if (int64_t(n) * op.heads != width(op.in))
            throw TierError(fmt::format("kfd tier: op {}: {} heads of {} do not fill rows of {}", op.label, op.heads, n, width(op.in)));
        b_.launch("gated_norm",
                  ka::GatedNormArgs{row0(op.in), row0(op.gate), m_.weight(*op.weight), row0(op.out), n, g_.config->normEps, width(op.in),
                                    width(op.gate), width(op.out)},
                  {uint32_t(op.heads), r_.rows, 1}, {op.in, op.gate}, {op.out}, op.label);
    }

    void splitGate(const graph::Op& op) {
        const int32_t headDim = width(op.in) / (2 * op.heads);
        b_.launch("split_gate",
                  ka::SplitGateArgs{row0(op.in), row0(op.out), row0(op.gate), headDim, width(op.in), width(op.out), width(op.gate)},
                  {uint32_t(op.heads), r_.rows, 1}, {op.in}, {op.out, op.gate}, op.label);
    }

    void sigmoidGate(const graph::Op& op) {
        const int32_t n = width(op.in);
        const bool perToken = width(op.gate) == 1;
        if (width(op.out) != n || (!perToken && width(op.gate) != n))
            throw TierError(fmt::format("kfd tier: op {}: operands of different widths", op.label));
        b_.launch("sigmoid_gate", ka::SigmoidGateArgs{row0(op.in), row0(op.gate), row0(op.out), n, n, width(op.gate), perToken ? 1 : 0},
                  {ceilDiv(n, ka::kSigmoidGateShape.perGroupX), r_.rows, 1}, {op.in, op.gate}, {op.out}, op.label);
    }

    PlanBuilder& b_;
    const graph::Graph& g_;
    const TierMemory& m_;
    OpRows r_;
};

}  // namespace

void recordHybridOp(PlanBuilder& b, const graph::Graph& g, const TierMemory& m, const graph::Op& op, OpRows rows) {
    HybridRecorder(b, g, m, rows).record(op);
}

void recordMatMulConv(PlanBuilder& b, const graph::Graph& g, const TierMemory& m, const graph::Op& op, OpRows rows,
                      const ConvMatVec& matVec) {
    HybridRecorder(b, g, m, rows).matMulConv(op, matVec);
}

void recordCopyWords(PlanBuilder& b, uint64_t src, uint64_t dst, uint64_t words) {
    if (words > uint64_t(INT32_MAX)) throw TierError(fmt::format("kfd tier: a state copy of {} words (copy_words takes 2^31 - 1)", words));
    b.launch("copy_words", ka::CopyWordsArgs{src, dst, int32_t(words)}, {ceilDiv(int64_t(words), ka::kCopyWordsShape.perGroupX), 1, 1},
             {}, {}, "state copy");
}

}  // namespace zinc::kfd
