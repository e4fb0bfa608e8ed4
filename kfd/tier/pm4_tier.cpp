#include "kfd/tier/pm4_tier.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include "kfd/tier/gpu_failure.h"
#include "kfd/tier/graph_recorder.h"
#include "kfd/tier/hybrid_ops.h"
#include "kfd/tier/op_marks.h"
#include "kfd/tier/plan_instrument.h"
#include "kfd/tier/plan_builder.h"
#include "kfd/tier/sampler_block.h"
#include "kfd/tier/submission_pacer.h"
#include "kfd/tier/submitter.h"
#include "kfd/tier/tier_memory.h"
#include "runtime/plan_cache.h"
#include "runtime/queued_steps.h"
#include "runtime/recurrent_state.h"
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
constexpr size_t kMaxPlans = 32;  // continuous batching adds a plan per (rows, wanted rows)
constexpr int32_t kMaxStepTokens = 512;  // tokens per step the kernels' dispatch sizes allow

class Pm4Tier final : public runtime::Tier {
public:
    Pm4Tier(const graph::Graph& graph, const runtime::TierOptions& options, std::shared_ptr<Device> device,
            const Pm4TierOptions& kfd)
        : graph_(graph),
          config_(*graph.config),
          kfd_(kfd),
          limits_(kfd.tierName, graph, options, kMaxStepTokens),
          sequences_(limits_.sequenceSlots(options.sequences)),
          device_(std::move(device)),
          kernels_(*device_),
          memory_(*device_, graph, limits_.contextLength(), limits_.maxBatch(), options.deviceMemoryLimit, sequences_),
          sampler_(*device_, int32_t(config_.nVocab)),
          submitter_(makeSubmitter()),
          timestamps_(options.gpuTimestamps) {
        if (options.precision != runtime::Precision::Ggml)
            throw TierError(kfd_.tierName + " tier: only the ggml precision (8-bit activations, F16 KV cache) is implemented");
        const RecordedPlan& decode = planFor({1, false, false});  // the decode plan, recorded once up front
        stats_.dispatchesPerToken = decode.built.dispatches;
    }

    ~Pm4Tier() override {
        try {
            stopLoop();
        } catch (const std::exception&) {
            // The submitter's destructor bounds its own wait; destroying the queue stops the CP.
        }
    }

