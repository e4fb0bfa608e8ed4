#include "vulkan/vulkan_tier.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

#include "runtime/plan_cache.h"
#include "runtime/queued_steps.h"
#include "runtime/recurrent_state.h"
#include "runtime/step_limits.h"
#include "vulkan/graph_recorder.h"
#include "vulkan/ops.h"
#include "vulkan/plan_instrument.h"
#include "vulkan/sampler_state.h"
#include "vulkan/shared_device.h"
#include "vulkan/submitter.h"
#include "vulkan/tier_memory.h"
#include "vulkan/vk_device.h"
#include "vulkan/vk_queue.h"
#include "vulkan/weight_store.h"

namespace zinc::vulkan {
namespace {

using namespace zinc::vk;
using Clock = std::chrono::steady_clock;

constexpr int32_t kQueueAhead = 3;  // greedy tokens in flight at once
constexpr size_t kMaxPlans = 32;  // continuous batching adds a plan per (rows, wanted rows)

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }
int64_t nsOf(Clock::time_point t) { return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count(); }

enum class PlanOutput { Logits, Greedy, Sampled };

struct PlanKey {
    int32_t nTokens;
    bool allRows;
    PlanOutput output;
    bool instrumented = false;  // PlanInstrument's variant (tracing, capture)
    int32_t wantedRows = -1;    // >= 0: a step over rows of several sequences, this many wanting logits
    bool rowsOwnSlots = false;  // such a step's rows each in a slot of its own (decode rows)
    auto operator<=>(const PlanKey&) const = default;
};

struct Plan {
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    int32_t logitsRows = 1;
    uint32_t dispatches = 0;
    std::vector<std::string> labels;  // per timed dispatch (decode plans with timestamps)
};

// The activation arena lives in device memory. On a discrete GPU that is not the host's memory,
// so the default budget (TierOptions::activationBudget = 0) lets a prefill step take all of
// --batch (4 GiB holds 512 tokens of every preset); elsewhere (lavapipe, an integrated GPU) the
// arena is host memory and the host's default applies.
constexpr uint64_t kDiscreteActivationBudget = uint64_t{4} << 30;

runtime::TierOptions withDeviceActivationBudget(runtime::TierOptions options, int32_t deviceIndex) {
    if (options.activationBudget != 0) return options;
    for (const DeviceCaps& d : listDevices())
        if (static_cast<int32_t>(d.index) == deviceIndex && d.type == "discrete") options.activationBudget = kDiscreteActivationBudget;
    return options;
}

class VulkanTier final : public runtime::Tier {
public:
    VulkanTier(const graph::Graph& graph, const runtime::TierOptions& options, int32_t deviceIndex)
        : graph_(graph),
          config_(*graph.config),
          limits_("vulkan", graph, withDeviceActivationBudget(options, deviceIndex), INT32_MAX),
          contextLength_(limits_.contextLength()),
          maxBatch_(limits_.maxBatch()),
          sequences_(limits_.sequenceSlots(options.sequences)),
          shared_(SharedDevice::get(deviceIndex)),
          device_(shared_->device()),
          queue_(device_),
          pipelines_(shared_->pipelines()),
          weights_(device_, queue_, graph,
                   deviceMemoryBudget(graph, limits_.kv(), maxBatch_, options.deviceMemoryLimit, sequences_)),
          memory_(device_, queue_, graph, limits_.plan(), limits_.kv(), contextLength_, maxBatch_, sequences_, options.deltaChunk,
                  std::chrono::milliseconds(options.waitTimeoutMs)),
          recorder_(pipelines_, graph, device_.caps().integerDotProduct),
          submitter_(device_, queue_, memory_, options.gpuTimestamps && device_.caps().timestamps,
                     std::chrono::milliseconds(options.waitTimeoutMs)) {
        if (options.precision != runtime::Precision::Ggml)
            throw runtime::TierError("vulkan tier: only the ggml precision (8-bit activations, F16 KV cache) is implemented");
        planFor({1, false, PlanOutput::Logits});  // the decode plan, recorded once up front
    }

    std::string name() const override { return "vulkan"; }

