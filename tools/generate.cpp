#include "tools/generate.h"

#include <algorithm>

namespace zinc::tools {
namespace {
constexpr int32_t kDeviceChunk = 16;  // tokens sampled on the device per host round trip
}  // namespace

GenerateResult generate(runtime::Session& session, runtime::Sampler& sampler, const model::Tokenizer* tokenizer,
                        int32_t maxTokens, const std::function<void(std::string_view)>& onText,
                        const std::atomic<bool>* stop) {
    GenerateResult result;
    std::optional<model::StreamingDecoder> decoder;
    if (tokenizer) decoder.emplace(*tokenizer, true, false);
    // A tier that samples on the device gets chunks of tokens queued ahead; the tokens past an
    // end of generation are fed but not returned.
    const bool onDevice = session.tier().samplesOnDevice(sampler.params());
    std::vector<int32_t> ahead;
    size_t next = 0;
    for (int32_t i = 0; i < maxTokens; ++i) {
        if (stop && stop->load()) {
            result.stopped = true;
            break;
        }
        int32_t id;
        if (i == 0 || !onDevice) {
            id = sampler.sample(session.logits(), session.history());
        } else {
            id = ahead[next++];
        }
        if (tokenizer && tokenizer->isEndOfGeneration(id)) {
            result.endOfGeneration = true;
            break;
        }
        result.tokens.push_back(id);
        if (decoder) onText(decoder->push(id));
        if (i + 1 == maxTokens) break;
        if (onDevice && next < ahead.size()) continue;  // fed already by the chunk that sampled it
        if (session.remaining() < 1) {
            result.contextFull = true;
            break;
        }
        if (onDevice) {
            ahead = session.stepSampled(id, std::min({kDeviceChunk, maxTokens - 1 - i, session.remaining()}), sampler);
            next = 0;
        } else {
            session.step(id);
        }
    }
    if (decoder) onText(decoder->finish());
    return result;
}

}  // namespace zinc::tools