    std::string name() const override { return kfd_.tierName; }
    // --loop, where the door allows it: a queue of ours (KFD, an amdgpu user queue), not CS.
    bool loops() const { return kfd_.loop && kfd_.route != SubmitRoute::Cs; }
    std::string describe() const override {
        std::string s = fmt::format("{}: {} ({}), weights {:.1f} MiB in VRAM{}, context {}, KV cache F16 {:.1f} MiB{}, {}, submit: {}",
                                    kfd_.tierName, device_->name(), device_->caps().gfxName, double(memory_.weightBytes()) / (1 << 20), memory_.stagingNote(),
                                    limits_.contextLength(), double(memory_.kvCacheBytes()) / (1 << 20),
                                    sequences_ > 1 ? fmt::format(" ({} sequence slots)", sequences_) : std::string(), limits_.describe(),
                                    submitter_ ? submitter_->route() : std::string("none (recovery failed)"));
        if (kfd_.loop)
            s += loops() ? std::string(", --loop: one persistent CP loop a generation")
                         : fmt::format(", --loop: not through CS (the kernel resets a job past its timeout): up to {} tokens a submission",
                                       std::max(16, kfd_.tokensPerSubmission));
        if (submitter_ && submitter_->jobTimeoutMs() > 0)
            s += fmt::format(", sampled jobs sized to a quarter of the kernel's {} ms job timeout{}", submitter_->jobTimeoutMs(),
                             pacer_ && pacer_->secondsPerToken() >= 0
                                 ? fmt::format(" ({} tokens a job at {:.1f} ms/token)", pacer_->next(), pacer_->secondsPerToken() * 1e3)
                                 : std::string());
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
    int32_t sequenceSlots() const override { return sequences_; }
    void setCancelFlag(const std::atomic<bool>* flag) override { cancelFlag_ = flag; }

    runtime::TierStats stats() const override {
        runtime::TierStats s = stats_;
        const Submitter::HostCounts c = submitter_ ? submitter_->hostCounts() : Submitter::HostCounts{};
        s.doorbells = c.doorbells;
        s.hostSyscalls = c.syscalls;
        s.tokensInFlight = loops() ? limits_.contextLength() : std::max(16, kfd_.tokensPerSubmission);
        return s;
    }

    void evaluate(std::span<const int32_t> tokens, int32_t startPos, runtime::LogitsWanted which, std::span<float> logits) override {
        ready();
        stopLoop();
        const auto start = Clock::now();
        const auto n = static_cast<int32_t>(tokens.size());
        runtime::EventLog* log = instrument_ ? instrument_->log() : nullptr;
        if (log) log->beginStep(startPos, n);
        limits_.checkStep(tokens, startPos, which, logits.size());
        syncRecurrentState(startPos, n);
        const bool all = which == runtime::LogitsWanted::All && n > 1;
        const bool instrumented = n == 1 && instrument_ && instrument_->active();
        const RecordedPlan& plan = instrumented ? instrument_->plan() : planFor({n, all, false});
        TokenSubmission s = submission(plan, startPos, fmt::format("{} token(s) at position {}", n, startPos));
        s.tokens = tokens;
        if (instrumented) s.ibName += "-instrumented";
        const uint64_t value = submit(s, plan, startPos, n);
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
        if (instrumented) instrument_->collect(submitter_->gpuStamps(value));
        if (log) log->addHostStep(nsOf(start), nsOf(submitted), nsOf(afterWait), runtime::EventLog::hostNs());
    }

    // Rows of several sequences in one submission of a plan recorded per (rows, wanted rows): the
    // token state's rows block carries each row's position and the first KV row of its slot, then
    // the wanted rows, whose logits come back in row order (graph_recorder.h, PlanShape). A
    // hybrid's rows step their slots' copies of the recurrent state (kernels/cl/deltanet.cl), each
    // slot going on from where its state ends or starting again at position 0.
    void evaluateRows(std::span<const runtime::SequenceRow> rows, std::span<float> logits) override {
        ready();
        stopLoop();
        limits_.checkRows(rows, sequences_, logits.size());
        if (hasState()) recurrentSlots_.advanceRows(kfd_.tierName, rows);
        const auto n = static_cast<int32_t>(rows.size());
        std::vector<int32_t> tokens, words(size_t(2 * n));
        for (int32_t i = 0; i < n; ++i) {
            const runtime::SequenceRow& r = rows[size_t(i)];
            tokens.push_back(r.token);
            words[size_t(2 * i)] = r.position;
            words[size_t(2 * i + 1)] = memory_.slotFirstRow(r.slot);
            if (r.wantLogits) words.push_back(i);
        }
        const int32_t wanted = int32_t(words.size()) - 2 * n;
        runtime::EventLog* log = traceLog();
        if (log) log->beginStep(rows.front().position, n);
        const auto start = Clock::now();
        // Only a hybrid's plans differ where every row is in a slot of its own (its recurrent ops'
        // rows side by side), so only they are recorded apart.
        const bool ownSlots = hasState() && runtime::rowsInOwnSlots(rows);
        const RecordedPlan& plan = planFor({.nTokens = n, .wantedRows = wanted, .rowsOwnSlots = ownSlots});
        TokenSubmission s = submission(plan, rows.front().position,
                                       fmt::format("a step of {} rows of {} sequence slots", n, sequences_));
        s.tokens = tokens;
        s.rowsAddress = memory_.rows();
        s.rowWords = words;
        const uint64_t value = submit(s, plan, rows.front().position, 1);
        const auto submitted = Clock::now();
        waitFor(value, plan);
        const auto afterWait = Clock::now();
        const size_t bytes = size_t(config_.nVocab) * 4 * size_t(wanted);
        if (bytes) std::memcpy(logits.data(), memory_.arenaCpu() + memory_.plan().offsets[size_t(graph_.logits)], bytes);
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
        ready();
        stopLoop();
        syncRecurrentState(startPos, n);
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
            return submit(s, plan, pos, 1);
        };
        steps.wait = [&](int32_t, uint64_t value) { waitFor(value, plan); };
        steps.collect = [&](int32_t, uint64_t value, bool) {
            if (timestamps_) addGpuTime(value);
            return submitter_->sampledId(value);
        };
        return runtime::runQueuedSteps(n, kfd_.queueAhead, steps, stats_);
    }

    bool samplesOnDevice(const runtime::SamplerParams& p) const override { return SamplerBlock::supports(p); }