    std::string describe() const override {
        const auto& c = device_.caps();
        std::string s = fmt::format("vulkan: device {} {} ({}, {}), subgroup {}, {} {}, weights {:.1f} MiB (uploaded at {:.1f} GiB/s), context {}, "
                                    "KV cache F16 {:.1f} MiB{}, {}, decode plan {} dispatches ({} without a barrier before them{}), prefill matmul: {}, prefill attention: {}",
                                    c.index, c.name, c.type, c.driverName, c.subgroupSize,
                                    c.integerDotProduct ? "dot4 matvec" : "unpacked matvec",
                                    vk::MatVecOp::kernelFromEnvironment().name(),
                                    static_cast<double>(weights_.bytes()) / (1 << 20),
                                    static_cast<double>(weights_.bytes()) / double(1 << 30) / std::max(weights_.uploadSeconds(), 1e-9),
                                    contextLength_,
                                    static_cast<double>(memory_.kvCacheBytes()) / (1 << 20),
                                    sequences_ > 1 ? fmt::format(" ({} sequence slots)", sequences_) : std::string(),
                                    limits_.describe(),
                                    stats_.dispatchesPerToken, decodeOverlapped_,
                                    (c.chainedAttention ? "; attention chained" : std::string()) +
                                        (decodeAttentionSplits_ > 0 ? fmt::format("; attention split up to {} ways", decodeAttentionSplits_)
                                                                    : std::string()),
                                    prefillMatmul(), c.prefillAttention);
        if (stats_.decodeTokens > 0) {
            const double tokens = static_cast<double>(stats_.decodeTokens);
            s += fmt::format(", {:.2f} submissions/token, host {:.1f} us/token", stats_.decodeSubmissions / tokens,
                             stats_.decodeHostSeconds / tokens * 1e6);
            if (stats_.gpuTimedTokens > 0)
                s += fmt::format(", GPU {:.3f} ms/token", stats_.decodeGpuSeconds / static_cast<double>(stats_.gpuTimedTokens) * 1e3);
        }
        s += describeOps("; GPU time per decode token by op:", opSeconds_, static_cast<double>(stats_.gpuTimedTokens));
        s += describeOps("; GPU time per prefill token by op:", prefillOpSeconds_, static_cast<double>(prefillTimedTokens_));
        if (rowsTimedSteps_ > 0) {
            const double steps = static_cast<double>(rowsTimedSteps_);
            s += fmt::format("; batched decode steps (evaluateRows, every row wanting logits): GPU {:.3f} ms a step of {:.1f} rows on average",
                             rowsGpuSeconds_ / steps * 1e3, static_cast<double>(rowsTimedRows_) / steps);
            s += describeOps(", by op:", rowsOpSeconds_, steps);
        }
        return s;
    }
    int32_t contextLength() const override { return contextLength_; }
    int32_t maxBatch() const override { return maxBatch_; }
    int32_t sequenceSlots() const override { return sequences_; }
    runtime::TierStats stats() const override { return stats_; }

    // Rows of several sequences in one submission of a batched plan (one per row count and
    // wanted-row count, recorded when first asked for): the token state carries each row's
    // position and slot and the wanted rows; the logits of those come back in row order.
    void evaluateRows(std::span<const runtime::SequenceRow> rows, std::span<float> logits) override {
        limits_.checkRows(rows, sequences_, logits.size());
        const int32_t wanted = runRows(rows, PlanOutput::Logits);
        const size_t vocab = static_cast<size_t>(config_.nVocab);
        if (wanted > 0)  // none wanted: `logits` may be empty, its data() null
            std::memcpy(logits.data(), memory_.logitsHost().mapped(), vocab * sizeof(float) * static_cast<size_t>(wanted));
    }

