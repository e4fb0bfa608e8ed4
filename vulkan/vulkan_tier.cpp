#include "vulkan/vulkan_tier.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "vulkan/graph_recorder.h"
#include "vulkan/plan_instrument.h"
#include "vulkan/sampler_state.h"
#include "vulkan/token_state.h"
#include "vulkan/vk_buffer.h"
#include "vulkan/vk_device.h"
#include "vulkan/vk_error.h"
#include "vulkan/vk_queue.h"
#include "vulkan/weight_store.h"

namespace zinc::vulkan {
namespace {

using namespace zinc::vk;
using Clock = std::chrono::steady_clock;

constexpr uint32_t kRingCapacity = 4096;
constexpr int32_t kQueueAhead = 3;  // greedy tokens in flight at once
constexpr size_t kMaxPlans = 16;
constexpr uint32_t kMaxQueries = 8192;  // per-dispatch timestamps of a decode plan

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }
int64_t nsOf(Clock::time_point t) { return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count(); }

enum class PlanOutput { Logits, Greedy, Sampled };

struct PlanKey {
    int32_t nTokens;
    bool allRows;
    PlanOutput output;
    bool instrumented = false;  // PlanInstrument's variant (tracing, capture)
    auto operator<=>(const PlanKey&) const = default;
};

struct Plan {
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    int32_t logitsRows = 1;
    uint32_t dispatches = 0;
    std::vector<std::string> labels;  // per timed dispatch (decode plans with timestamps)
};

class VulkanTier final : public runtime::Tier {
public:
    VulkanTier(const graph::Graph& graph, const runtime::TierOptions& options, int32_t deviceIndex)
        : graph_(graph),
          config_(*graph.config),
          contextLength_(options.contextLength > 0 ? options.contextLength : std::min(config_.nCtxTrain, 4096)),
          maxBatch_(std::max(1, options.maxBatch)),
          instance_(Instance::shared()),
          device_(instance_, deviceIndex),
          queue_(device_),
          pipelines_(device_),
          weights_(device_, queue_, graph, deviceMemoryBudget(graph, contextLength_, maxBatch_, options.deviceMemoryLimit)),
          memoryPlan_(graph::planMemory(graph, maxBatch_)),
          recorder_(pipelines_, graph, device_.caps().integerDotProduct),
          timestamps_(options.gpuTimestamps && device_.caps().timestamps),
          timeout_(options.waitTimeoutMs) {
        if (options.precision != runtime::Precision::Ggml)
            throw runtime::TierError("vulkan tier: only the ggml precision (8-bit activations, F16 KV cache) is implemented");
        allocate();
        fillRopeTable();
        recordLoadState();
        if (timestamps_) createQueryPool();
        planFor({1, false, PlanOutput::Logits});  // the decode plan, recorded once up front
    }

    ~VulkanTier() override {
        try {  // bounded: buffers must outlive any submission still in flight
            if (queue_.submitted() > 0) queue_.wait(queue_.submitted(), std::chrono::seconds(10), "vulkan tier shutdown");
        } catch (const std::exception&) {
        }
        if (queryPool_) vkDestroyQueryPool(device_.handle(), queryPool_, nullptr);
    }

    std::string name() const override { return "vulkan"; }

