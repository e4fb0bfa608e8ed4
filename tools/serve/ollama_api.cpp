#include "tools/serve/ollama_api.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>

#include "tools/serve/api_error.h"

namespace zinc::serve {

using json = nlohmann::ordered_json;

namespace {

void checkModel(const json& body, const std::string& model) {
    const std::string asked = body.value("model", "");
    if (asked.empty() || asked == model || asked == model + ":latest") return;
    throw ApiError(404, fmt::format("model '{}' not found (this server has '{}')", asked, model), "invalid_request_error",
                   "model", "model_not_found");
}

// Ollama's "options" and "format" -> the OpenAI fields with the same meaning.
void translateOptions(const json& body, json& out) {
    out["stream"] = body.value("stream", true);
    if (body.contains("options") && body["options"].is_object()) {
        const json& o = body["options"];
        const std::pair<const char*, const char*> names[] = {
            {"temperature", "temperature"}, {"top_p", "top_p"},   {"top_k", "top_k"},
            {"min_p", "min_p"},             {"seed", "seed"},     {"stop", "stop"},
            {"repeat_penalty", "repeat_penalty"}, {"repeat_last_n", "repeat_last_n"}};
        for (const auto& [from, to] : names)
            if (o.contains(from)) out[to] = o[from];
        if (o.contains("num_predict") && o["num_predict"].is_number_integer() && o["num_predict"].get<int64_t>() > 0)
            out["max_tokens"] = o["num_predict"];
    }
    if (body.contains("format")) {
        const json& f = body["format"];
        if (f == "json") out["response_format"] = {{"type", "json_object"}};
        else if (f.is_object()) out["response_format"] = {{"type", "json_schema"}, {"json_schema", {{"name", "format"}, {"schema", f}}}};
        else if (!f.is_null() && f != "") throw ApiError::badRequest("'format' must be \"json\" or a JSON Schema object", "format");
    }
    if (body.contains("think") && body["think"].is_boolean()) out["enable_thinking"] = body["think"];
    if (body.contains("tools")) out["tools"] = body["tools"];
}

}  // namespace

std::string ollamaTimestamp() {
    const auto now = std::chrono::system_clock::now();
    return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", std::chrono::floor<std::chrono::seconds>(now));
}

json ollamaChatToOpenAi(const json& body, const std::string& model) {
    checkModel(body, model);
    json out = {{"model", model}};
    translateOptions(body, out);
    if (!body.contains("messages") || !body["messages"].is_array())
        throw ApiError::badRequest("'messages' must be an array", "messages");
    json messages = json::array();
    for (const json& m : body["messages"]) {
        if (!m.is_object()) throw ApiError::badRequest("'messages' must hold objects", "messages");
        if (m.contains("images") && !m["images"].empty()) throw ApiError::badRequest("images are not supported", "messages");
        json t = {{"role", m.value("role", "")}, {"content", m.value("content", "")}};
        if (m.contains("tool_calls") && m["tool_calls"].is_array()) {  // Ollama: arguments as an object
            json calls = json::array();
            for (const json& c : m["tool_calls"]) {
                const json fn = c.value("function", json::object());
                calls.push_back({{"type", "function"},
                                 {"function", {{"name", fn.value("name", "")}, {"arguments", fn.value("arguments", json::object()).dump()}}}});
            }
            t["tool_calls"] = calls;
        }
        messages.push_back(t);
    }
    out["messages"] = messages;
    return out;
}

json ollamaGenerateToOpenAi(const json& body, const std::string& model, bool& raw) {
    checkModel(body, model);
    json out = {{"model", model}};
    translateOptions(body, out);
    out.erase("tools");
    if (body.contains("images") && !body["images"].empty()) throw ApiError::badRequest("images are not supported", "images");
    const std::string prompt = body.value("prompt", "");
    raw = body.value("raw", false);
    if (raw) {
        out["prompt"] = prompt;
        return out;
    }
    json messages = json::array();
    if (body.contains("system") && body["system"].is_string()) messages.push_back({{"role", "system"}, {"content", body["system"]}});
    messages.push_back({{"role", "user"}, {"content", prompt}});
    out["messages"] = messages;
    return out;
}

json ollamaChunk(const std::string& model, const AssistantDelta& delta, bool chat) {
    json j = {{"model", model}, {"created_at", ollamaTimestamp()}};
    if (chat) {
        json message = {{"role", "assistant"}, {"content", delta.content}};
        if (!delta.reasoning.empty()) message["thinking"] = delta.reasoning;
        if (!delta.toolCalls.empty()) {
            json calls = json::array();
            for (const ToolCall& c : delta.toolCalls)
                calls.push_back({{"function", {{"name", c.name}, {"arguments", json::parse(c.arguments, nullptr, false)}}}});
            message["tool_calls"] = calls;
        }
        j["message"] = message;
    } else {
        j["response"] = delta.content;
        if (!delta.reasoning.empty()) j["thinking"] = delta.reasoning;
    }
    j["done"] = false;
    return j;
}

json ollamaDone(const std::string& model, const AssistantDelta& answer, bool chat, const JobResult& result,
                const OllamaTimes& times) {
    json j = ollamaChunk(model, answer, chat);
    j["done"] = true;
    j["done_reason"] = result.reason == FinishReason::Length ? "length" : "stop";
    j["total_duration"] = times.totalNs;
    j["load_duration"] = 0;
    j["prompt_eval_count"] = result.promptTokens;
    j["prompt_eval_duration"] = times.promptNs;
    j["eval_count"] = result.completionTokens;
    j["eval_duration"] = times.evalNs;
    return j;
}

}  // namespace zinc::serve