    // The same step with argmax.comp after the lm_head, a workgroup a wanted row: 4 bytes a row
    // come back instead of the vocabulary's logits (8 rows of Qwen3's: 4.9 MB), and the host
    // scans none of them.
    void evaluateRowsGreedy(std::span<const runtime::SequenceRow> rows, int32_t nVocab, std::span<int32_t> ids) override {
        const size_t wanted = runtime::wantedRows(rows);
        if (nVocab != config_.nVocab || wanted > TierMemory::kRingCapacity || ids.size() < wanted)
            return Tier::evaluateRowsGreedy(rows, nVocab, ids);  // its checks, or evaluate()'s path
        limits_.checkRows(rows, sequences_, wanted * static_cast<size_t>(nVocab));
        runRows(rows, PlanOutput::Greedy);
        for (size_t i = 0; i < wanted; ++i) ids[i] = memory_.generatedId(static_cast<int32_t>(i));
    }

    // The same step with sample.comp after the lm_head, a chain a wanted row: each row's
    // sampler (its parameters, next draw index and penalty window) goes up in its own block, and
    // only the ids come back. Rows whose chain cannot run on the device sample on the host.
    void evaluateRowsSampled(std::span<const runtime::SequenceRow> rows, int32_t nVocab,
                             std::span<const runtime::RowSampler> samplers, std::span<int32_t> ids) override {
        const size_t wanted = runtime::wantedRows(rows);
        bool onDevice = nVocab == config_.nVocab && wanted <= static_cast<size_t>(memory_.samplerBlocks()) && ids.size() >= wanted &&
                        samplers.size() >= wanted;
        for (size_t i = 0; onDevice && i < wanted; ++i) onDevice = samplesRowsOnDevice(samplers[i].sampler->params());
        if (!onDevice) return Tier::evaluateRowsSampled(rows, nVocab, samplers, ids);  // its checks, or the host's chain
        limits_.checkRows(rows, sequences_, wanted * static_cast<size_t>(nVocab));
        memory_.writeSamplerRows(samplers.first(wanted));
        runRows(rows, PlanOutput::Sampled);
        for (size_t i = 0; i < wanted; ++i) {
            ids[i] = memory_.generatedId(static_cast<int32_t>(i));
            if (!samplers[i].sampler->params().greedy()) samplers[i].sampler->skipDraws(1);
        }
    }

    void evaluate(std::span<const int32_t> tokens, int32_t startPos, runtime::LogitsWanted which,
                  std::span<float> logits) override {
        const auto start = Clock::now();
        const auto n = static_cast<int32_t>(tokens.size());
        runtime::EventLog* log = instrument_ ? instrument_->log() : nullptr;
        if (log) log->beginStep(startPos, n);
        limits_.checkStep(tokens, startPos, which, logits.size());
        memory_.writeState(startPos, tokens);
        const bool all = which == runtime::LogitsWanted::All && n > 1;
        if (all && memory_.ensureLogitsRows(n)) plans_.clear();  // they copy into the old buffer
        const bool instrumented = n == 1 && instrument_ && instrument_->active();
        const Plan& plan = planFor({n, all, PlanOutput::Logits, instrumented});
        const bool clearState = syncRecurrentState(startPos, n);
        const uint64_t value = submitter_.submit(plan.cmd, true, clearState);
        const auto submitted = Clock::now();
        const double hostBefore = secondsSince(start);
        submitter_.wait(value, fmt::format("vulkan tier: {} token(s) at position {}", n, startPos));
        const auto afterWait = Clock::now();
        const size_t vocab = static_cast<size_t>(config_.nVocab);
        std::memcpy(logits.data(), memory_.logitsHost().mapped(), vocab * sizeof(float) * static_cast<size_t>(plan.logitsRows));
        if (n == 1) {
            stats_.decodeTokens += 1;
            stats_.decodeSubmissions += 1;
            stats_.decodeHostSeconds += hostBefore + secondsSince(afterWait);
            if (submitter_.timestamps()) timeDecode(plan);
        } else if (submitter_.timestamps() && submitter_.readTimestamps(plan.labels, prefillOpSeconds_) >= 0) {
            prefillTimedTokens_ += n;
        }
        if (instrumented) instrument_->collect();
        if (log) log->addHostStep(nsOf(start), nsOf(submitted), nsOf(afterWait), runtime::EventLog::hostNs());
    }

