#include "tools/serve/engine_worker.h"

#include <algorithm>
#include <vector>

#include "tools/serve/job_generation.h"

namespace zinc::serve {
namespace {

// Thrown from the prefill progress callback to abandon a cancelled job's prompt.
struct PrefillCancelled {};

}  // namespace

EngineWorker::EngineWorker(const model::Model& model, runtime::Tier& tier, size_t queueCapacity)
    : model_(model), session_(model.config(), tier), queue_(queueCapacity), thread_([this] { run(); }) {}

EngineWorker::~EngineWorker() { stop(); }

bool EngineWorker::submit(std::shared_ptr<Job> job) { return queue_.tryPush(std::move(job)); }

void EngineWorker::stop() {
    stopping_ = true;
    queue_.close();
    {
        std::lock_guard lock(currentMutex_);
        if (current_) current_->cancel();
    }
    if (thread_.joinable()) thread_.join();
}

void EngineWorker::run() {
    while (auto job = queue_.pop()) {
        if (stopping_) (*job)->cancel();
        {
            std::lock_guard lock(currentMutex_);
            current_ = *job;
        }
        running_ = 1;
        runJob(**job);
        running_ = 0;
        std::lock_guard lock(currentMutex_);
        current_.reset();
    }
}

void EngineWorker::runJob(Job& job) {
    JobGeneration generation(job, model_.tokenizer());
    JobResult& result = generation.result();
    try {
        if (job.cancelled()) throw PrefillCancelled{};
        result.cachedTokens = session_.feedReusingPrefix(job.input().prompt, [&](size_t, size_t) {
            if (job.cancelled()) throw PrefillCancelled{};
        });
        generate(generation);
    } catch (const PrefillCancelled&) {
        result.reason = FinishReason::Cancelled;
    } catch (const std::exception& e) {
        result.reason = FinishReason::Error;
        result.error = e.what();
    }
    auto& count = result.reason == FinishReason::Cancelled ? cancelled_
                  : result.reason == FinishReason::Error   ? failed_
                                                           : completed_;
    ++count;
    job.finish(std::move(result));
}

// Sample, feed back, until the job is done or cancelled.
void EngineWorker::generate(JobGeneration& generation) {
    while (true) {
        if (generation.job().cancelled()) {
            generation.result().reason = FinishReason::Cancelled;
            return;
        }
        const auto id = generation.next(session_.logits(), session_.history(), session_.remaining());
        if (!id) return;
        session_.step(*id);
    }
}

}  // namespace zinc::serve
