#include "tools/generate.h"

namespace zinc::tools {

GenerateResult generate(runtime::Session& session, runtime::Sampler& sampler, const model::Tokenizer* tokenizer,
                        int32_t maxTokens, const std::function<void(std::string_view)>& onText) {
    GenerateResult result;
    std::optional<model::StreamingDecoder> decoder;
    if (tokenizer) decoder.emplace(*tokenizer, true, false);
    for (int32_t i = 0; i < maxTokens; ++i) {
        const int32_t id = sampler.sample(session.logits(), session.history());
        if (tokenizer && tokenizer->isEndOfGeneration(id)) {
            result.endOfGeneration = true;
            break;
        }
        result.tokens.push_back(id);
        if (decoder) onText(decoder->push(id));
        if (i + 1 == maxTokens) break;
        if (session.remaining() < 1) {
            result.contextFull = true;
            break;
        }
        session.step(id);
    }
    if (decoder) onText(decoder->finish());
    return result;
}

}  // namespace zinc::tools
