#include "tools/serve/openai_response.h"

namespace zinc::serve {

using nlohmann::json;

namespace {

json envelope(const ResponseHeader& h, bool chunk) {
    const char* object = h.endpoint == Endpoint::Chat ? (chunk ? "chat.completion.chunk" : "chat.completion")
                                                      : "text_completion";
    return {{"id", h.id}, {"object", object}, {"created", h.created}, {"model", h.model},
            {"system_fingerprint", "zinc-rt"}};
}

json choice(const ResponseHeader& h, std::string_view text, const char* finishReason, bool chunk, bool first) {
    json c = {{"index", 0}, {"logprobs", nullptr}};
    c["finish_reason"] = finishReason ? json(finishReason) : json(nullptr);
    if (h.endpoint == Endpoint::Completion) {
        c["text"] = std::string(text);
    } else if (!chunk) {
        c["message"] = {{"role", "assistant"}, {"content", std::string(text)}};
    } else {
        c["delta"] = json::object();
        if (first) c["delta"]["role"] = "assistant";
        if (!text.empty() || first) c["delta"]["content"] = std::string(text);
    }
    return c;
}

}  // namespace

json usageJson(const JobResult& r) {
    return {{"prompt_tokens", r.promptTokens},
            {"completion_tokens", r.completionTokens},
            {"total_tokens", r.promptTokens + r.completionTokens},
            {"prompt_tokens_details", {{"cached_tokens", r.cachedTokens}}}};
}

json fullResponse(const ResponseHeader& h, const std::string& text, const JobResult& r) {
    json j = envelope(h, false);
    j["choices"] = json::array({choice(h, text, finishReasonName(r.reason), false, false)});
    j["usage"] = usageJson(r);
    return j;
}

json textChunk(const ResponseHeader& h, std::string_view text, bool first) {
    json j = envelope(h, true);
    j["choices"] = json::array({choice(h, text, nullptr, true, first)});
    return j;
}

json finishChunk(const ResponseHeader& h, const JobResult& r, bool toolCalls) {
    json j = envelope(h, true);
    j["choices"] = json::array({choice(h, "", toolCalls ? "tool_calls" : finishReasonName(r.reason), true, false)});
    return j;
}

namespace {

json toolCallJson(const ToolCall& call) {
    return {{"id", call.id}, {"type", "function"}, {"function", {{"name", call.name}, {"arguments", call.arguments}}}};
}

}  // namespace

json fullChatResponse(const ResponseHeader& h, const AssistantDelta& answer, const JobResult& r) {
    json j = fullResponse(h, answer.content, r);
    json& c = j["choices"][0];
    if (!answer.reasoning.empty()) c["message"]["reasoning_content"] = answer.reasoning;
    if (!answer.toolCalls.empty()) {
        json calls = json::array();
        for (const ToolCall& call : answer.toolCalls) calls.push_back(toolCallJson(call));
        c["message"]["tool_calls"] = calls;
        if (answer.content.empty()) c["message"]["content"] = nullptr;
        c["finish_reason"] = "tool_calls";
    }
    return j;
}

json chatDeltaChunk(const ResponseHeader& h, const AssistantDelta& d, bool first, size_t firstToolIndex) {
    json j = textChunk(h, d.content, first);
    json& delta = j["choices"][0]["delta"];
    if (d.content.empty() && !first) delta.erase("content");
    if (!d.reasoning.empty()) delta["reasoning_content"] = d.reasoning;
    if (!d.toolCalls.empty()) {
        json calls = json::array();
        for (size_t i = 0; i < d.toolCalls.size(); ++i) {
            json call = toolCallJson(d.toolCalls[i]);
            call["index"] = firstToolIndex + i;
            calls.push_back(call);
        }
        delta["tool_calls"] = calls;
    }
    return j;
}

json usageChunk(const ResponseHeader& h, const JobResult& r) {
    json j = envelope(h, true);
    j["choices"] = json::array();
    j["usage"] = usageJson(r);
    return j;
}

json errorJson(const ApiError& e) {
    return {{"error",
             {{"message", e.what()},
              {"type", e.type()},
              {"param", e.param().empty() ? json(nullptr) : json(e.param())},
              {"code", e.code().empty() ? json(nullptr) : json(e.code())}}}};
}

std::string errorBody(const ApiError& error) { return dumpJson(errorJson(error)); }

std::string dumpJson(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string sseEvent(const json& j) { return "data: " + dumpJson(j) + "\n\n"; }

}  // namespace zinc::serve
