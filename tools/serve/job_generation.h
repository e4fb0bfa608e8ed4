#pragma once
// One job's token-by-token generation, whatever feeds it logits: logit bias and the grammar
// mask, its own seeded sampler, end-of-generation, max_tokens, the context's room, stop strings,
// and the text streamed back to the job. The one-at-a-time engine (engine_worker) and the
// batched one (batch_engine) both drive it, so a request's tokens do not depend on which ran it.
#include <optional>
#include <span>
#include <vector>

#include "model/tokenizer/tokenizer.h"
#include "runtime/sampler.h"
#include "tools/serve/job.h"
#include "tools/serve/stop_matcher.h"

namespace zinc::serve {

class JobGeneration {
public:
    JobGeneration(Job& job, const model::Tokenizer& tokenizer);

    // The next token after `history` (every token fed so far) from its logits; `room`: context
    // positions still free. Returns the token to feed next, or nullopt when the job is done
    // (result().reason says why; the released text has been pushed to the job).
    std::optional<int32_t> next(std::span<const float> logits, std::span<const int32_t> history, int32_t room);
    // The same for a token drawn elsewhere (the device's sampler, with sampler()).
    std::optional<int32_t> accept(int32_t id, int32_t room);
    // Whether next() takes the logits' argmax (runtime::argmax) whatever the history: greedy,
    // no repetition penalty, no logit bias, no grammar. Such a job's token may come from the
    // tier's own argmax (Tier::evaluateRowsGreedy) through accept().
    bool picksArgmax() const;
    // Whether next() is sampler().sample(logits, history) alone: no logit bias, no grammar. Such
    // a job's token may come from a tier that runs the sampler's chain itself
    // (Tier::evaluateRowsSampled) through accept().
    bool samplesPlainly() const;

    runtime::Sampler& sampler() { return sampler_; }
    int32_t picked() const { return picked_; }

    Job& job() { return job_; }
    JobResult& result() { return result_; }

private:
    std::optional<int32_t> finish(FinishReason reason);  // the job is done: release the held text

    Job& job_;
    const model::Tokenizer& tokenizer_;
    runtime::Sampler sampler_;
    TextStream text_;
    std::vector<float> biased_;
    JobResult result_;
    int32_t picked_ = 0;  // tokens sampled so far
};

}  // namespace zinc::serve