    // The chain on the GPU (sample.cl): tokens queued tokensPerSubmission at a time with one
    // doorbell, the position, KV length and step advanced by the kernel, the end (a stop id,
    // the budget n, a full context) decided by it; the host reads the id ring at the end.
    std::vector<int32_t> generateSampled(int32_t firstToken, int32_t startPos, int32_t n, runtime::Sampler& sampler,
                                         std::vector<int32_t> history, int32_t nVocab) override {
        const runtime::SamplerParams& p = sampler.params();
        if (!samplesOnDevice(p)) return Tier::generateSampled(firstToken, startPos, n, sampler, std::move(history), nVocab);
        if (n <= 0) return {};
        limits_.checkGeneration(firstToken, startPos, n, nVocab);
        ready();
        runtime::EventLog* log = traceLog();
        syncRecurrentState(startPos, 0);  // fed tokens counted below: a stop id may end it early
        // No persistent loop through the kernel's ring (CS): a job it holds past amdgpu's job
        // timeout (lockup_timeout, 10 s for compute rings since Linux commit ec8fbb4, "make
        // compute timeouts consistent") is reset, and a loop lives for a whole generation and
        // sits paused while the user types. That route queues its submissions instead.
        if (loops() && !kfd_.checkSampledStep && !log) return generateLooped(firstToken, startPos, n, sampler, history);
        stopLoop();
        const auto start = Clock::now();
        double waited = 0;
        sampler_.write({.params = &p, .drawBase = sampler.draws(), .history = history, .maxSteps = n,
                        .contextLength = limits_.contextLength(), .stopIds = kfd_.stopTokens});
        // Traced: one token per submission through the instrumented sampling plan (per-op stamps).
        const RecordedPlan& plan = log ? instrument_->samplingPlan(sampler_) : planFor({1, false, false, true});
        const bool check = bool(kfd_.checkSampledStep);
        // Through the kernel's ring each submission is one job, sized by the pacer to stay well
        // inside the kernel's job timeout; on a queue of ours, tokensPerSubmission (at least 16).
        SubmissionPacer& pacer = pacerFor(*submitter_);
        const int32_t one[] = {firstToken};
        struct Job {
            uint64_t value;
            int32_t tokens;
            Clock::time_point submitted;
        };
        std::vector<Job> inFlight;
        std::optional<Clock::time_point> lastDone;  // when the previous job's fence was seen
        int32_t queued = 0, waitedFor = 0;
        const auto waitOldest = [&] {
            const auto before = Clock::now();
            const Job job = inFlight.front();
            waitFor(job.value, plan);
            const auto done = Clock::now();
            waited += std::chrono::duration<double>(done - before).count();
            // It ran from its submission or from the end of the job before it, whichever is later.
            const auto began = lastDone && *lastDone > job.submitted ? *lastDone : job.submitted;
            pacer.ran(job.tokens, std::chrono::duration<double>(done - began).count());
            lastDone = done;
            inFlight.erase(inFlight.begin());
        };
        while (queued < n) {
            const int32_t k = std::min(check || log ? 1 : pacer.next(), n - queued);
            TokenSubmission s = submission(plan, startPos + queued, fmt::format("sampled tokens {}..{} from position {}", queued,
                                                                                queued + k - 1, startPos));
            if (queued == 0) {
                s.tokens = one;
            } else {
                s.stateAddress = 0;  // the kernel advanced it
            }
            s.repeat = uint32_t(k);
            s.gateAddress = sampler_.live();
            if (log) s.ibName += "-instrumented";
            const int64_t submitBegin = runtime::EventLog::hostNs();
            const uint64_t value = submit(s, plan, startPos + queued, k);
            inFlight.push_back({value, k, Clock::now()});
            stats_.decodeSubmissions += 1;
            queued += k;
            if (log) {
                const int64_t submitted = runtime::EventLog::hostNs();
                waitOldest();
                log->beginStep(startPos + queued - 1, 1);
                instrument_->collect(submitter_->gpuStamps(value));
                log->addHostStep(submitBegin, submitted, runtime::EventLog::hostNs(), runtime::EventLog::hostNs());
            }
            if (check) {
                if (!inFlight.empty()) waitOldest();
                const float* row = reinterpret_cast<const float*>(memory_.arenaCpu() + memory_.plan().offsets[size_t(graph_.logits)]);
                const int32_t step = sampler_.steps() - 1;
                if (step == waitedFor) kfd_.checkSampledStep(step, std::span<const float>(row, size_t(nVocab)), sampler_.ids(step, step + 1)[0]);
                waitedFor = sampler_.steps();
            }
            // At most two submissions in flight; once the GPU says the generation ended, queue no more.
            if (inFlight.size() >= 2) waitOldest();
            if (sampler_.endReason() != EndReason::Running) break;
        }
        while (!inFlight.empty()) waitOldest();
        const int32_t produced = sampler_.steps();
        if (hasState()) evaluateState().setEnd(startPos + produced);  // each step fed one token
        lastEnd_ = sampler_.endReason();
        if (!p.greedy()) sampler.skipDraws(uint64_t(produced));
        stats_.decodeTokens += produced;
        stats_.decodeHostSeconds += secondsSince(start) - waited;
        return sampler_.ids(0, produced);
    }

private:
    // The persistent loop (--loop): an IB the CP runs token after token, chaining back to its
    // own start — WAIT_REG_MEM until `go` (the host's grant; the kernel clears it at the budget),
    // COND_EXEC on `live` around the plan and around the CHAIN, so an end exits the loop and the
    // submission's tail (fence, event) runs.
    const DeviceMemory& loopIb(const RecordedPlan& plan) {
        if (loopIb_) return loopIb_;
        std::vector<uint32_t> dwords(64);
        pm4::Stream s(dwords, kernels_.gfx());
        s.waitRegMem({.address = sampler_.go(), .function = pm4::CompareFunc::NotEqual, .reference = 0});
        s.condExec(sampler_.live(), 4);
        s.indirectBuffer(plan.built.ib.gpu(), plan.built.ibDwords);
        s.condExec(sampler_.live(), 4);
        const uint32_t size = s.size() + 4;
        loopIb_ = DeviceMemory(*device_, uint64_t(size) * 4, MemoryKind::Gtt, "persistent loop IB");
        s.indirectBuffer(loopIb_.gpu(), size, {.chain = true});
        loopHostCopy_.assign(s.dwords().begin(), s.dwords().end());
        std::memcpy(loopIb_.cpu<uint32_t>(), loopHostCopy_.data(), loopHostCopy_.size() * 4);
        return loopIb_;
    }

