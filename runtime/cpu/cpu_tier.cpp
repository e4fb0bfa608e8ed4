#include "runtime/cpu/cpu_tier.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "graph/batched_step.h"
#include "runtime/cpu/op_context.h"
#include "runtime/cpu/op_events.h"
#include "runtime/cpu/quant_dot.h"
#include "runtime/recurrent_state.h"
#include "runtime/step_limits.h"

namespace zinc::cpu {
namespace {

using graph::OpKind;

class CpuTier final : public runtime::Tier {
public:
    CpuTier(const graph::Graph& graph, const runtime::TierOptions& options)
        : graph_(graph),
          config_(*graph.config),
          limits_("cpu", graph, options, INT32_MAX),
          arena_(limits_.plan().arenaBytes),
          pool_(options.threads > 0 ? options.threads : defaultThreadCount()),
          kv_(limits_.kv(), config_.kvDim(), options.precision == runtime::Precision::Ggml,
              limits_.sequenceSlots(options.sequences)),
          precision_(options.precision),
          deltaChunk_(options.deltaChunk),
          state_(kv_.slots()),
          crossingLayerEnd_(graph::buffersCrossingLayerEnd(graph)) {
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
        const std::string multi = multiTokenKernelName();
        return fmt::format("cpu: {} threads, {} kernels{}, {} precision, context {}, KV cache {:.1f} MiB{}, {}",
                           pool_.threads(), quantKernelName(),
                           multi != quantKernelName() ? " (" + multi + " multi-token K-quants)" : std::string(),
                           precision_ == runtime::Precision::Ggml ? "ggml" : "f32", limits_.contextLength(),
                           static_cast<double>(kv_.bytes()) / (1 << 20),
                           kv_.slots() > 1 ? fmt::format(" ({} sequence slots)", kv_.slots()) : std::string(),
                           limits_.describe());
    }
    int32_t contextLength() const override { return limits_.contextLength(); }
    int32_t maxBatch() const override { return limits_.maxBatch(); }
    int32_t sequenceSlots() const override { return kv_.slots(); }

    void evaluate(std::span<const int32_t> tokens, int32_t startPos, runtime::LogitsWanted which,
                  std::span<float> logits) override {
        const auto n = static_cast<int32_t>(tokens.size());
        StepTrace trace(events_, capture_, startPos, n);
        limits_.checkStep(tokens, startPos, which, logits.size());
        if (hasState() && state_.slot(0).advance("cpu", startPos, n)) clearState(0);
        fillRopeTables(startPos, n);
        OpContext ctx = context(tokens, startPos, n);
        trace.opsBegin();
        runOps(ctx, trace, [&] {
            // After the last layer only the tokens whose logits are wanted go on.
            if (which == runtime::LogitsWanted::Last) {
                ctx.firstRow = n - 1;
                ctx.rows = 1;
            }
            return true;
        });
        const size_t vocab = static_cast<size_t>(config_.nVocab);
        for (int32_t t = ctx.firstRow; t < ctx.firstRow + ctx.rows; ++t)
            std::memcpy(logits.data() + static_cast<size_t>(t - ctx.firstRow) * vocab, ctx.f32(graph_.logits, t),
                        vocab * sizeof(float));
        trace.finish();
    }

    void evaluateRows(std::span<const runtime::SequenceRow> rows, std::span<float> logits) override {
        limits_.checkRows(rows, kv_.slots(), logits.size());
        const auto n = static_cast<int32_t>(rows.size());
        rowTokens_.clear();
        rowPositions_.clear();
        rowSlots_.clear();
        wantedRows_.clear();
        for (int32_t t = 0; t < n; ++t) {
            const runtime::SequenceRow& r = rows[static_cast<size_t>(t)];
            rowTokens_.push_back(r.token);
            rowPositions_.push_back(r.position);
            rowSlots_.push_back(r.slot);
            if (r.wantLogits) wantedRows_.push_back(t);
        }
        StepTrace trace(events_, nullptr, rowPositions_[0], n);
        if (hasState())
            for (int32_t slot : state_.advanceRows("cpu", rows)) clearState(slot);
        for (int32_t t = 0; t < n; ++t) fillRopeRow(t, rowPositions_[static_cast<size_t>(t)]);
        OpContext ctx = context(rowTokens_, 0, n);
        ctx.rowPositions = rowPositions_.data();
        ctx.rowSlots = rowSlots_.data();
        // A hybrid's delta rule token by token, never in chunks (whose sums depend on where a
        // step cuts a prompt): a row's bits do not depend on the rows beside it, so serve's
        // texts do not depend on the load (as on the vulkan tier). The recurrence is a small
        // part of a token's work on the cpu.
        ctx.deltaChunk = 0;
        trace.opsBegin();
        runOps(ctx, trace, [&] {
            // The wanted rows go on, gathered to rows 0..k-1; none wanted: the step ends here.
            gatherRows(wantedRows_);
            ctx.firstRow = 0;
            ctx.rows = static_cast<int32_t>(wantedRows_.size());
            return ctx.rows > 0;
        });
        const size_t vocab = static_cast<size_t>(config_.nVocab);
        for (size_t k = 0; k < wantedRows_.size(); ++k)
            std::memcpy(logits.data() + k * vocab, ctx.f32(graph_.logits, static_cast<int32_t>(k)), vocab * sizeof(float));
        trace.finish();
    }

