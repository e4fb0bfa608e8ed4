#include "runtime/cpu/cpu_tier.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/cpu/op_context.h"
#include "runtime/cpu/op_events.h"
#include "runtime/cpu/quant_dot.h"
#include "runtime/step_limits.h"

namespace zinc::cpu {
namespace {

using graph::OpKind;

class CpuTier final : public runtime::Tier {
public:
    CpuTier(const graph::Graph& graph, const runtime::TierOptions& options)
        : graph_(graph),
          config_(*graph.config),
          limits_("cpu", graph, options),
          arena_(limits_.plan().arenaBytes),
          pool_(options.threads > 0 ? options.threads : defaultThreadCount()),
          kv_(limits_.kv(), config_.kvDim(), options.precision == runtime::Precision::Ggml),
          precision_(options.precision) {
        const size_t half = static_cast<size_t>(config_.ropeDim / 2) * static_cast<size_t>(limits_.maxBatch());
        ropeCos_.resize(half);
        ropeSin_.resize(half);
        if (config_.slidingWindow > 0) {
            ropeCosSwa_.resize(half);
            ropeSinSwa_.resize(half);
        }
    }

    std::string name() const override { return "cpu"; }
    std::string describe() const override {
        return fmt::format("cpu: {} threads, {} kernels, {} precision, context {}, KV cache {:.1f} MiB, {}",
                           pool_.threads(), quantKernelName(),
                           precision_ == runtime::Precision::Ggml ? "ggml" : "f32", limits_.contextLength(),
                           static_cast<double>(kv_.bytes()) / (1 << 20), limits_.describe());
    }
    int32_t contextLength() const override { return limits_.contextLength(); }
    int32_t maxBatch() const override { return limits_.maxBatch(); }

    void evaluate(std::span<const int32_t> tokens, int32_t startPos, runtime::LogitsWanted which,
                  std::span<float> logits) override {
        const auto n = static_cast<int32_t>(tokens.size());
        StepTrace trace(events_, capture_, startPos, n);
        limits_.checkStep(tokens, startPos, which, logits.size());
        syncRecurrentState(startPos, n);
        fillRopeTables(startPos, n);
        OpContext ctx{graph_, limits_.plan(), arena_.data(), pool_, kv_, tokens, startPos, 0, n,
                      ropeCos_.data(), ropeSin_.data(), precision_, actScratch_};
        if (!ropeCosSwa_.empty()) {
            ctx.ropeCosSwa = ropeCosSwa_.data();
            ctx.ropeSinSwa = ropeSinSwa_.data();
        }
        bool pastLayers = false;
        trace.opsBegin();
        for (size_t i = 0; i < graph_.ops.size(); ++i) {
            const graph::Op& op = graph_.ops[i];
            // After the last layer only the tokens whose logits are wanted go on.
            if (!pastLayers && graph::runsOnWantedRowsOnly(op)) {
                pastLayers = true;
                if (which == runtime::LogitsWanted::Last) {
                    ctx.firstRow = n - 1;
                    ctx.rows = 1;
                }
            }
            runOp(ctx, op);
            trace.afterOp(ctx, i);
        }
        const size_t vocab = static_cast<size_t>(config_.nVocab);
        for (int32_t t = ctx.firstRow; t < ctx.firstRow + ctx.rows; ++t)
            std::memcpy(logits.data() + static_cast<size_t>(t - ctx.firstRow) * vocab, ctx.f32(graph_.logits, t),
                        vocab * sizeof(float));
        trace.finish();
    }

    bool saveStateSnapshot() override {
        const graph::MemoryPlan& plan = limits_.plan();
        if (plan.stateEnd == plan.stateBegin) return false;
        snapshot_.assign(arena_.data() + plan.stateBegin, arena_.data() + plan.stateEnd);
        snapshotPosition_ = statePosition_;
        return true;
    }
    void restoreStateSnapshot() override {
        if (snapshot_.empty()) return runtime::Tier::restoreStateSnapshot();
        std::memcpy(arena_.data() + limits_.plan().stateBegin, snapshot_.data(), snapshot_.size());
        statePosition_ = snapshotPosition_;
    }

