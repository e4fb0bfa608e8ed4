#pragma once
// The generation loop shared by `run` and `chat`: sample, stream complete UTF-8 text, stop at
// an end-of-generation token, the token budget or a full context.
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "model/tokenizer/tokenizer.h"
#include "runtime/sampler.h"
#include "runtime/session.h"

namespace zinc::tools {

struct GenerateResult {
    std::vector<int32_t> tokens;
    bool endOfGeneration = false;  // stopped at an EOS/EOT token (not included in tokens)
    bool contextFull = false;
};

// Generates after the session's current logits. onText receives whole UTF-8 sequences only.
GenerateResult generate(runtime::Session& session, runtime::Sampler& sampler, const model::Tokenizer* tokenizer,
                        int32_t maxTokens, const std::function<void(std::string_view)>& onText);

}  // namespace zinc::tools
