#include "kfd/tier/pm4_tier.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "kfd/tier/graph_recorder.h"
#include "kfd/tier/plan_instrument.h"
#include "kfd/tier/plan_builder.h"
#include "kfd/tier/submitter.h"
#include "kfd/tier/tier_memory.h"
#include "runtime/plan_cache.h"
#include "runtime/queued_steps.h"
#include "runtime/step_limits.h"

namespace zinc::kfd {
namespace {

using Clock = std::chrono::steady_clock;
using runtime::TierError;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }
int64_t nsOf(Clock::time_point t) { return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count(); }

// The GPU clock counter RELEASE_MEM / COPY_DATA sample runs at 100 MHz on RDNA (the simulated
// GPU counts in 10 ns steps too).
constexpr double kGpuClockHz = 100e6;
constexpr size_t kMaxPlans = 16;
constexpr int32_t kMaxStepTokens = 512;  // tokens per step the kernels' dispatch sizes allow

class Pm4Tier final : public runtime::Tier {
public:
    Pm4Tier(const graph::Graph& graph, const runtime::TierOptions& options, std::shared_ptr<Device> device,
            const Pm4TierOptions& kfd)
        : graph_(graph),
          config_(*graph.config),
          kfd_(kfd),
          limits_(kfd.tierName, graph, options, kMaxStepTokens),
          device_(std::move(device)),
          kernels_(*device_),
          memory_(*device_, graph, limits_.contextLength(), limits_.maxBatch(), options.deviceMemoryLimit),
          submitter_(*device_, kernels_.gfx(), {.timeoutMs = kfd.timeoutMs, .dumpDir = kfd.dumpPm4Dir, .route = kfd.route}),
          timestamps_(options.gpuTimestamps) {
        if (options.precision != runtime::Precision::Ggml)
            throw TierError(kfd_.tierName + " tier: only the ggml precision (8-bit activations, F16 KV cache) is implemented");
        const RecordedPlan& decode = planFor({1, false, false});  // the decode plan, recorded once up front
        stats_.dispatchesPerToken = decode.built.dispatches;
    }

    ~Pm4Tier() override = default;

    std::string name() const override { return kfd_.tierName; }
    std::string describe() const override {
        std::string s = fmt::format("{}: {} ({}), weights {:.1f} MiB in VRAM{}, context {}, KV cache F16 {:.1f} MiB, {}, submit: {}",
                                    kfd_.tierName, device_->name(), device_->caps().gfxName, double(memory_.weightBytes()) / (1 << 20), memory_.stagingNote(),
                                    limits_.contextLength(), double(memory_.kvCacheBytes()) / (1 << 20), limits_.describe(),
                                    submitter_.route());
        if (const RecordedPlan* decode = plans_.find(PlanShape{1, false, false}))
            s += fmt::format(", decode IB {} dwords: {} dispatches, {} barriers", decode->built.ibDwords, decode->built.dispatches,
                             decode->built.barriers);
        if (stats_.decodeTokens > 0) {
            const double tokens = double(stats_.decodeTokens);
            s += fmt::format(", {:.2f} submissions/token, host {:.1f} us/token", double(stats_.decodeSubmissions) / tokens,
                             stats_.decodeHostSeconds / tokens * 1e6);
            if (stats_.gpuTimedTokens > 0) s += fmt::format(", GPU {:.3f} ms/token", stats_.decodeGpuSeconds / double(stats_.gpuTimedTokens) * 1e3);
        }
        return s;
    }
    int32_t contextLength() const override { return limits_.contextLength(); }
    int32_t maxBatch() const override { return limits_.maxBatch(); }
    runtime::TierStats stats() const override { return stats_; }

    void evaluate(std::span<const int32_t> tokens, int32_t startPos, runtime::LogitsWanted which, std::span<float> logits) override {
        const auto start = Clock::now();
        const auto n = static_cast<int32_t>(tokens.size());
        runtime::EventLog* log = instrument_ ? instrument_->log() : nullptr;
        if (log) log->beginStep(startPos, n);
        limits_.checkStep(tokens, startPos, which, logits.size());
        const bool all = which == runtime::LogitsWanted::All && n > 1;
        const bool instrumented = n == 1 && instrument_ && instrument_->active();
        const RecordedPlan& plan = instrumented ? instrument_->plan() : planFor({n, all, false});
        TokenSubmission s = submission(plan, startPos, fmt::format("{} token(s) at position {}", n, startPos));
        s.tokens = tokens;
        if (instrumented) s.ibName += "-instrumented";
        const uint64_t value = submitter_.submit(s, plan.built.hostCopy);
        const auto submitted = Clock::now();
        const double hostBefore = secondsSince(start);
        waitFor(value, plan);
        const auto afterWait = Clock::now();
        const size_t vocab = size_t(config_.nVocab);
        const int32_t rows = all ? n : 1;
        const uint8_t* arena = memory_.arenaCpu();
        const size_t offset = memory_.plan().offsets[size_t(graph_.logits)];
        std::memcpy(logits.data(), arena + offset + vocab * 4 * size_t(all ? 0 : n - 1), vocab * 4 * size_t(rows));
        if (n == 1) account(1, hostBefore + secondsSince(afterWait), value);
        if (instrumented) instrument_->collect(submitter_.gpuStamps(value));
        if (log) log->addHostStep(nsOf(start), nsOf(submitted), nsOf(afterWait), runtime::EventLog::hostNs());
    }

