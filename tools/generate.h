#pragma once
// The generation loop shared by `run` and `chat`: sample, stream complete UTF-8 text, stop at
// an end-of-generation token, the token budget or a full context.
#include <atomic>
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
    bool stopped = false;          // *stop was set (Ctrl-C in chat); every token returned was fed
};

// Generates after the session's current logits. onText receives whole UTF-8 sequences only.
// `stop`, when given, is checked before each token. The last token returned is not fed to the
// session when the budget or the context ran out (history() says what was).
GenerateResult generate(runtime::Session& session, runtime::Sampler& sampler, const model::Tokenizer* tokenizer,
                        int32_t maxTokens, const std::function<void(std::string_view)>& onText,
                        const std::atomic<bool>* stop = nullptr);

}  // namespace zinc::tools
