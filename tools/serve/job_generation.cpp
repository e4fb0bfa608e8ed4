#include "tools/serve/job_generation.h"

#include <algorithm>

namespace zinc::serve {

JobGeneration::JobGeneration(Job& job, const model::Tokenizer& tokenizer)
    : job_(job), tokenizer_(tokenizer), sampler_(job.input().sampling), text_(tokenizer, job.input().stop, /*atTextStart=*/false) {
    result_.promptTokens = static_cast<int32_t>(job.input().prompt.size());
    result_.reason = FinishReason::Length;
}

std::optional<int32_t> JobGeneration::finish(FinishReason reason) {
    result_.reason = reason;
    job_.pushText(text_.finish());
    return std::nullopt;
}

std::optional<int32_t> JobGeneration::next(std::span<const float> logits, std::span<const int32_t> history, int32_t room) {
    const JobInput& in = job_.input();
    if (!in.logitBias.empty() || in.constraint) {
        biased_.assign(logits.begin(), logits.end());
        for (const auto& [id, bias] : in.logitBias)
            if (static_cast<size_t>(id) < biased_.size()) biased_[static_cast<size_t>(id)] += bias;
        // Tokens this one included that may still come: max_tokens, or the context.
        const int32_t remaining = std::min(in.maxTokens - picked_, room + 1);
        if (in.constraint && in.constraint->mask(biased_, remaining) == 0) return finish(FinishReason::Length);
        logits = biased_;
    }
    return accept(sampler_.sample(logits, history), room);
}

bool JobGeneration::picksArgmax() const {
    const runtime::SamplerParams& p = sampler_.params();
    return p.greedy() && p.repeatPenalty == 1.0f && samplesPlainly();
}

bool JobGeneration::samplesPlainly() const {
    const JobInput& in = job_.input();
    return in.logitBias.empty() && !in.constraint;
}

std::optional<int32_t> JobGeneration::accept(int32_t id, int32_t room) {
    const JobInput& in = job_.input();
    ++picked_;
    if (in.constraint) in.constraint->accept(id);
    if (tokenizer_.isEndOfGeneration(id)) return finish(FinishReason::Stop);
    ++result_.completionTokens;
    job_.pushText(text_.push(id));
    if (text_.stopped()) {
        result_.reason = FinishReason::Stop;
        return std::nullopt;
    }
    if (picked_ == in.maxTokens || room < 1) return finish(FinishReason::Length);
    return id;
}

}  // namespace zinc::serve
