#pragma once
// One generation request on its way through the server: what to generate (filled by the HTTP
// thread), and a channel back (filled by the engine thread): text as it is released, then the
// outcome. Either side may cancel; the engine checks between tokens and prefill batches.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <span>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/sampler.h"

namespace zinc::serve {

// Restricts which tokens may come next (structured output's grammar). Used by the engine
// thread only.
class TokenConstraint {
public:
    virtual ~TokenConstraint() = default;
    // Sets the logits of the tokens that may not come next to -infinity; remaining: tokens that
    // may still be generated, this one included. Returns how many are allowed (0: stop).
    virtual size_t mask(std::span<float> logits, int32_t remaining) = 0;
    virtual void accept(int32_t id) = 0;
};

struct JobInput {
    std::vector<int32_t> prompt;  // fits the context (checked before queueing)
    int32_t maxTokens = 0;        // > 0
    std::vector<std::string> stop;
    runtime::SamplerParams sampling;
    std::vector<std::pair<int32_t, float>> logitBias;
    std::shared_ptr<TokenConstraint> constraint;  // none: any token
};

enum class FinishReason { Stop, Length, Cancelled, Error };

// OpenAI's finish_reason ("stop", "length"); Cancelled and Error never reach a client as such.
const char* finishReasonName(FinishReason reason);

struct JobResult {
    FinishReason reason = FinishReason::Stop;
    int32_t promptTokens = 0;
    int32_t cachedTokens = 0;      // prompt tokens whose K/V were reused from the last request
    int32_t completionTokens = 0;  // tokens generated (an end-of-generation token not counted)
    std::string error;             // FinishReason::Error
};

class Job {
public:
    explicit Job(JobInput input) : input_(std::move(input)) {}

    const JobInput& input() const { return input_; }

    void cancel() { cancelled_ = true; }
    bool cancelled() const { return cancelled_; }
    const std::atomic<bool>& cancelFlag() const { return cancelled_; }

    // Engine side.
    void pushText(std::string_view text);
    void finish(JobResult result);

    // HTTP side: waits up to `timeout` for text or the end. Returns the text released since the
    // last call; `finished` once the result is final (all text has then been returned).
    struct Update {
        std::string text;
        bool finished = false;
    };
    Update waitForUpdate(std::chrono::milliseconds timeout);
    // Blocks until finished; the result.
    JobResult waitForResult();
    JobResult result() const;  // valid once an Update said finished

private:
    const JobInput input_;
    std::atomic<bool> cancelled_{false};
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::string pending_;
    bool finished_ = false;
    JobResult result_;
};

}  // namespace zinc::serve