    void setEventLog(runtime::EventLog* log) override {
        instrument().setLog(log);
        if (log) {
            log->tier = name();
            log->device = describe();
            log->queueNames = {fmt::format("vulkan: {} queue family {}", device_.caps().name, device_.queueFamily())};
        }
        dropInstrumentedPlan();
    }
    void setCapture(runtime::Capture* capture) override {
        instrument().setCapture(capture);
        dropInstrumentedPlan();
    }

    std::vector<int32_t> generateGreedy(int32_t firstToken, int32_t startPos, int32_t n, int32_t nVocab) override {
        if (n <= 0) return {};
        limits_.checkGeneration(firstToken, startPos, n, nVocab);
        return runQueued(planFor({1, false, PlanOutput::Greedy}), firstToken, startPos, n);
    }

    // The chain runs on the GPU (sample.comp) for a top-k of 1..kMaxDeviceTopK and a penalty
    // window of at most kMaxRecentTokens; other settings sample on the host from the logits.
    bool samplesOnDevice(const runtime::SamplerParams& p) const override {
        const bool penalty = p.repeatPenalty != 1.0f && p.repeatLastN != 0;
        if (penalty && (p.repeatLastN < 0 || p.repeatLastN > kMaxRecentTokens)) return false;
        return p.greedy() || (p.topK >= 1 && p.topK <= kMaxDeviceTopK);
    }

    bool samplesRowsOnDevice(const runtime::SamplerParams& p) const override { return samplesOnDevice(p); }

    std::vector<int32_t> generateSampled(int32_t firstToken, int32_t startPos, int32_t n, runtime::Sampler& sampler,
                                         std::vector<int32_t> history, int32_t nVocab) override {
        const auto& p = sampler.params();
        if (!samplesOnDevice(p)) return Tier::generateSampled(firstToken, startPos, n, sampler, std::move(history), nVocab);
        if (n <= 0) return {};
        limits_.checkGeneration(firstToken, startPos, n, nVocab);
        memory_.writeSamplerState(p, sampler.draws(), history);
        auto out = runQueued(planFor({1, false, PlanOutput::Sampled}), firstToken, startPos, n);
        if (!p.greedy()) sampler.skipDraws(static_cast<uint64_t>(n));
        return out;
    }

private:

    // One step of rows of several sequences through the batched plan for (rows, wanted rows,
    // output), recorded when first asked for: the token state carries each row's position and
    // slot and the wanted rows. Returns the wanted rows' count.
    int32_t runRows(std::span<const runtime::SequenceRow> rows, PlanOutput output) {
        const auto n = static_cast<int32_t>(rows.size());
        const auto wanted = static_cast<int32_t>(runtime::wantedRows(rows));
        // A hybrid's slots: each goes on from where its state ends (the shaders clear a slot's
        // copy where its row is at position 0).
        if (memory_.hasRecurrentState()) recurrentSlots_.advanceRows("vulkan", rows);
        runtime::EventLog* log = instrument_ ? instrument_->log() : nullptr;
        const auto start = Clock::now();
        if (log) log->beginStep(rows.front().position, n);
        memory_.writeRows(rows);
        if (output == PlanOutput::Logits && wanted > 1 && memory_.ensureLogitsRows(wanted))
            plans_.clear();  // they copy into the old buffer
        const Plan& plan = planFor({n, false, output, false, wanted, runtime::rowsInOwnSlots(rows)});
        const uint64_t value = submitter_.submit(plan.cmd, true, false);
        const auto submitted = Clock::now();
        submitter_.wait(value, fmt::format("vulkan tier: a step of {} rows of {} sequence slots", n, sequences_));
        const auto afterWait = Clock::now();
        if (submitter_.timestamps() && wanted == n) {  // decode steps only: a prompt chunk is prefill's cost
            const double seconds = submitter_.readTimestamps(plan.labels, rowsOpSeconds_);
            if (seconds >= 0) {
                rowsGpuSeconds_ += seconds;
                rowsTimedSteps_ += 1;
                rowsTimedRows_ += n;
            }
        }
        if (log) log->addHostStep(nsOf(start), nsOf(submitted), nsOf(afterWait), runtime::EventLog::hostNs());
        return wanted;
    }