    void setEventLog(runtime::EventLog* log) override {
        events_ = log;
        if (log) {
            log->tier = name();
            log->device = describe();
            log->queueNames = {fmt::format("cpu: {} threads", pool_.threads())};
        }
    }
    void setCapture(runtime::Capture* capture) override { capture_ = capture; }

private:
    // The recurrent state (persistent buffers) holds the sequence up to statePosition_: a new
    // sequence (position 0) clears it; going on from elsewhere would mix sequences, so it throws.
    void syncRecurrentState(int32_t startPos, int32_t n) {
        const graph::MemoryPlan& plan = limits_.plan();
        if (plan.stateEnd == plan.stateBegin) return;
        if (startPos == 0)
            std::memset(arena_.data() + plan.stateBegin, 0, plan.stateEnd - plan.stateBegin);
        else if (startPos != statePosition_)
            throw runtime::TierError(fmt::format(
                "cpu tier: the recurrent (DeltaNet) state holds positions 0..{}; it cannot resume at position {} "
                "(rewinding a hybrid model needs a state snapshot)", statePosition_ - 1, startPos));
        statePosition_ = startPos + n;
    }

    // ggml's rope cache (model/rope_scaling.h): theta = pos * base^(-2i/d) by repeated float
    // multiplication, divided by rope_freqs, then linear / yarn scaling.
    void fillRopeTables(int32_t startPos, int32_t n) {
        const model::RopeParams p = config_.rope();
        const size_t half = static_cast<size_t>(config_.ropeDim / 2);
        const auto* factors = reinterpret_cast<const float*>(graph_.weights->ropeFreqs.data);
        for (int32_t t = 0; t < n; ++t)
            model::ropeCosSin(p, factors, startPos + t, ropeCos_.data() + static_cast<size_t>(t) * half,
                              ropeSin_.data() + static_cast<size_t>(t) * half);
        if (ropeCosSwa_.empty()) return;
        const model::RopeParams swa = config_.ropeSwa();
        for (int32_t t = 0; t < n; ++t)
            model::ropeCosSin(swa, nullptr, startPos + t, ropeCosSwa_.data() + static_cast<size_t>(t) * half,
                              ropeSinSwa_.data() + static_cast<size_t>(t) * half);
    }

    const graph::Graph& graph_;
    const model::ModelConfig& config_;
    runtime::StepLimits limits_;
    AlignedBytes arena_;
    ThreadPool pool_;
    KvCache kv_;
    runtime::Precision precision_;
    AlignedBytes actScratch_;
    std::vector<float> ropeCos_, ropeSin_, ropeCosSwa_, ropeSinSwa_;
    int32_t statePosition_ = 0;  // tokens folded into the recurrent state
    std::vector<uint8_t> snapshot_;  // saveStateSnapshot's copy of the state, taken at snapshotPosition_
    int32_t snapshotPosition_ = 0;
    runtime::EventLog* events_ = nullptr;  // tracing off unless set
    runtime::Capture* capture_ = nullptr;
};

}  // namespace

void runOp(const OpContext& ctx, const graph::Op& op) {
    switch (op.kind) {
        case OpKind::Embed: return runEmbed(ctx, op);
        case OpKind::RmsNorm: return runRmsNorm(ctx, op);
        case OpKind::MatMul: return runMatMul(ctx, op);
        case OpKind::HeadNorm: return runHeadNorm(ctx, op);
        case OpKind::Rope: return runRope(ctx, op);
        case OpKind::Attention: return runAttention(ctx, op);
        case OpKind::SwiGlu: return runSwiGlu(ctx, op);
        case OpKind::Add: return runAdd(ctx, op);
        case OpKind::MoeRoute: return runMoeRoute(ctx, op);
        case OpKind::MoeFfn: return runMoeFfn(ctx, op);
        case OpKind::SsmConv:
        case OpKind::DeltaNet:
        case OpKind::GatedNorm:
        case OpKind::SplitGate:
        case OpKind::SigmoidGate: return runHybridOp(ctx, op);
        case OpKind::Quantize:
        case OpKind::MatMulAdd:
        case OpKind::MoeFfnAdd:
        case OpKind::GateUpSwiGlu:
        case OpKind::SwiGluQuantize:
        case OpKind::NormQuantize:
        case OpKind::QkRopeAttention: break;
    }
    throw runtime::TierError(fmt::format("cpu tier: op {} has kind {}, which only a lowered graph holds (graph/lower.h)", op.label,
                                         graph::opKindName(op.kind)));
}

std::unique_ptr<runtime::Tier> makeCpuTier(const graph::Graph& graph, const runtime::TierOptions& options) {
    return std::make_unique<CpuTier>(graph, options);
}

}  // namespace zinc::cpu
