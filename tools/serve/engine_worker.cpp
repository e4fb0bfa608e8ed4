#include "tools/serve/engine_worker.h"

#include <algorithm>
#include <vector>

#include "tools/serve/job_generation.h"

namespace zinc::serve {
namespace {

// Thrown from the prefill progress callback to abandon a cancelled job's prompt.
struct PrefillCancelled {};

constexpr int32_t kDeviceChunk = 16;  // tokens sampled on the device per call (as tools/generate.cpp)

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
    } catch (const runtime::ContextFull& e) {
        result.reason = FinishReason::Error;
        result.error = e.what();
    } catch (const std::exception& e) {
        // A tier failure (on the GPU tiers: a fault, a hang, a bad fence; the tier has recovered
        // its queue by now): the cache may hold part of the failed step, so the next request
        // starts from an empty history, as in a fresh process.
        result.reason = FinishReason::Error;
        result.error = e.what();
        session_.reset();
    }
    auto& count = result.reason == FinishReason::Cancelled ? cancelled_
                  : result.reason == FinishReason::Error   ? failed_
                                                           : completed_;
    ++count;
    job.finish(std::move(result));
}

// Sample, feed back, until the job is done or cancelled. Without a logit bias or a grammar, a
// tier that samples on the device (kfd/umq) gets chunks of tokens as chat does
// (tools/generate.cpp): no logits read back after the first token; the tokens of a chunk past an
// end are fed but not returned.
void EngineWorker::generate(JobGeneration& generation) {
    Job& job = generation.job();
    const JobInput& in = job.input();
    const bool onDevice = in.logitBias.empty() && !in.constraint && session_.tier().samplesOnDevice(in.sampling);
    // The client leaving stops a device loop within its token (kfd/umq --loop).
    struct CancelScope {
        runtime::Tier& tier;
        ~CancelScope() { tier.setCancelFlag(nullptr); }
    } cancelScope{session_.tier()};
    session_.tier().setCancelFlag(&job.cancelFlag());
    std::vector<int32_t> ahead;  // sampled and fed by the device, not yet handed to the job
    size_t next = 0;
    while (true) {
        if (job.cancelled()) {
            generation.result().reason = FinishReason::Cancelled;
            return;
        }
        const bool fromChunk = onDevice && next < ahead.size();
        std::optional<int32_t> id;
        if (fromChunk) {
            const int32_t id0 = ahead[next++];
            // The room after this token: the chunk's later tokens are fed already.
            id = generation.accept(id0, session_.remaining() + static_cast<int32_t>(ahead.size() - next));
        } else {
            id = generation.next(session_.logits(), session_.history(), session_.remaining());
        }
        if (!id) return;
        if (onDevice && next < ahead.size()) continue;  // fed already by the chunk that sampled it
        if (onDevice) {
            const int32_t more = std::min({kDeviceChunk, in.maxTokens - generation.picked(), session_.remaining()});
            ahead = session_.stepSampled(*id, more, generation.sampler());
            next = 0;
        } else {
            session_.step(*id);
        }
    }
}

}  // namespace zinc::serve
