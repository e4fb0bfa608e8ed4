#pragma once
// Ollama's API beside OpenAI's, so that clients written for Ollama (Open WebUI, editor
// plugins) work: /api/chat and /api/generate requests are translated into the OpenAI request
// this server already understands, and answered as Ollama does — NDJSON lines (one JSON object
// per line, "done": false while text comes, then one with "done": true and the counts and
// durations in nanoseconds), or one object when "stream" is false. Errors are {"error": "..."}.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "tools/serve/assistant_output.h"
#include "tools/serve/job.h"

namespace zinc::serve {

// The OpenAI chat / completion request body for an Ollama /api/chat or /api/generate body.
// `model` is this server's model id (Ollama clients add tags such as ":latest"). Throws
// ApiError 400 for what cannot be translated (images) and 404 for another model.
nlohmann::ordered_json ollamaChatToOpenAi(const nlohmann::ordered_json& body, const std::string& model);
// raw generate requests become a completion ("prompt"); the others a chat of one user turn.
nlohmann::ordered_json ollamaGenerateToOpenAi(const nlohmann::ordered_json& body, const std::string& model, bool& raw);

// One streamed line's object: /api/chat ("message") or /api/generate ("response").
nlohmann::ordered_json ollamaChunk(const std::string& model, const AssistantDelta& delta, bool chat);
// The closing object: done, done_reason, counts and durations. With the whole answer when the
// request did not stream.
struct OllamaTimes {
    int64_t totalNs = 0, promptNs = 0, evalNs = 0;
};
nlohmann::ordered_json ollamaDone(const std::string& model, const AssistantDelta& answer, bool chat, const JobResult& result,
                          const OllamaTimes& times);

// RFC 3339 time of now, as Ollama's created_at.
std::string ollamaTimestamp();

}  // namespace zinc::serve