    // Feeds firstToken, then each token the plan's last kernel picks, with up to kQueueAhead
    // submissions in flight; reads the ids from the ring as each completes.
    std::vector<int32_t> runQueued(const Plan& plan, int32_t firstToken, int32_t startPos, int32_t n) {
        const int32_t one[] = {firstToken};
        memory_.writeState(startPos, one);
        const bool clearState = syncRecurrentState(startPos, n);
        runtime::QueuedSteps steps;
        steps.submit = [&](int32_t i) { return submitter_.submit(plan.cmd, i == 0, clearState); };
        steps.wait = [&](int32_t i, uint64_t value) {
            submitter_.wait(value, fmt::format("vulkan tier: generated token {} at position {}", i, startPos + i));
        };
        steps.collect = [&](int32_t i, uint64_t, bool newest) {
            if (submitter_.timestamps() && newest) timeDecode(plan);
            return memory_.generatedId(i);
        };
        return runtime::runQueuedSteps(n, kQueueAhead, steps, stats_);
    }

    // The recurrent state (hybrid models' persistent buffers, a copy a sequence slot): evaluate()'s
    // one sequence is slot 0's, which a step at position 0 clears (true: the upload zeroes it);
    // any other start but its end throws.
    bool syncRecurrentState(int32_t startPos, int32_t n) {
        if (!memory_.hasRecurrentState()) return false;
        return recurrentSlots_.slot(0).advance("vulkan", startPos, n);
    }

    bool saveStateSnapshot() override { return saveSnapshot(evaluateSnapshot(), 0); }
    void restoreStateSnapshot() override {
        if (snapshots_.empty() || snapshots_.back().position < 0) return runtime::Tier::restoreStateSnapshot();
        restoreSnapshot(snapshots_.back(), 0);
    }
    bool saveSlotSnapshot(int32_t slot) override {
        return slot >= 0 && slot < sequences_ && saveSnapshot(snapshotOf(slot), slot);
    }
    void restoreSlotSnapshot(int32_t slot) override {
        if (slot < 0 || slot >= sequences_ || snapshots_.empty() || snapshots_[static_cast<size_t>(slot)].position < 0)
            return runtime::Tier::restoreSlotSnapshot(slot);
        restoreSnapshot(snapshots_[static_cast<size_t>(slot)], slot);
    }

    // A copy of one slot's state on the device, taken at `position`, with the command buffers
    // that save and restore it (recorded on first use and reused).
    struct StateSnapshot {
        DeviceBuffer buffer;
        VkCommandBuffer save = VK_NULL_HANDLE, restore = VK_NULL_HANDLE;
        int32_t position = -1;  // -1: none taken
    };
    // snapshots_: one a slot (saveSlotSnapshot), then evaluate()'s (saveStateSnapshot).
    StateSnapshot& snapshotOf(int32_t slot) {
        if (snapshots_.empty()) snapshots_.resize(static_cast<size_t>(sequences_) + 1);
        return snapshots_[static_cast<size_t>(slot)];
    }
    StateSnapshot& evaluateSnapshot() { return snapshotOf(sequences_); }
    bool saveSnapshot(StateSnapshot& snap, int32_t slot) {
        if (!memory_.hasRecurrentState()) return false;
        copyState(snap, slot, true);
        snap.position = recurrentSlots_.slot(slot).position();
        return true;
    }
    void restoreSnapshot(StateSnapshot& snap, int32_t slot) {
        copyState(snap, slot, false);
        recurrentSlots_.slot(slot).setEnd(snap.position);
    }