    static bool sameChain(const runtime::SamplerParams& a, const runtime::SamplerParams& b) {
        return a.temperature == b.temperature && a.topK == b.topK && a.topP == b.topP && a.minP == b.minP &&
               a.repeatPenalty == b.repeatPenalty && a.repeatLastN == b.repeatLastN && a.seed == b.seed;
    }

    // One submission starts the loop; a call that goes on from its last id and position with the
    // same chain only raises the budget (memory writes: no doorbell, no syscall) and polls the id
    // ring. A fault while polling names the token and the op of the plan the CP is in.
    std::vector<int32_t> generateLooped(int32_t firstToken, int32_t startPos, int32_t n, runtime::Sampler& sampler,
                                        const std::vector<int32_t>& history) {
        const runtime::SamplerParams& p = sampler.params();
        const uint64_t draws = sampler.draws();
        const bool continues = loop_.running && startPos == loop_.nextPosition && firstToken == loop_.lastId &&
                               sameChain(p, loop_.params) && (p.greedy() || draws == loop_.drawBase + uint64_t(loop_.taken));
        if (!continues) stopLoop();
        const auto start = Clock::now();
        const RecordedPlan& plan = planFor({1, false, false, true});
        n = std::min<int32_t>(n, int32_t(SamplerBlock::kRingCapacity));
        if (!loop_.running) {
            sampler_.write({.params = &p, .drawBase = draws, .history = history, .maxSteps = n,
                            .contextLength = limits_.contextLength(), .stopIds = kfd_.stopTokens, .loop = true});
            const DeviceMemory& ib = loopIb(plan);
            TokenSubmission s = submission(plan, startPos, fmt::format("the persistent loop from position {}", startPos));
            const int32_t one[] = {firstToken};
            s.tokens = one;
            s.ibAddress = ib.gpu();
            s.ibDwords = uint32_t(loopHostCopy_.size());
            s.ibName = "loop";
            submitter_->dumpIb("1tok-sample", plan.built.hostCopy);  // the IB the loop calls
            loop_ = {.running = true, .value = submit(s, plan, startPos, n, loopHostCopy_), .params = p, .drawBase = draws,
                     .nextPosition = startPos};  // where token 0 runs: a failure names positions from it
            stats_.decodeSubmissions += 1;
        } else {
            awaitPause(plan);
            sampler_.grant(n);
        }
        const int32_t target = loop_.taken + n;
        const auto polling = Clock::now();
        bool ended = false;
        auto lastProgress = Clock::now();
        int32_t seen = sampler_.steps();
        bool cancelled = false;
        while (sampler_.steps() < target) {
            if (!cancelled && cancelFlag_ && cancelFlag_->load(std::memory_order_acquire)) {
                sampler_.cancel();  // the GPU stops within the token it is on
                cancelled = true;
            }
            if (sampler_.endReason() != EndReason::Running || submitter_->completed() >= loop_.value) {
                ended = true;
                break;
            }
            if (const int32_t now = sampler_.steps(); now != seen) {
                seen = now;
                lastProgress = Clock::now();
            } else if (Clock::now() - lastProgress > std::chrono::milliseconds(20)) {
                checkLoop(plan, lastProgress);
            }
            std::this_thread::sleep_for(std::chrono::microseconds(50));  // polls memory: no call into the driver
        }
        const int32_t produced = std::min(sampler_.steps(), target) - loop_.taken;
        std::vector<int32_t> ids = sampler_.ids(loop_.taken, loop_.taken + produced);
        loop_.taken += produced;
        loop_.nextPosition = startPos + produced;
        if (hasState()) evaluateState().setEnd(loop_.nextPosition);
        loop_.lastId = ids.empty() ? firstToken : ids.back();
        if (ended || cancelled || sampler_.endReason() != EndReason::Running) finishLoop(plan);
        if (!p.greedy()) sampler.skipDraws(uint64_t(produced));
        stats_.decodeTokens += produced;
        stats_.decodeHostSeconds += std::chrono::duration<double>(polling - start).count();  // the poll is the wait
        if (runtime::EventLog* log = traceLog()) {  // host spans only: the loop's device work has no stamps yet
            log->beginStep(startPos, produced);
            log->addHostStep(nsOf(start), nsOf(polling), runtime::EventLog::hostNs(), runtime::EventLog::hostNs());
        }
        return ids;
    }