    std::string describe() const override {
        const auto& c = device_.caps();
        std::string s = fmt::format("vulkan: device {} {} ({}, {}), subgroup {}, {}, weights {:.1f} MiB, context {}, "
                                    "KV cache F16 {:.1f} MiB, decode plan {} dispatches",
                                    c.index, c.name, c.type, c.driverName, c.subgroupSize,
                                    c.integerDotProduct ? "dot4 matvec" : "unpacked matvec",
                                    static_cast<double>(weights_.bytes()) / (1 << 20), contextLength_,
                                    static_cast<double>(2 * kCache_.bytes()) / (1 << 20), stats_.dispatchesPerToken);
        if (stats_.decodeTokens > 0) {
            const double tokens = static_cast<double>(stats_.decodeTokens);
            s += fmt::format(", {:.2f} submissions/token, host {:.1f} us/token", stats_.decodeSubmissions / tokens,
                             stats_.decodeHostSeconds / tokens * 1e6);
            if (stats_.gpuTimedTokens > 0)
                s += fmt::format(", GPU {:.3f} ms/token", stats_.decodeGpuSeconds / static_cast<double>(stats_.gpuTimedTokens) * 1e3);
        }
        s += describeOps("; GPU time per decode token by op:", opSeconds_, static_cast<double>(stats_.gpuTimedTokens));
        s += describeOps("; GPU time per prefill token by op:", prefillOpSeconds_, static_cast<double>(prefillTimedTokens_));
        return s;
    }
    int32_t contextLength() const override { return contextLength_; }
    int32_t maxBatch() const override { return maxBatch_; }
    runtime::TierStats stats() const override { return stats_; }