    void setEventLog(runtime::EventLog* log) override {
        instrument().setLog(log);
        if (log) {
            log->tier = name();
            log->device = describe();
            log->queueNames = {fmt::format("{}: {} ({})", name(), device_->name(), device_->caps().gfxName)};
        }
    }
    void setCapture(runtime::Capture* capture) override { instrument().setCapture(capture); }

    std::vector<int32_t> generateGreedy(int32_t firstToken, int32_t startPos, int32_t n, int32_t nVocab) override {
        if (n <= 0) return {};
        limits_.checkGeneration(firstToken, startPos, n, nVocab);
        const RecordedPlan& plan = planFor({1, false, true});
        const int32_t one[] = {firstToken};
        // The argmax at the end of each IB writes the next token id where the next IB's embed
        // reads it, so the host only supplies positions.
        runtime::QueuedSteps steps;
        steps.submit = [&](int32_t i) {
            const int32_t pos = startPos + i;
            TokenSubmission s = submission(plan, pos, fmt::format("greedy token {} at position {}", i, pos));
            if (i == 0) s.tokens = one;
            s.copySampledId = true;
            return submitter_.submit(s, plan.built.hostCopy);
        };
        steps.wait = [&](int32_t, uint64_t value) { waitFor(value, plan); };
        steps.collect = [&](int32_t, uint64_t value, bool) {
            if (timestamps_) addGpuTime(value);
            return submitter_.sampledId(value);
        };
        return runtime::runQueuedSteps(n, kfd_.queueAhead, steps, stats_);
    }

private:
    // Waits for `value`; when the wait fails, the error also names the op of `plan` the CP is in.
    void waitFor(uint64_t value, const RecordedPlan& plan) {
        try {
            submitter_.wait(value);
        } catch (const TierError& e) {
            const std::optional<QueueState> state = submitter_.queueState();
            throw TierError(e.what() + (state ? plan.built.describeCpPosition(*state) : std::string()));
        }
    }

    TokenSubmission submission(const RecordedPlan& plan, int32_t position, std::string what) const {
        TokenSubmission s;
        s.ibAddress = plan.built.ib.gpu();
        s.ibDwords = plan.built.ibDwords;
        s.ibName = fmt::format("{}tok{}{}", plan.shape.nTokens, plan.shape.allRows ? "-all" : "", plan.shape.argmax ? "-argmax" : "");
        s.stateAddress = memory_.state();
        s.position = position;
        s.nTokens = plan.shape.nTokens;
        s.kvLength = position + plan.shape.nTokens;
        s.tokensAddress = memory_.tokens();
        s.what = std::move(what);
        return s;
    }

    void account(int64_t tokens, double hostSeconds, uint64_t value) {
        stats_.decodeTokens += tokens;
        stats_.decodeSubmissions += 1;
        stats_.decodeHostSeconds += hostSeconds;
        if (timestamps_) addGpuTime(value);
    }

    void addGpuTime(uint64_t value) {
        if (const uint64_t ticks = submitter_.gpuTicks(value)) {
            stats_.decodeGpuSeconds += double(ticks) / kGpuClockHz;
            stats_.gpuTimedTokens += 1;
        }
    }

    PlanInstrument& instrument() {
        if (!instrument_) instrument_ = std::make_unique<PlanInstrument>(*device_, kernels_, graph_, memory_);
        return *instrument_;
    }

    const RecordedPlan& planFor(const PlanShape& shape) {
        return plans_.get(shape, [&] { return recordGraph(*device_, kernels_, graph_, memory_, shape, kfd_.afterOp); });
    }

    const graph::Graph& graph_;
    const model::ModelConfig& config_;
    Pm4TierOptions kfd_;
    runtime::StepLimits limits_;
    std::shared_ptr<Device> device_;
    KernelTable kernels_;
    TierMemory memory_;
    runtime::PlanCache<PlanShape, RecordedPlan> plans_{kMaxPlans};
    std::unique_ptr<PlanInstrument> instrument_;  // tracing / capture; created when first asked for
    Submitter submitter_;  // after the plans: destroyed first, waiting for what is in flight
    bool timestamps_;
    runtime::TierStats stats_;
};

}  // namespace

std::unique_ptr<runtime::Tier> makePm4Tier(const graph::Graph& graph, const runtime::TierOptions& options,
                                           std::shared_ptr<Device> device, const Pm4TierOptions& kfdOptions) {
    if (!device) throw TierError("kfd tier: no device");
    return std::make_unique<Pm4Tier>(graph, options, std::move(device), kfdOptions);
}

}  // namespace zinc::kfd