    // No progress for a while: a faulted queue is reported with the token and the op the CP is
    // in; past the wait bound the loop is called hung the same way.
    void checkLoop(const RecordedPlan& plan, Clock::time_point lastProgress) {
        const std::optional<QueueState> state = submitter_->queueState();
        const bool timedOut = Clock::now() - lastProgress > std::chrono::milliseconds(kfd_.timeoutMs);
        if (!(state && state->fault) && !timedOut) return;
        const int32_t token = sampler_.steps();
        loop_.running = false;
        failed(fmt::format("{} tier: --loop: token {} (position {}){} {}: {}{}", kfd_.tierName, token,
                           loop_.nextPosition + token - loop_.taken, state ? layerAt(plan, *state) : std::string(),
                           state && state->fault ? "faulted" : fmt::format("made no progress for {} ms", kfd_.timeoutMs),
                           submitter_->describeState(), state ? plan.built.describeCpPosition(*state) : std::string()),
               &plan, fmt::format("token {} (position {})", token, loop_.nextPosition + token - loop_.taken));
    }

    runtime::EventLog* traceLog() const { return instrument_ ? instrument_->log() : nullptr; }

    // ", layer 3" for the CP inside an op of a layer of the sampling plan, else "".
    std::string layerAt(const RecordedPlan& plan, const QueueState& state) const {
        const std::optional<uint32_t> dword = ibDword(plan, state);
        const auto marks = opMarks_.find(plan.shape);
        if (!dword || marks == opMarks_.end()) return "";
        const int32_t layer = marks->second.layerAt(*dword);
        return layer >= 0 ? fmt::format(", layer {}", layer) : "";
    }

    // The dword of `plan`'s IB the CP of `state` is at, when it is inside that IB.
    static std::optional<uint32_t> ibDword(const RecordedPlan& plan, const QueueState& state) {
        if (!state.insideIb || !plan.built.ib) return std::nullopt;
        const uint64_t address = state.insideIb->packetAddress, base = plan.built.ib.gpu();
        if (address < base || address >= base + uint64_t(plan.built.ibDwords) * 4) return std::nullopt;
        return uint32_t((address - base) / 4);
    }

    // The loop paused at its budget: the kernel's go = 0 is its last write for the token.
    void awaitPause(const RecordedPlan& plan) {
        const auto since = Clock::now();
        while (!sampler_.paused() && sampler_.endReason() == EndReason::Running) {
            if (Clock::now() - since > std::chrono::milliseconds(20)) checkLoop(plan, since);
            std::this_thread::sleep_for(std::chrono::microseconds(50));  // polls memory: no call into the driver
        }
    }

    void finishLoop(const RecordedPlan& plan) {
        waitFor(loop_.value, plan);
        lastEnd_ = sampler_.endReason();
        loop_.running = false;
    }

    // Cancels a running loop (it stops within the token it is on) and waits for its fence.
    void stopLoop() {
        if (!loop_.running) return;
        sampler_.cancel();
        loop_.running = false;
        try {
            submitter_->wait(loop_.value);
        } catch (const TierError& e) {
            failed(e.what(), nullptr, "the persistent loop");
        }
    }

    // Hybrid models: evaluate()'s one sequence is slot 0's copy of the recurrent state; a step at
    // position 0 starts it again (the kernels clear the state, kernels/cl/deltanet.cl), any other
    // start but the state's end throws. `fed`: the tokens it runs.
    bool hasState() const { return memory_.recurrentStateBytes() > 0; }
    runtime::RecurrentStatePosition& evaluateState() { return recurrentSlots_.slot(0); }
    void syncRecurrentState(int32_t startPos, int32_t fed) {
        if (hasState()) evaluateState().advance(kfd_.tierName, startPos, fed);
    }