    // Slot `slot`'s copy of the state to the snapshot's buffer (save) or back, on the device.
    void copyState(StateSnapshot& snap, int32_t slot, bool save) {
        const graph::MemoryPlan& plan = memory_.plan();
        const uint64_t bytes = plan.stateStride, at = plan.stateBegin + static_cast<uint64_t>(slot) * plan.stateStride;
        if (!snap.buffer.address()) snap.buffer = DeviceBuffer(device_, bytes, MemoryKind::DeviceLocal, "state snapshot");
        VkCommandBuffer& cmd = save ? snap.save : snap.restore;
        if (cmd == VK_NULL_HANDLE) {
            cmd = queue_.allocate();
            beginReusable(cmd);
            Recorder rec(cmd, pipelines_.layout());
            rec.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                        VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
            if (save)
                rec.copy(memory_.arena().handle(), at, snap.buffer.handle(), 0, bytes);
            else
                rec.copy(snap.buffer.handle(), 0, memory_.arena().handle(), at, bytes);
            rec.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                        VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
            end(cmd);
        }
        const uint64_t value = submitter_.submit(cmd, false);
        submitter_.wait(value, save ? "vulkan tier: state snapshot" : "vulkan tier: state restore");
    }

    // Which tiled matmul prefill runs: the device's choice, with the two-pass matrix-core
    // matmul's scratch, or why that fell back to the integer matmul.
    std::string prefillMatmul() const {
        const auto& c = device_.caps();
        if (!memory_.f16WeightsMissing().empty())
            return fmt::format("{} (ZINC_VK_COOPMAT asked for the two-pass matrix-core matmul, but {})",
                               c.integerDotProduct ? "integer dot products" : "unpacked integer products", memory_.f16WeightsMissing());
        if (memory_.f16WeightBytes() > 0)
            return fmt::format("{}, f16 weight scratch {:.1f} MiB", c.prefillMatmul, static_cast<double>(memory_.f16WeightBytes()) / (1 << 20));
        return c.prefillMatmul;
    }

    static std::string describeOps(const char* title, const std::map<std::string, double>& seconds, double tokens) {
        if (seconds.empty() || tokens <= 0) return {};
        std::vector<std::pair<double, std::string>> ops;
        for (const auto& [label, sec] : seconds) ops.emplace_back(sec, label);
        std::sort(ops.rbegin(), ops.rend());
        std::string s = title;
        for (const auto& [sec, label] : ops) s += fmt::format(" {} {:.1f} us", label, sec / tokens * 1e6);
        return s;
    }

    // A decode plan's GPU time: into the per-token figure and the per-op table.
    void timeDecode(const Plan& plan) {
        const double seconds = submitter_.readTimestamps(plan.labels, opSeconds_);
        if (seconds < 0) return;
        stats_.decodeGpuSeconds += seconds;
        stats_.gpuTimedTokens += 1;
    }

    PlanInstrument& instrument() {
        if (!instrument_) instrument_ = std::make_unique<PlanInstrument>(device_, graph_, memory_.arena(), memory_.plan());
        return *instrument_;
    }
    void dropInstrumentedPlan() {  // recorded again with the new settings when next needed
        plans_.drop({1, false, PlanOutput::Logits, true});
    }

    const Plan& planFor(const PlanKey& key) {
        return plans_.get(key, [&] { return recordPlan(key); });
    }

