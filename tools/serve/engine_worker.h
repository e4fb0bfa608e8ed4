#pragma once
// The one thread that owns the model's Session: takes jobs from a bounded FIFO one at a time,
// feeds each prompt reusing the longest prefix still in the KV cache (the previous turn of a
// conversation), samples, and streams the released text back to the job. A cancelled job stops
// at the next token or prefill batch, so the next one is not held up.
#include <memory>
#include <mutex>
#include <thread>

#include "model/model.h"
#include "runtime/session.h"
#include "runtime/tier.h"
#include "tools/serve/bounded_fifo.h"
#include "tools/serve/engine.h"
#include "tools/serve/job.h"

namespace zinc::serve {

class JobGeneration;

class EngineWorker final : public Engine {
public:
    // queueCapacity: jobs that may wait while one runs.
    EngineWorker(const model::Model& model, runtime::Tier& tier, size_t queueCapacity);
    ~EngineWorker() override;
    EngineWorker(const EngineWorker&) = delete;
    EngineWorker& operator=(const EngineWorker&) = delete;

    bool submit(std::shared_ptr<Job> job) override;
    void stop() override;

    int32_t contextLength() const override { return session_.contextLength(); }
    size_t queueCapacity() const override { return queue_.capacity(); }
    size_t waiting() const override { return queue_.size(); }
    size_t running() const override { return running_; }
    Counts counts() const override { return {completed_, cancelled_, failed_}; }

private:
    void run();
    void runJob(Job& job);
    void generate(JobGeneration& generation);

    const model::Model& model_;
    runtime::Session session_;
    BoundedFifo<std::shared_ptr<Job>> queue_;
    std::mutex currentMutex_;
    std::shared_ptr<Job> current_;
    std::atomic<bool> stopping_{false};
    std::atomic<size_t> running_{0};
    std::atomic<uint64_t> completed_{0}, cancelled_{0}, failed_{0};
    std::thread thread_;
};

}  // namespace zinc::serve