    // A copy of one slot's recurrent state in VRAM, taken at `position` (-1: none), with the
    // one-dispatch plans that save and restore it (recorded on first use).
    struct StateSnapshot {
        DeviceMemory copy;
        std::optional<PlanBuilder::Finished> save, restore;
        int32_t position = -1;
    };
    // snapshots_: one a slot (saveSlotSnapshot), then evaluate()'s (saveStateSnapshot).
    StateSnapshot& snapshotOf(int32_t slot) {
        if (snapshots_.empty()) snapshots_.resize(size_t(sequences_) + 1);
        return snapshots_[size_t(slot)];
    }
    bool saveStateSnapshot() override {
        if (!hasState()) return false;
        copyState(snapshotOf(sequences_), 0, true);
        return true;
    }
    void restoreStateSnapshot() override {
        if (!hasState() || snapshotOf(sequences_).position < 0) return runtime::Tier::restoreStateSnapshot();
        copyState(snapshotOf(sequences_), 0, false);
    }
    bool saveSlotSnapshot(int32_t slot) override {
        if (!hasState() || slot < 0 || slot >= sequences_) return false;
        copyState(snapshotOf(slot), slot, true);
        return true;
    }
    void restoreSlotSnapshot(int32_t slot) override {
        if (!hasState() || slot < 0 || slot >= sequences_ || snapshotOf(slot).position < 0)
            return runtime::Tier::restoreSlotSnapshot(slot);
        copyState(snapshotOf(slot), slot, false);
    }

    // Slot `slot`'s recurrent state to the snapshot (save) or back, by copy_words on the device:
    // nothing is read back. The snapshot keeps the slot's position and puts it back.
    void copyState(StateSnapshot& snap, int32_t slot, bool save) {
        stopLoop();
        const uint64_t bytes = memory_.recurrentStateBytes();
        if (!snap.copy) snap.copy = DeviceMemory(*device_, bytes, MemoryKind::Vram, "recurrent state snapshot");
        std::optional<PlanBuilder::Finished>& plan = save ? snap.save : snap.restore;
        if (!plan) {
            PlanBuilder b(*device_, kernels_, 1);
            const uint64_t arena = memory_.recurrentState(slot), copy = snap.copy.gpu();
            recordCopyWords(b, save ? arena : copy, save ? copy : arena, bytes / 4);
            plan = b.finish(save ? "state snapshot" : "state restore");
        }
        runtime::RecurrentStatePosition& at = recurrentSlots_.slot(slot);
        TokenSubmission s;
        s.ibAddress = plan->ib.gpu();
        s.ibDwords = plan->ibDwords;
        s.ibName = save ? "state-save" : "state-restore";
        s.what = fmt::format("the recurrent state's {} of sequence slot {} at position {}", save ? "snapshot" : "restore", slot,
                             save ? at.position() : snap.position);
        submitter_->wait(submitter_->submit(s, plan->hostCopy));
        if (save)
            snap.position = at.position();
        else
            at.setEnd(snap.position);
    }

    // The pacer of sampled submissions for this submitter's route (made anew when a recovered
    // submitter's kernel ring reports another job timeout); it keeps its rate across calls.
    SubmissionPacer& pacerFor(const Submitter& submitter) {
        const uint32_t timeout = submitter.jobTimeoutMs();
        if (!pacer_ || pacer_->jobTimeoutMs() != timeout) pacer_.emplace(std::max(16, kfd_.tokensPerSubmission), timeout);
        return *pacer_;
    }

    // Waits for `value`; when the wait fails, the error also names the op of `plan` the CP is in,
    // and the tier recovers (failed()).
    void waitFor(uint64_t value, const RecordedPlan& plan) {
        try {
            submitter_->wait(value);
        } catch (const TierError& e) {
            const std::optional<QueueState> state = submitter_->queueState();
            // A bad fence is written after the plan: where the CP is now says nothing about it.
            const bool badFence = std::string_view(e.what()).find("bad fence") != std::string_view::npos;
            failed(e.what() + (state && !badFence ? plan.built.describeCpPosition(*state) : std::string()), &plan, tokenAt(plan, value));
        }
    }