    // Of evaluate()'s sequence: slot 0's copy.
    bool saveStateSnapshot() override {
        if (!hasState()) return false;
        const uint8_t* copy = stateCopy(0);
        snapshot_.assign(copy, copy + limits_.plan().stateStride);
        snapshotPosition_ = state_.slot(0).position();
        return true;
    }
    void restoreStateSnapshot() override {
        if (snapshot_.empty()) return runtime::Tier::restoreStateSnapshot();
        std::memcpy(stateCopy(0), snapshot_.data(), snapshot_.size());
        state_.slot(0).setEnd(snapshotPosition_);
    }
    bool saveSlotSnapshot(int32_t slot) override {
        if (!hasState() || slot < 0 || slot >= kv_.slots()) return false;
        slotSnapshots_.resize(static_cast<size_t>(kv_.slots()));
        const uint8_t* copy = stateCopy(slot);
        slotSnapshots_[static_cast<size_t>(slot)].assign(copy, copy + limits_.plan().stateStride);
        state_.slot(slot).saved();
        return true;
    }
    void restoreSlotSnapshot(int32_t slot) override {
        if (slot < 0 || static_cast<size_t>(slot) >= slotSnapshots_.size() || slotSnapshots_[static_cast<size_t>(slot)].empty())
            return runtime::Tier::restoreSlotSnapshot(slot);
        const auto& snapshot = slotSnapshots_[static_cast<size_t>(slot)];
        std::memcpy(stateCopy(slot), snapshot.data(), snapshot.size());
        state_.slot(slot).restored();
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
    OpContext context(std::span<const int32_t> tokens, int32_t startPos, int32_t n) {
        OpContext ctx{graph_, limits_.plan(), arena_.data(), pool_, kv_, tokens, startPos, 0, n,
                      ropeCos_.data(), ropeSin_.data(), precision_, actScratch_};
        ctx.deltaChunk = deltaChunk_;
        if (!ropeCosSwa_.empty()) {
            ctx.ropeCosSwa = ropeCosSwa_.data();
            ctx.ropeSinSwa = ropeSinSwa_.data();
        }
        return ctx;
    }

    // Runs the graph; where the layer stack ends, `atLayerEnd` narrows ctx to the wanted rows
    // and says whether anything is left to run.
    template <typename AtLayerEnd>
    void runOps(OpContext& ctx, StepTrace& trace, AtLayerEnd atLayerEnd) {
        bool pastLayers = false;
        for (size_t i = 0; i < graph_.ops.size(); ++i) {
            const graph::Op& op = graph_.ops[i];
            if (!pastLayers && graph::runsOnWantedRowsOnly(op)) {
                pastLayers = true;
                if (!atLayerEnd()) return;
            }
            if (ctx.rowSlots && (op.kind == OpKind::SsmConv || op.kind == OpKind::DeltaNet))
                runEachSlotsRows(ctx, op);
            else
                runOp(ctx, op);
            trace.afterOp(ctx, i);
        }
    }

    // Moves row wanted[k] of every buffer alive at the layer stack's end to row k (k ascending,
    // wanted[k] >= k, so no row is overwritten before it is read).
    void gatherRows(const std::vector<int32_t>& wanted) {
        const graph::MemoryPlan& plan = limits_.plan();
        for (graph::BufferId id : crossingLayerEnd_) {
            const size_t rowBytes = static_cast<size_t>(graph_.buffer(id).width) * sizeof(float);
            uint8_t* base = arena_.data() + plan.offsets[static_cast<size_t>(id)];
            for (size_t k = 0; k < wanted.size(); ++k)
                if (static_cast<size_t>(wanted[k]) != k)
                    std::memmove(base + k * rowBytes, base + static_cast<size_t>(wanted[k]) * rowBytes, rowBytes);
        }
    }

    // A recurrent op over rows of several sequences: each run of consecutive rows of one slot
    // in turn, on that slot's copy of the state (a slot's rows are in position order, and the
    // slots' states are independent of each other).
    void runEachSlotsRows(const OpContext& ctx, const graph::Op& op) {
        const int32_t end = ctx.firstRow + ctx.rows;
        for (int32_t begin = ctx.firstRow; begin < end;) {
            int32_t stop = begin + 1;
            while (stop < end && ctx.slotOf(stop) == ctx.slotOf(begin)) ++stop;
            OpContext run = ctx;
            run.firstRow = begin;
            run.rows = stop - begin;
            run.stateCopy = ctx.slotOf(begin);
            runOp(run, op);
            begin = stop;
        }
    }

    // Hybrid models: the persistent buffers hold each slot's sequence up to its position
    // (state_); a slot starting again at position 0 starts from a cleared copy.
    bool hasState() const { return limits_.plan().stateStride > 0; }
    uint8_t* stateCopy(int32_t slot) {
        const graph::MemoryPlan& plan = limits_.plan();
        return arena_.data() + plan.stateBegin + static_cast<size_t>(slot) * plan.stateStride;
    }
    void clearState(int32_t slot) { std::memset(stateCopy(slot), 0, limits_.plan().stateStride); }

    // ggml's rope cache (model/rope_scaling.h): theta = pos * base^(-2i/d) by repeated float
    // multiplication, divided by rope_freqs, then linear / yarn scaling.
    void fillRopeTables(int32_t startPos, int32_t n) {
        for (int32_t t = 0; t < n; ++t) fillRopeRow(t, startPos + t);
    }
    void fillRopeRow(int32_t row, int32_t position) {
        const size_t half = static_cast<size_t>(config_.ropeDim / 2);
        const size_t at = static_cast<size_t>(row) * half;
        const auto* factors = reinterpret_cast<const float*>(graph_.weights->ropeFreqs.data);
        model::ropeCosSin(config_.rope(), factors, position, ropeCos_.data() + at, ropeSin_.data() + at);
        if (!ropeCosSwa_.empty())
            model::ropeCosSin(config_.ropeSwa(), nullptr, position, ropeCosSwa_.data() + at, ropeSinSwa_.data() + at);
    }

    const graph::Graph& graph_;
    const model::ModelConfig& config_;
    runtime::StepLimits limits_;
    AlignedBytes arena_;
    ThreadPool pool_;
    KvCache kv_;
    runtime::Precision precision_;
    int32_t deltaChunk_;
    AlignedBytes actScratch_;
    std::vector<float> ropeCos_, ropeSin_, ropeCosSwa_, ropeSinSwa_;
    runtime::RecurrentSlotPositions state_;  // where each slot's recurrent state and snapshot stand
    std::vector<uint8_t> snapshot_;          // saveStateSnapshot's copy of slot 0's state, at snapshotPosition_
    int32_t snapshotPosition_ = 0;
    std::vector<std::vector<uint8_t>> slotSnapshots_;  // saveSlotSnapshot's, a slot each
    std::vector<graph::BufferId> crossingLayerEnd_;  // gathered to the wanted rows by evaluateRows
    std::vector<int32_t> rowTokens_, rowPositions_, rowSlots_, wantedRows_;  // evaluateRows' step
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
        case OpKind::QkRopeAttention:
        case OpKind::GatedNormQuantize:
        case OpKind::SigmoidGateQuantize:
        case OpKind::MoeExperts:
        case OpKind::MoeSharedAdd:
        case OpKind::MatMulConv: break;
    }
    throw runtime::TierError(fmt::format("cpu tier: op {} has kind {}, which only a lowered graph holds (graph/lower.h)", op.label,
                                         graph::opKindName(op.kind)));
}

std::unique_ptr<runtime::Tier> makeCpuTier(const graph::Graph& graph, const runtime::TierOptions& options) {
    return std::make_unique<CpuTier>(graph, options);
}

}  // namespace zinc::cpu
