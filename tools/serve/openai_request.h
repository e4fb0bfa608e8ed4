#pragma once
// OpenAI request bodies -> plain structs, validated. Pure functions of the body text (no model,
// no I/O), so they can be tested and fuzzed alone; every problem throws ApiError 400 naming
// the field (`param`). Fields that would change the answer in a way this server cannot honour
// (n > 1, logprobs, non-zero frequency/presence penalties...) are refused rather than
// ignored; unknown fields are ignored, as OpenAI-compatible servers commonly do.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/tokenizer/chat_template.h"
#include "runtime/sampler.h"
#include "tools/serve/json_grammar.h"
#include "tools/serve/tool_prompt.h"

namespace zinc::serve {

// What both endpoints share: the model asked for, streaming and the sampling settings.
struct GenerationParams {
    std::string model;                 // empty when the request names none
    bool stream = false;
    bool includeUsage = false;         // stream_options.include_usage: a last chunk with usage
    std::optional<int32_t> maxTokens;  // max_tokens / max_completion_tokens; none: until the context is full
    std::vector<std::string> stop;     // stop strings, never part of the answer
    runtime::SamplerParams sampling;   // the request's values over the server's defaults
    std::optional<uint64_t> seed;      // none: the server draws one
    std::vector<std::pair<int32_t, float>> logitBias;  // token id, added to its logit
    // response_format json_object / json_schema: the grammar the answer is sampled under.
    std::shared_ptr<const JsonGrammar> grammar;
};

struct ChatRequest {
    GenerationParams params;
    std::vector<model::ChatMessage> messages;
    std::vector<std::vector<ToolCall>> messageToolCalls;  // per message: an assistant's tool_calls
    std::optional<bool> enableThinking;  // enable_thinking or chat_template_kwargs.enable_thinking
    bool splitReasoning = true;          // reasoning_format "none": <think> stays in the content
    ToolRequest tools;                   // tools, tool_choice
};

struct CompletionRequest {
    GenerationParams params;
    std::string prompt;                // text, tokenized with BOS and special tokens parsed
    std::vector<int32_t> promptTokens; // or token ids as given (promptIsTokens)
    bool promptIsTokens = false;
};

// Limits on what a request may carry.
inline constexpr size_t kMaxStopStrings = 16;
inline constexpr size_t kMaxStopLength = 256;  // bytes

// A request body that must be a JSON object (ApiError 400 for an empty body, bad JSON, deep nesting).
nlohmann::ordered_json parseJsonObject(std::string_view body);

// A JSON Schema -> its grammar; ApiError 400 naming `param` for what it cannot enforce.
std::shared_ptr<const JsonGrammar> compileSchema(const nlohmann::ordered_json& schema, const std::string& param);

// POST /v1/chat/completions. `defaults` fill the sampling fields the request leaves out.
ChatRequest parseChatRequest(std::string_view body, const runtime::SamplerParams& defaults = {});
// POST /v1/completions.
CompletionRequest parseCompletionRequest(std::string_view body, const runtime::SamplerParams& defaults = {});

}  // namespace zinc::serve