    // Submits `s` (running `plan` for positions first..first + count - 1) after arming the
    // injected fault when it aims there; a submission that fails (the ring stays full behind a
    // hung queue, the kernel refuses a reset context) goes through failed() like a wait. On the
    // CS route a refusal is the echo of an earlier job's failure when the kernel has already
    // marked the context guilty (every later CS ioctl fails): the jobs still in flight are
    // waited for first, in order, so the first that failed names its own token and op
    // (waitFor), whether or not the host submitted again before the GPU got there.
    uint64_t submit(const TokenSubmission& s, const RecordedPlan& plan, int32_t first, int32_t count,
                    std::span<const uint32_t> hostCopy = {}) {
        armFault(plan, first, count);
        const uint64_t inFlightEnd = submitter_->nextValue();
        try {
            return submitter_->submit(s, hostCopy.empty() ? std::span<const uint32_t>(plan.built.hostCopy) : hostCopy);
        } catch (const TierError& e) {
            const std::string refused = e.what();
            if (submitter_->usesKernelRing())
                for (uint64_t v = submitter_->completed() + 1; v < inFlightEnd; ++v) waitFor(v, plan);
            failed(refused, &plan, s.what);
        }
    }

    // The token submission `value` was on: its own words ("greedy token 3 at position 7"); for a
    // sampling plan also the token of the generation the GPU's sampler had reached.
    std::string tokenAt(const RecordedPlan& plan, uint64_t value) const {
        if (!plan.shape.sample) return submitter_->what(value);
        return fmt::format("sampled token {} ({})", sampler_.steps(), submitter_->what(value));
    }

    // Arms kfd_.injectFault on the device when it aims at a token of this submission: the op's
    // first dispatch in `plan`, while the token state says the aimed position (a prefill step's
    // state holds its first position), or the submission's fence. Once.
    void armFault(const RecordedPlan& plan, int32_t first, int32_t count) {
        if (!kfd_.injectFault || faultArmed_) return;
        const auto marks = opMarks_.find(plan.shape);
        const std::optional<InjectedFault> fault =
            aimFault(*kfd_.injectFault, plan, marks == opMarks_.end() ? nullptr : &marks->second, first, count,
                     {memory_.state(), submitter_->fenceAddress(), submitter_->nextValue()}, kfd_.tierName);
        if (!fault) return;
        if (Status armed = device_->injectFault(*fault); !armed)
            throw TierError(fmt::format("{} tier: ZINC_SIM_FAULT {}: {}", kfd_.tierName, kfd_.injectFault->describe(), armed.error().describe()));
        faultArmed_ = true;
    }

    // A submission or a wait failed: a GPU fault, a hang, a bad fence, or a reset the kernel
    // reports. Throws a TierError naming the token and the layer and op the CP was in (where the
    // door shows it), after recovering: the queue (on the CS route the kernel ring's context) is
    // destroyed and made anew, and after a fault the plans are recorded anew (new IBs and kernarg
    // arenas). Weights, the KV cache, the token state and the sampler block stay where they are:
    // nothing is uploaded again, and the next request runs as on a fresh tier.
    [[noreturn]] void failed(const std::string& error, const RecordedPlan* plan, const std::string& token) {
        std::optional<QueueState> state;
        try {
            if (submitter_) state = submitter_->queueState();
        } catch (const std::exception&) {
        }
        const GpuFailure failure = classifyGpuFailure(error, state);
        std::string where;
        if (plan && state && failure.cpPositionMeans)
            if (const std::optional<uint32_t> dword = ibDword(*plan, *state))
                if (const auto marks = opMarks_.find(plan->shape); marks != opMarks_.end()) where = marks->second.describe(*dword);
        if (where.empty() && failure.cpPositionMeans) where = "op unknown (this door does not show where the CP was)";
        std::string message = fmt::format("{} tier: {}{}{}: {}", kfd_.tierName, failure.kind, token.empty() ? "" : " at " + token,
                                          where.empty() ? "" : ", " + where, error);
        // A reset that lost VRAM took the weights with it: this tier cannot go on (uploading them
        // again is what a new process does).
        if (failure.vramLost) {
            vramLost_ = fmt::format("{} tier: a GPU reset lost VRAM (weights, KV cache): restart the process", kfd_.tierName);
            throw TierError(message + "; " + vramLost_);
        }
        const bool replan = failure.replan;
        loop_.running = false;
        if (submitter_) submitter_->abandon();
        try {
            submitter_.reset();  // destroys the queue or closes the context: the CP stops
            submitter_ = makeSubmitter();
            if (replan) {
                plans_.clear();
                opMarks_.clear();
                loopIb_ = DeviceMemory();
                loopHostCopy_.clear();
            }
            message += fmt::format("; recovered: {} made anew{}, weights and KV cache kept", submitter_->usesKernelRing() ? "kernel-ring context" : "queue",
                                   replan ? ", plans recorded anew" : "");
        } catch (const std::exception& e) {
            message += fmt::format("; recovering failed: {}", e.what());
        }
        throw TierError(message);
    }