    void evaluate(std::span<const int32_t> tokens, int32_t startPos, runtime::LogitsWanted which,
                  std::span<float> logits) override {
        const auto start = Clock::now();
        const auto n = static_cast<int32_t>(tokens.size());
        runtime::EventLog* log = instrument_ ? instrument_->log() : nullptr;
        if (log) log->beginStep(startPos, n);
        checkRequest(tokens, startPos, which, logits.size());
        writeState(startPos, tokens);
        const bool all = which == runtime::LogitsWanted::All && n > 1;
        if (all) ensureLogitsRows(n);
        const bool instrumented = n == 1 && instrument_ && instrument_->active();
        const Plan& plan = planFor({n, all, PlanOutput::Logits, instrumented});
        const VkCommandBuffer cmds[] = {loadState_, plan.cmd};
        const uint64_t value = queue_.submit(cmds);
        const auto submitted = Clock::now();
        const double hostBefore = secondsSince(start);
        queue_.wait(value, timeout_, fmt::format("vulkan tier: {} token(s) at position {}", n, startPos));
        const auto afterWait = Clock::now();
        const size_t vocab = static_cast<size_t>(config_.nVocab);
        std::memcpy(logits.data(), logitsHost_.mapped(), vocab * sizeof(float) * static_cast<size_t>(plan.logitsRows));
        if (n == 1) {
            stats_.decodeTokens += 1;
            stats_.decodeSubmissions += 1;
            stats_.decodeHostSeconds += hostBefore + secondsSince(afterWait);
            if (timestamps_) readTimestamps(plan, opSeconds_);
        } else if (timestamps_ && readTimestamps(plan, prefillOpSeconds_)) {
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
        checkGeneration(firstToken, startPos, n, nVocab);
        return runQueued(planFor({1, false, PlanOutput::Greedy}), firstToken, startPos, n);
    }

    // The chain runs on the GPU (sample.comp) for a top-k of 1..kMaxDeviceTopK and a penalty
    // window of at most kMaxRecentTokens; other settings sample on the host from the logits.
    bool samplesOnDevice(const runtime::SamplerParams& p) const override {
        const bool penalty = p.repeatPenalty != 1.0f && p.repeatLastN != 0;
        if (penalty && (p.repeatLastN < 0 || p.repeatLastN > kMaxRecentTokens)) return false;
        return p.greedy() || (p.topK >= 1 && p.topK <= kMaxDeviceTopK);
    }

    std::vector<int32_t> generateSampled(int32_t firstToken, int32_t startPos, int32_t n, runtime::Sampler& sampler,
                                         std::vector<int32_t> history, int32_t nVocab) override {
        const auto& p = sampler.params();
        if (!samplesOnDevice(p)) return Tier::generateSampled(firstToken, startPos, n, sampler, std::move(history), nVocab);
        if (n <= 0) return {};
        checkGeneration(firstToken, startPos, n, nVocab);
        writeSamplerState(p, sampler.draws(), history);
        auto out = runQueued(planFor({1, false, PlanOutput::Sampled}), firstToken, startPos, n);
        if (!p.greedy()) sampler.skipDraws(static_cast<uint64_t>(n));
        return out;
    }

private:
    void checkGeneration(int32_t firstToken, int32_t startPos, int32_t n, int32_t nVocab) const {
        if (nVocab != config_.nVocab)
            throw runtime::TierError(fmt::format("vulkan tier: generation for {} logits, model has {}", nVocab, config_.nVocab));
        const int32_t one[] = {firstToken};
        checkRequest(one, startPos, runtime::LogitsWanted::Last, static_cast<size_t>(config_.nVocab));
        if (startPos + n > contextLength_)
            throw runtime::TierError(fmt::format("vulkan tier: {} tokens from position {} exceed the context length {}", n,
                                                 startPos, contextLength_));
    }

    // Feeds firstToken, then each token the plan's last kernel picks, with up to kQueueAhead
    // submissions in flight; reads the ids from the ring as each completes.
    std::vector<int32_t> runQueued(const Plan& plan, int32_t firstToken, int32_t startPos, int32_t n) {
        const auto start = Clock::now();
        double waited = 0;
        const int32_t one[] = {firstToken};
        writeState(startPos, one);
        std::vector<uint64_t> values;
        std::vector<int32_t> out;
        const auto* ring = static_cast<const int32_t*>(ring_.mapped());
        int32_t submitted = 0;
        while (static_cast<int32_t>(out.size()) < n) {
            while (submitted < n && submitted - static_cast<int32_t>(out.size()) < kQueueAhead) {
                if (submitted == 0) {
                    const VkCommandBuffer cmds[] = {loadState_, plan.cmd};
                    values.push_back(queue_.submit(cmds));
                } else {
                    values.push_back(queue_.submit(std::span<const VkCommandBuffer>(&plan.cmd, 1)));
                }
                ++submitted;
            }
            const size_t i = out.size();
            const auto waitStart = Clock::now();
            queue_.wait(values[i], timeout_,
                        fmt::format("vulkan tier: generated token {} at position {}", i, startPos + static_cast<int32_t>(i)));
            waited += secondsSince(waitStart);
            if (timestamps_ && submitted == static_cast<int32_t>(i) + 1) readTimestamps(plan, opSeconds_);
            out.push_back(ring[i % kRingCapacity]);
        }
        stats_.decodeTokens += n;
        stats_.decodeSubmissions += n;
        stats_.decodeHostSeconds += secondsSince(start) - waited;
        return out;
    }

    // The chain's parameters and the last kMaxRecentTokens fed ids for sample.comp.
    void writeSamplerState(const runtime::SamplerParams& p, uint64_t drawBase, std::span<const int32_t> history) {
        auto* header = static_cast<SamplerStateHeader*>(samplerHost_.mapped());
        *header = SamplerStateHeader{};
        header->temperature = p.temperature;
        header->topP = p.topP;
        header->minP = p.minP;
        header->repeatPenalty = p.repeatPenalty;
        header->topK = p.topK;
        const bool penalty = p.repeatPenalty != 1.0f && p.repeatLastN > 0;
        header->recentCapacity = penalty ? p.repeatLastN : 0;
        const size_t recent = penalty ? std::min(history.size(), static_cast<size_t>(p.repeatLastN)) : 0;
        header->recentCount = static_cast<int32_t>(recent);
        header->seedLo = static_cast<uint32_t>(p.seed);
        header->seedHi = static_cast<uint32_t>(p.seed >> 32);
        header->drawBase = static_cast<uint32_t>(drawBase);
        std::memcpy(reinterpret_cast<int32_t*>(header + 1), history.data() + history.size() - recent, recent * sizeof(int32_t));
    }

    void checkRequest(std::span<const int32_t> tokens, int32_t startPos, runtime::LogitsWanted which,
                      size_t logitsSize) const {
        const auto n = static_cast<int64_t>(tokens.size());
        if (n == 0 || n > maxBatch_)
            throw runtime::TierError(fmt::format("vulkan tier: batch of {} tokens (limit {})", n, maxBatch_));
        if (startPos < 0 || startPos + n > contextLength_)
            throw runtime::TierError(fmt::format("vulkan tier: positions {}..{} exceed the context length {}", startPos,
                                                 startPos + n - 1, contextLength_));
        for (int32_t id : tokens)
            if (id < 0 || id >= config_.nVocab)
                throw runtime::TierError(fmt::format("vulkan tier: token id {} is outside the vocabulary (0..{})", id,
                                                     config_.nVocab - 1));
        const size_t want = static_cast<size_t>(config_.nVocab) * (which == runtime::LogitsWanted::All ? static_cast<size_t>(n) : 1);
        if (logitsSize < want)
            throw runtime::TierError(fmt::format("vulkan tier: logits buffer holds {} floats, {} needed", logitsSize, want));
    }

    void allocate() {
        const auto& c = config_;
        arena_ = DeviceBuffer(device_, memoryPlan_.arenaBytes, MemoryKind::DeviceLocal, "activation arena");
        const uint64_t layerKv = uint64_t{2} * static_cast<uint64_t>(contextLength_) * static_cast<uint64_t>(c.kvDim());
        kCache_ = DeviceBuffer(device_, layerKv * static_cast<uint64_t>(c.nLayer), MemoryKind::DeviceLocal, "K cache");
        vCache_ = DeviceBuffer(device_, layerKv * static_cast<uint64_t>(c.nLayer), MemoryKind::DeviceLocal, "V cache");
        ropeTable_ = DeviceBuffer(device_, sizeof(float) * static_cast<size_t>(contextLength_) * static_cast<size_t>(c.ropeDim),
                                  MemoryKind::DeviceLocal, "rope table");
        stateDevice_ = DeviceBuffer(device_, tokenStateBytes(maxBatch_), MemoryKind::DeviceLocal, "token state");
        stateHost_ = DeviceBuffer(device_, tokenStateBytes(maxBatch_), MemoryKind::HostVisible, "token state upload");
        samplerDevice_ = DeviceBuffer(device_, kSamplerStateBytes, MemoryKind::DeviceLocal, "sampler state");
        samplerHost_ = DeviceBuffer(device_, kSamplerStateBytes, MemoryKind::HostVisible, "sampler state upload");
        *static_cast<SamplerStateHeader*>(samplerHost_.mapped()) = SamplerStateHeader{};
        ring_ = DeviceBuffer(device_, sizeof(int32_t) * kRingCapacity, MemoryKind::HostVisible, "token id ring");
        logitsHost_ = DeviceBuffer(device_, sizeof(float) * static_cast<size_t>(c.nVocab), MemoryKind::HostVisible, "logits");
        logitsHostRows_ = 1;
        // Quantized activations: one slot per format in use, sized for the widest input.
        const int64_t maxK = std::max({int64_t{c.nEmbd}, int64_t{c.qDim()}, int64_t{c.nFf}, int64_t{c.nFfExpert}});
        const size_t slotRows = static_cast<size_t>(maxBatch_) * static_cast<size_t>(std::max(1, c.nExpertUsed));
        std::set<ActMode> modes;
        for (const auto& op : graph_.ops)
            for (const model::WeightRef* w : {op.weight, op.weight2, op.weight3})
                if (w && (op.kind == graph::OpKind::MatMul || op.kind == graph::OpKind::MoeRoute || op.kind == graph::OpKind::MoeFfn))
                    modes.insert(MatVecOp::actMode(w->type));
        for (ActMode m : modes) {
            auto& slot = actSlots_[static_cast<size_t>(m)];
            slot = DeviceBuffer(device_, sizeof(float) * static_cast<size_t>(maxK) * slotRows, MemoryKind::DeviceLocal,
                                "quantized activations");
            layout_.actSlots[static_cast<size_t>(m)] = slot.address();
        }
        if (c.isMoe()) {
            const size_t batch = static_cast<size_t>(maxBatch_), used = static_cast<size_t>(c.nExpertUsed);
            routerLogits_ = DeviceBuffer(device_, 4 * batch * static_cast<size_t>(c.nExpert), MemoryKind::DeviceLocal, "router logits");
            gateSlots_ = DeviceBuffer(device_, 4 * batch * used * static_cast<size_t>(c.nFfExpert), MemoryKind::DeviceLocal, "expert gate");
            upSlots_ = DeviceBuffer(device_, 4 * batch * used * static_cast<size_t>(c.nFfExpert), MemoryKind::DeviceLocal, "expert up");
            downSlots_ = DeviceBuffer(device_, 4 * batch * used * static_cast<size_t>(c.nEmbd), MemoryKind::DeviceLocal, "expert down");
            layout_.routerLogits = routerLogits_.address();
            layout_.gateSlots = gateSlots_.address();
            layout_.upSlots = upSlots_.address();
            layout_.downSlots = downSlots_.address();
            const auto pairs = static_cast<uint32_t>(batch * used);
            layout_.moeOrderAt = 1 + 3 * MoeOp::maxTiles(pairs, static_cast<uint32_t>(c.nExpert));
            moeGroups_ = DeviceBuffer(device_, sizeof(int32_t) * (layout_.moeOrderAt + pairs), MemoryKind::DeviceLocal,
                                      "MoE expert groups");
            layout_.moeGroups = moeGroups_.address();
        }
        layout_.attnSplits = static_cast<uint32_t>((contextLength_ + 63) / 64);  // attention_split.comp's chunk
        if (static_cast<uint32_t>(contextLength_) > kExactAttentionMax) {
            attnPartials_ = DeviceBuffer(device_, sizeof(float) * static_cast<size_t>(c.nHead) * layout_.attnSplits *
                                                      static_cast<size_t>(c.headDim + 2),
                                         MemoryKind::DeviceLocal, "attention partials");
            layout_.attnPartials = attnPartials_.address();
        }
        layout_.arena = arena_.address();
        layout_.plan = &memoryPlan_;
        layout_.kCache = kCache_.address();
        layout_.vCache = vCache_.address();
        layout_.layerKvBytes = layerKv;
        layout_.ropeTable = ropeTable_.address();
        layout_.state = stateDevice_.address();
        layout_.sampler = samplerDevice_.address();
        layout_.ring = ring_.address();
        layout_.ringCapacity = kRingCapacity;
    }

    // ggml's rope angles, as the cpu tier computes them (model/rope_scaling.h: rope_freqs,
    // linear / yarn scaling), cos and sin in float on the host (GPU sin/cos of large angles are
    // too coarse for the goldens).
    void fillRopeTable() {
        const size_t half = static_cast<size_t>(config_.ropeDim / 2);
        const model::RopeParams p = config_.rope();
        const auto* factors = reinterpret_cast<const float*>(graph_.weights->ropeFreqs.data);
        DeviceBuffer staging(device_, ropeTable_.bytes(), MemoryKind::HostVisible, "rope table upload");
        auto* table = static_cast<float*>(staging.mapped());
        std::vector<float> cs(half), sn(half);
        for (int32_t pos = 0; pos < contextLength_; ++pos) {
            model::ropeCosSin(p, factors, pos, cs.data(), sn.data());
            for (size_t i = 0; i < half; ++i) {
                table[2 * (static_cast<size_t>(pos) * half + i)] = cs[i];
                table[2 * (static_cast<size_t>(pos) * half + i) + 1] = sn[i];
            }
        }
        queue_.runOnce([&](VkCommandBuffer cmd) {
            const VkBufferCopy region{0, 0, ropeTable_.bytes()};
            vkCmdCopyBuffer(cmd, staging.handle(), ropeTable_.handle(), 1, &region);
        }, timeout_, "rope table upload");
    }

    // The command buffer that copies the host's token state to the device copy the kernels
    // read; submitted before a plan whenever the host sets the state.
    void recordLoadState() {
        loadState_ = queue_.allocate();
        beginReusable(loadState_);
        Recorder rec(loadState_, pipelines_.layout());
        rec.copy(stateHost_.handle(), 0, stateDevice_.handle(), 0, stateHost_.bytes());
        rec.copy(samplerHost_.handle(), 0, samplerDevice_.handle(), 0, samplerHost_.bytes());
        rec.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        end(loadState_);
    }

    void createQueryPool() {
        VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        info.queryType = VK_QUERY_TYPE_TIMESTAMP;
        info.queryCount = kMaxQueries;
        check(vkCreateQueryPool(device_.handle(), &info, nullptr, &queryPool_), "vkCreateQueryPool");
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

    // Query 0 is the plan's start, 1..n the end of each timed dispatch, n + 1 the plan's end.
    // Decode plans add to the per-token GPU time; every plan to `opSeconds` by op label.
    bool readTimestamps(const Plan& plan, std::map<std::string, double>& opSeconds) {
        const auto n = static_cast<uint32_t>(plan.labels.size()) + 2;
        std::vector<uint64_t> t(n);
        const VkResult r = vkGetQueryPoolResults(device_.handle(), queryPool_, 0, n, n * sizeof(uint64_t), t.data(),
                                                 sizeof(uint64_t), VK_QUERY_RESULT_64_BIT);
        if (r != VK_SUCCESS) return false;  // VK_NOT_READY: not timed this time
        const double ns = device_.caps().timestampPeriodNs * 1e-9;
        if (&opSeconds == &opSeconds_) {
            stats_.decodeGpuSeconds += static_cast<double>(t[n - 1] - t[0]) * ns;
            stats_.gpuTimedTokens += 1;
        }
        for (size_t i = 0; i < plan.labels.size(); ++i) opSeconds[plan.labels[i]] += static_cast<double>(t[i + 1] - t[i]) * ns;
        return true;
    }

    void writeState(int32_t startPos, std::span<const int32_t> tokens) {
        auto* header = static_cast<TokenStateHeader*>(stateHost_.mapped());
        *header = TokenStateHeader{};
        header->position = startPos;
        header->nTokens = static_cast<int32_t>(tokens.size());
        header->kvLength = startPos + static_cast<int32_t>(tokens.size());
        std::memcpy(reinterpret_cast<int32_t*>(header + 1), tokens.data(), tokens.size_bytes());
    }

    void ensureLogitsRows(int32_t rows) {
        if (rows <= logitsHostRows_) return;
        dropPlans();
        logitsHost_ = DeviceBuffer(device_, sizeof(float) * static_cast<size_t>(config_.nVocab) * static_cast<size_t>(maxBatch_),
                                   MemoryKind::HostVisible, "logits");
        logitsHostRows_ = maxBatch_;
    }

    PlanInstrument& instrument() {
        if (!instrument_) instrument_ = std::make_unique<PlanInstrument>(device_, graph_, arena_, memoryPlan_);
        return *instrument_;
    }
    void dropInstrumentedPlan() {  // recorded again with the new settings when next needed
        if (auto it = plans_.find({1, false, PlanOutput::Logits, true}); it != plans_.end()) {
            queue_.free(it->second.cmd);
            plans_.erase(it);
        }
    }

    void dropPlans() {
        for (auto& [key, plan] : plans_) queue_.free(plan.cmd);
        plans_.clear();
    }

    const Plan& planFor(const PlanKey& key) {
        if (auto it = plans_.find(key); it != plans_.end()) return it->second;
        if (plans_.size() >= kMaxPlans) dropPlans();  // every plan is idle here: submissions were waited for
        Plan plan;
        plan.cmd = queue_.allocate();
        beginReusable(plan.cmd);
        Recorder rec(plan.cmd, pipelines_.layout());
        if (timestamps_) {
            vkCmdResetQueryPool(plan.cmd, queryPool_, 0, kMaxQueries);
            vkCmdWriteTimestamp(plan.cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queryPool_, 0);
            rec.timeDispatches(queryPool_, &plan.labels);
        }
        if (key.instrumented) instrument_->beginPlan(plan.cmd);
        const int32_t firstRow = recorder_.record(rec, layout_, weights_, key.nTokens, key.allRows,
                                                  key.instrumented ? instrument_->hook() : GraphRecorder::OpHook{});
        const size_t rowBytes = sizeof(float) * static_cast<size_t>(config_.nVocab);
        const size_t logitsOffset = memoryPlan_.offsets[static_cast<size_t>(graph_.logits)];
        plan.logitsRows = key.allRows ? key.nTokens : 1;
        if (key.output == PlanOutput::Logits) {
            rec.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                        VK_ACCESS_TRANSFER_READ_BIT);
            rec.copy(arena_.handle(), logitsOffset + rowBytes * static_cast<size_t>(firstRow), logitsHost_.handle(), 0,
                     rowBytes * static_cast<size_t>(plan.logitsRows));
            rec.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                        VK_ACCESS_HOST_READ_BIT);
        } else {
            const VkDeviceAddress logits = arena_.address() + logitsOffset + rowBytes * static_cast<size_t>(firstRow);
            if (key.output == PlanOutput::Sampled)
                recorder_.recordSample(rec, layout_, weights_, logits);
            else
                recorder_.recordArgmax(rec, layout_, weights_, logits, true);
            rec.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                        VK_ACCESS_HOST_READ_BIT);
        }
        if (timestamps_)
            vkCmdWriteTimestamp(plan.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queryPool_,
                                static_cast<uint32_t>(plan.labels.size()) + 1);
        if (key.instrumented) instrument_->endPlan(plan.cmd);
        end(plan.cmd);
        plan.dispatches = rec.dispatches();
        if (key.nTokens == 1 && key.output == PlanOutput::Logits) stats_.dispatchesPerToken = plan.dispatches;
        return plans_.emplace(key, plan).first->second;
    }

