#pragma once
// Continuous batching (`serve --parallel N`): one engine thread runs up to N requests together,
// each in its own KV slot with its own sampler, in steps of Tier::evaluateRows so that one
// weight read serves them all. A request joins (from the bounded FIFO) or leaves between steps;
// a newcomer's prompt goes in chunks of at most prefillChunk tokens a step beside the others'
// decode rows (runtime/sequence_slots.h). A cancelled request leaves at the next step. The
// wanted rows' tokens are sampled on several threads (a 152k-entry vocabulary's sampling chain
// costs about as much as a GPU tier's batched step: serial, it would halve the gain).
#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "model/model.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/sequence_slots.h"
#include "runtime/tier.h"
#include "tools/serve/bounded_fifo.h"
#include "tools/serve/engine.h"
#include "tools/serve/job_generation.h"

namespace zinc::serve {

class BatchEngine final : public Engine {
public:
    // The tier must hold at least `parallel` sequence slots (TierOptions::sequences).
    BatchEngine(const model::Model& model, runtime::Tier& tier, int32_t parallel, int32_t prefillChunk, size_t queueCapacity);
    ~BatchEngine() override;
    BatchEngine(const BatchEngine&) = delete;
    BatchEngine& operator=(const BatchEngine&) = delete;

    bool submit(std::shared_ptr<Job> job) override;
    void stop() override;

    int32_t contextLength() const override { return tier_.contextLength(); }
    size_t queueCapacity() const override { return queue_.capacity(); }
    size_t waiting() const override { return queue_.size(); }
    size_t running() const override { return busy_; }
    Counts counts() const override { return {completed_, cancelled_, failed_}; }

private:
    struct Running {
        std::shared_ptr<Job> job;
        std::optional<JobGeneration> generation;
    };
    void run();
    bool admit(std::shared_ptr<Job> job);
    void step();
    void finish(int32_t slot, FinishReason reason, std::string error = {});

    const model::Model& model_;
    runtime::Tier& tier_;
    const int32_t prefillChunk_;
    runtime::SequenceSlots slots_;
    std::vector<Running> running_;  // by slot
    std::vector<float> logits_;
    std::vector<int32_t> ids_;  // a step whose wanted rows' ids the tier picks (argmax, or each job's chain)
    std::vector<std::vector<int32_t>> histories_;  // those rows' histories, for their repetition penalty
    std::vector<runtime::RowSampler> rowSamplers_;
    cpu::ThreadPool samplers_;
    struct Pick {  // one wanted row's outcome, from the sampling threads
        std::optional<int32_t> next;
        std::string error;
    };
    std::vector<Pick> picks_;
    BoundedFifo<std::shared_ptr<Job>> queue_;
    std::atomic<bool> stopping_{false};
    std::atomic<size_t> busy_{0};  // slots busy, for /health
    std::atomic<uint64_t> completed_{0}, cancelled_{0}, failed_{0};
    std::thread thread_;
};

}  // namespace zinc::serve