    TokenSubmission submission(const RecordedPlan& plan, int32_t position, std::string what) const {
        TokenSubmission s;
        s.ibAddress = plan.built.ib.gpu();
        s.ibDwords = plan.built.ibDwords;
        s.ibName = fmt::format("{}tok{}{}{}{}", plan.shape.nTokens, plan.shape.allRows ? "-all" : "", plan.shape.argmax ? "-argmax" : "",
                               plan.shape.sample ? "-sample" : "",
                               plan.shape.sequenceRows() ? fmt::format("-rows{}", plan.shape.wantedRows) : std::string());
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
        if (const uint64_t ticks = submitter_->gpuTicks(value)) {
            stats_.decodeGpuSeconds += double(ticks) / kGpuClockHz;
            stats_.gpuTimedTokens += 1;
        }
    }

    PlanInstrument& instrument() {
        if (!instrument_) instrument_ = std::make_unique<PlanInstrument>(*device_, kernels_, graph_, memory_, kfd_.afterOp);
        return *instrument_;
    }

    // Every plan also keeps, per op, the IB dwords of its packets, its layer and label, so a
    // fault or hang names the op the CP was in (and a test aims an injected fault at one).
    const RecordedPlan& planFor(const PlanShape& shape) {
        return plans_.get(shape, [&] {
            // A test hook injects packets after graph op i: op i must then have dispatches of its own.
            const bool fuseOps = !kfd_.afterOp;
            OpMarks& marks = opMarks_[shape] = OpMarks();
            const AfterOp mark = [&](PlanBuilder& b, size_t index, const graph::Op& op) {
                if (kfd_.afterOp) kfd_.afterOp(b, index, op);
                marks.add(b.stream().size(), op);
            };
            return recordGraph(*device_, kernels_, graph_, memory_, shape, mark, 1, &sampler_, fuseOps);
        });
    }

    // A queue to submit to: made anew here when recovering from a failure could not make one.
    void ready() {
        if (!vramLost_.empty()) throw TierError(vramLost_);
        if (!submitter_) submitter_ = makeSubmitter();
    }

    std::unique_ptr<Submitter> makeSubmitter() {
        return std::make_unique<Submitter>(*device_, kernels_.gfx(),
                                           SubmitterOptions{.timeoutMs = kfd_.timeoutMs, .dumpDir = kfd_.dumpPm4Dir, .route = kfd_.route});
    }

    const graph::Graph& graph_;
    const model::ModelConfig& config_;
    Pm4TierOptions kfd_;
    runtime::StepLimits limits_;
    int32_t sequences_;  // KV slots (TierOptions::sequences)
    std::shared_ptr<Device> device_;
    KernelTable kernels_;
    TierMemory memory_;
    // A dropped plan takes its op marks along (rows plans come in many shapes: serve's steps).
    runtime::PlanCache<PlanShape, RecordedPlan> plans_{kMaxPlans, [this](RecordedPlan& plan) { opMarks_.erase(plan.shape); }};
    std::unique_ptr<PlanInstrument> instrument_;  // tracing / capture; created when first asked for
    SamplerBlock sampler_;
    const std::atomic<bool>* cancelFlag_ = nullptr;
    EndReason lastEnd_ = EndReason::Running;
    DeviceMemory loopIb_;
    std::map<PlanShape, OpMarks> opMarks_;  // per recorded plan: its ops by IB dword
    bool faultArmed_ = false;               // the injected fault (kfd_.injectFault) was handed to the device
    std::string vramLost_;                  // set when a reset lost VRAM: every later call fails with it
    std::vector<uint32_t> loopHostCopy_;
    runtime::RecurrentSlotPositions recurrentSlots_{sequences_};  // hybrid models: where each slot's recurrent state stands
    std::vector<StateSnapshot> snapshots_;
    struct Loop {
        bool running = false;
        uint64_t value = 0;        // the loop submission's fence value
        runtime::SamplerParams params;
        uint64_t drawBase = 0;
        int32_t taken = 0;         // ids handed to the host
        int32_t nextPosition = 0;  // where the host's next call goes on
        int32_t lastId = 0;
    } loop_;
    std::unique_ptr<Submitter> submitter_;  // after the plans: destroyed first, waiting for what is in flight
    bool timestamps_;
    runtime::TierStats stats_;
    std::optional<SubmissionPacer> pacer_;  // sampled submissions' size (pacerFor)
};

}  // namespace

std::unique_ptr<runtime::Tier> makePm4Tier(const graph::Graph& graph, const runtime::TierOptions& options,
                                           std::shared_ptr<Device> device, const Pm4TierOptions& kfdOptions) {
    if (!device) throw TierError("kfd tier: no device");
    return std::make_unique<Pm4Tier>(graph, options, std::move(device), kfdOptions);
}

}  // namespace zinc::kfd