    const graph::Graph& graph_;
    const model::ModelConfig& config_;
    int32_t contextLength_;
    int32_t maxBatch_;
    std::shared_ptr<Instance> instance_;
    Device device_;
    Queue queue_;
    PipelineFactory pipelines_;
    WeightStore weights_;
    graph::MemoryPlan memoryPlan_;
    GraphRecorder recorder_;
    bool timestamps_;
    std::chrono::milliseconds timeout_;  // every wait for a submission
    DeviceBuffer arena_, kCache_, vCache_, ropeTable_, stateDevice_, stateHost_, samplerDevice_, samplerHost_, ring_, logitsHost_;
    int32_t logitsHostRows_ = 0;
    std::array<DeviceBuffer, kActModes> actSlots_;
    DeviceBuffer routerLogits_, gateSlots_, upSlots_, downSlots_, attnPartials_, moeGroups_;
    DeviceLayout layout_;
    VkCommandBuffer loadState_ = VK_NULL_HANDLE;
    VkQueryPool queryPool_ = VK_NULL_HANDLE;
    std::map<PlanKey, Plan> plans_;
    runtime::TierStats stats_;
    std::map<std::string, double> opSeconds_;         // decode GPU time by op label (timestamps)
    std::map<std::string, double> prefillOpSeconds_;  // batched evaluate() GPU time by op label
    int64_t prefillTimedTokens_ = 0;
    std::unique_ptr<PlanInstrument> instrument_;  // tracing / capture; created when first asked for
};

}  // namespace

std::unique_ptr<runtime::Tier> makeVulkanTier(const graph::Graph& graph, const runtime::TierOptions& options,
                                              int32_t deviceIndex) {
    if (const auto f = graph::firstGemmaFeature(graph); f.op)
        throw runtime::TierError(fmt::format("vulkan tier: op {} needs {} ({}), which this tier does not implement yet; "
                                             "the cpu tier runs it",
                                             f.op->label, f.what, graph.config->archName));
    return std::make_unique<VulkanTier>(graph, options, deviceIndex);
}

}  // namespace zinc::vulkan