    Plan recordPlan(const PlanKey& key) {
        Plan plan;
        plan.cmd = queue_.allocate();
        beginReusable(plan.cmd);
        Recorder rec(plan.cmd, pipelines_.layout());
        if (submitter_.timestamps()) {
            submitter_.recordTimingStart(plan.cmd);
            rec.timeDispatches(submitter_.queryPool(), &plan.labels);
        }
        if (key.instrumented) instrument_->beginPlan(plan.cmd);
        int32_t firstRow = 0;
        if (key.wantedRows >= 0)
            recorder_.recordRows(rec, memory_.layout(), weights_, key.nTokens, key.wantedRows, key.rowsOwnSlots);
        else
            firstRow = recorder_.record(rec, memory_.layout(), weights_, key.nTokens, key.allRows,
                                        key.instrumented ? instrument_->hook() : GraphRecorder::OpHook{});
        const size_t rowBytes = sizeof(float) * static_cast<size_t>(config_.nVocab);
        const size_t logitsOffset = memory_.plan().offsets[static_cast<size_t>(graph_.logits)];
        plan.logitsRows = key.wantedRows >= 0 ? key.wantedRows : key.allRows ? key.nTokens : 1;
        if (key.output == PlanOutput::Logits && plan.logitsRows == 0) {
            rec.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                        VK_ACCESS_HOST_READ_BIT);
        } else if (key.output == PlanOutput::Logits) {
            rec.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                        VK_ACCESS_TRANSFER_READ_BIT);
            rec.copy(memory_.arena().handle(), logitsOffset + rowBytes * static_cast<size_t>(firstRow), memory_.logitsHost().handle(), 0,
                     rowBytes * static_cast<size_t>(plan.logitsRows));
            rec.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                        VK_ACCESS_HOST_READ_BIT);
        } else {
            const VkDeviceAddress logits = memory_.arena().address() + logitsOffset + rowBytes * static_cast<size_t>(firstRow);
            if (key.wantedRows >= 0 && key.output == PlanOutput::Greedy) {
                if (key.wantedRows > 0) recorder_.recordArgmaxRows(rec, memory_.layout(), weights_, logits, key.wantedRows);
            } else if (key.wantedRows >= 0) {
                if (key.wantedRows > 0) recorder_.recordSampleRows(rec, memory_.layout(), weights_, logits, key.wantedRows);
            } else if (key.output == PlanOutput::Sampled)
                recorder_.recordSample(rec, memory_.layout(), weights_, logits);
            else
                recorder_.recordArgmax(rec, memory_.layout(), weights_, logits, true);
            rec.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                        VK_ACCESS_HOST_READ_BIT);
        }
        if (submitter_.timestamps()) submitter_.recordTimingEnd(plan.cmd, plan.labels.size());
        if (key.instrumented) instrument_->endPlan(plan.cmd);
        end(plan.cmd);
        plan.dispatches = rec.dispatches();
        if (key.nTokens == 1 && key.output == PlanOutput::Logits) {
            stats_.dispatchesPerToken = plan.dispatches;
            decodeOverlapped_ = rec.overlapped();
            decodeAttentionSplits_ = recorder_.attentionSplits();
        }
        return plan;
    }

    const graph::Graph& graph_;
    const model::ModelConfig& config_;
    runtime::StepLimits limits_;
    int32_t contextLength_;
    int32_t maxBatch_;
    int32_t sequences_;  // KV slots (TierOptions::sequences)
    std::shared_ptr<SharedDevice> shared_;  // the device and its pipelines, kept for later tiers
    const Device& device_;
    Queue queue_;
    PipelineFactory& pipelines_;
    WeightStore weights_;
    TierMemory memory_;
    GraphRecorder recorder_;
    uint32_t decodeAttentionSplits_ = 0;  // the decode plan's split attention: at most this many splits a head
    uint32_t decodeOverlapped_ = 0;  // the decode plan's dispatches run beside the one before (Recorder::overlapNext)
    std::unique_ptr<PlanInstrument> instrument_;  // tracing / capture; created when first asked for
    runtime::RecurrentSlotPositions recurrentSlots_{sequences_};  // where each slot's recurrent state stands (hybrids)
    std::vector<StateSnapshot> snapshots_;
    Submitter submitter_;  // after the memory and the snapshot: destroyed first, waiting for what is in flight
    runtime::PlanCache<PlanKey, Plan> plans_{kMaxPlans, [this](Plan& plan) { queue_.free(plan.cmd); }};
    runtime::TierStats stats_;
    std::map<std::string, double> opSeconds_;         // decode GPU time by op label (timestamps)
    std::map<std::string, double> prefillOpSeconds_;  // batched evaluate() GPU time by op label
    int64_t prefillTimedTokens_ = 0;
    std::map<std::string, double> rowsOpSeconds_;  // evaluateRows' decode steps: GPU time by op label
    double rowsGpuSeconds_ = 0;
    int64_t rowsTimedSteps_ = 0, rowsTimedRows_ = 0;
};

}  // namespace

std::unique_ptr<runtime::Tier> makeVulkanTier(const graph::Graph& graph, const runtime::TierOptions& options,
                                              int32_t deviceIndex) {
    return std::make_unique<VulkanTier>(graph, options, deviceIndex);
}

}  // namespace zinc::vulkan
