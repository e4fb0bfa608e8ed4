#include "tools/serve/engine_worker.h"

#include <algorithm>
#include <vector>

#include "tools/serve/stop_matcher.h"

namespace zinc::serve {
namespace {

constexpr int32_t kDeviceChunk = 16;  // tokens sampled on the device per call (as tools/generate.cpp)

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
        runJob(**job);
        std::lock_guard lock(currentMutex_);
        current_.reset();
    }
}

void EngineWorker::runJob(Job& job) {
    JobResult result;
    result.promptTokens = static_cast<int32_t>(job.input().prompt.size());
    try {
        if (job.cancelled()) throw PrefillCancelled{};
        result.cachedTokens = session_.feedReusingPrefix(job.input().prompt, [&](size_t, size_t) {
            if (job.cancelled()) throw PrefillCancelled{};
        });
        generate(job, result);
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

// As tools::generate, plus logit bias, stop strings and cancellation.
void EngineWorker::generate(Job& job, JobResult& result) {
    const JobInput& in = job.input();
    const model::Tokenizer& tokenizer = model_.tokenizer();
    runtime::Sampler sampler(in.sampling);
    TextStream text(tokenizer, in.stop, /*atTextStart=*/false);
    std::vector<float> biased;
    result.reason = FinishReason::Length;
    // Without a logit bias or a grammar, a tier that samples on the device (kfd/umq) gets chunks of
    // tokens as chat does (tools/generate.cpp): no logits read back after the first token; the
    // tokens of a chunk past an end are fed but not returned.
    const bool onDevice = in.logitBias.empty() && !in.constraint && session_.tier().samplesOnDevice(in.sampling);
    // The client leaving stops a device loop within its token (kfd/umq --loop).
    struct CancelScope {
        runtime::Tier& tier;
        ~CancelScope() { tier.setCancelFlag(nullptr); }
    } cancelScope{session_.tier()};
    session_.tier().setCancelFlag(&job.cancelFlag());
    std::vector<int32_t> ahead;
    size_t next = 0;
    for (int32_t i = 0; i < in.maxTokens; ++i) {
        if (job.cancelled()) {
            result.reason = FinishReason::Cancelled;
            return;
        }
        int32_t id;
        if (onDevice && next < ahead.size()) {
            id = ahead[next++];
        } else {
            std::span<const float> logits = session_.logits();
            if (!in.logitBias.empty() || in.constraint) {
                biased.assign(logits.begin(), logits.end());
                for (const auto& [bid, bias] : in.logitBias)
                    if (static_cast<size_t>(bid) < biased.size()) biased[static_cast<size_t>(bid)] += bias;
                // Tokens this one included that may still come: max_tokens, or the context.
                const int32_t remaining = std::min(in.maxTokens - i, static_cast<int32_t>(session_.remaining()) + 1);
                if (in.constraint && in.constraint->mask(biased, remaining) == 0) break;  // Length
                logits = biased;
            }
            id = sampler.sample(logits, session_.history());
        }
        if (in.constraint) in.constraint->accept(id);
        if (tokenizer.isEndOfGeneration(id)) {
            result.reason = FinishReason::Stop;
            break;
        }
        ++result.completionTokens;
        job.pushText(text.push(id));
        if (text.stopped()) {
            result.reason = FinishReason::Stop;
            return;
        }
        if (i + 1 == in.maxTokens) break;                      // Length
        if (onDevice && next < ahead.size()) continue;          // fed already by the chunk that sampled it
        if (session_.remaining() < 1) break;                    // Length
        if (onDevice) {
            ahead = session_.stepSampled(id, std::min({kDeviceChunk, in.maxTokens - 1 - i, session_.remaining()}), sampler);
            next = 0;
        } else {
            session_.step(id);
        }
    }
    job.pushText(text.finish());
}

}  // namespace zinc::serve
