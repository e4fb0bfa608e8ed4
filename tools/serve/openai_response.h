#pragma once
// OpenAI response bodies: whole responses, streaming chunks (server-sent events) and errors,
// for /v1/chat/completions ("chat.completion", "chat.completion.chunk") and /v1/completions
// ("text_completion"). Pure functions of their arguments.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "tools/serve/api_error.h"
#include "tools/serve/assistant_output.h"
#include "tools/serve/job.h"

namespace zinc::serve {

enum class Endpoint { Chat, Completion };

// What every chunk of one response repeats.
struct ResponseHeader {
    Endpoint endpoint = Endpoint::Chat;
    std::string id;  // chatcmpl-... / cmpl-...
    int64_t created = 0;
    std::string model;
};

nlohmann::json usageJson(const JobResult& result);
// /v1/completions: the text. /v1/chat/completions: message.content, and reasoning_content and
// tool_calls when there are any (finish_reason "tool_calls" then).
nlohmann::json fullResponse(const ResponseHeader& header, const std::string& text, const JobResult& result);
nlohmann::json fullChatResponse(const ResponseHeader& header, const AssistantDelta& answer, const JobResult& result);
// A chat chunk: delta.reasoning_content, delta.content, delta.tool_calls (numbered from
// firstToolIndex); the first chunk also says role "assistant".
nlohmann::json chatDeltaChunk(const ResponseHeader& header, const AssistantDelta& delta, bool first, size_t firstToolIndex);
// A chunk carrying text; for chat the first one also says role "assistant".
nlohmann::json textChunk(const ResponseHeader& header, std::string_view text, bool first);
// The last chunk with a choice: no text, the finish_reason ("tool_calls" when toolCalls).
nlohmann::json finishChunk(const ResponseHeader& header, const JobResult& result, bool toolCalls = false);
// stream_options.include_usage: a chunk with no choices and the usage.
nlohmann::json usageChunk(const ResponseHeader& header, const JobResult& result);

nlohmann::json errorJson(const ApiError& error);
// One line of JSON; text is valid UTF-8 by construction, anything else is replaced, never thrown.
std::string dumpJson(const nlohmann::json& j);
// "data: <json>\n\n"
std::string sseEvent(const nlohmann::json& j);
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

}  // namespace zinc::serve
