#include "tools/serve/openai_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "tools/serve/api_error.h"

namespace zinc::serve {
namespace {

// Ordered: a schema's properties are generated in the order it lists them.
using json = nlohmann::ordered_json;

constexpr int kMaxNesting = 64;  // deeper JSON is refused before it is built

}  // namespace

json parseJsonObject(std::string_view body) {
    if (body.find_first_not_of(" \t\r\n") == std::string_view::npos)
        throw ApiError::badRequest("the request body is empty: send a JSON object (Content-Type: application/json)");
    json j;
    try {
        j = json::parse(body.begin(), body.end(), [](int depth, json::parse_event_t, json&) {
            if (depth > kMaxNesting) throw ApiError::badRequest(fmt::format("JSON nested deeper than {} levels", kMaxNesting));
            return true;
        });
    } catch (const json::exception& e) {
        throw ApiError::badRequest(fmt::format("could not parse the JSON body of the request: {}", e.what()));
    }
    if (!j.is_object()) throw ApiError::badRequest("the request body must be a JSON object");
    return j;
}

namespace {

// Reads optional fields of one JSON object; null counts as absent, a wrong type or a value out
// of range throws ApiError naming the field.
class Fields {
public:
    explicit Fields(const json& object, std::string prefix = {}) : object_(object), prefix_(std::move(prefix)) {}

    const json* find(const char* name) const {
        const auto it = object_.find(name);
        return it == object_.end() || it->is_null() ? nullptr : &*it;
    }
    std::string param(const char* name) const { return prefix_ + name; }
    [[noreturn]] void fail(const char* name, const std::string& what) const {
        throw ApiError::badRequest(fmt::format("'{}' {}", param(name), what), param(name));
    }

    std::optional<bool> boolean(const char* name) const {
        const json* v = find(name);
        if (!v) return std::nullopt;
        if (!v->is_boolean()) fail(name, "must be a boolean");
        return v->get<bool>();
    }
    std::optional<std::string> string(const char* name) const {
        const json* v = find(name);
        if (!v) return std::nullopt;
        if (!v->is_string()) fail(name, "must be a string");
        return v->get<std::string>();
    }
    std::optional<double> number(const char* name, double lo, double hi) const {
        const json* v = find(name);
        if (!v) return std::nullopt;
        if (!v->is_number()) fail(name, "must be a number");
        const double x = v->get<double>();
        if (!(x >= lo && x <= hi)) fail(name, fmt::format("must be between {} and {}, got {}", lo, hi, x));
        return x;
    }
    std::optional<int64_t> integer(const char* name, int64_t lo, int64_t hi) const {
        const json* v = find(name);
        if (!v) return std::nullopt;
        if (!v->is_number_integer()) fail(name, "must be an integer");
        if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi))
            fail(name, fmt::format("must be between {} and {}", lo, hi));
        const int64_t x = v->get<int64_t>();
        if (x < lo || x > hi) fail(name, fmt::format("must be between {} and {}, got {}", lo, hi, x));
        return x;
    }

private:
    const json& object_;
    std::string prefix_;
};

std::vector<std::string> parseStop(const Fields& f) {
    const json* v = f.find("stop");
    if (!v) return {};
    std::vector<std::string> stops;
    if (v->is_string()) {
        stops.push_back(v->get<std::string>());
    } else if (v->is_array()) {
        if (v->size() > kMaxStopStrings) f.fail("stop", fmt::format("may hold at most {} strings", kMaxStopStrings));
        for (const json& s : *v) {
            if (!s.is_string()) f.fail("stop", "must be a string or an array of strings");
            stops.push_back(s.get<std::string>());
        }
    } else {
        f.fail("stop", "must be a string or an array of strings");
    }
    for (const std::string& s : stops) {
        if (s.empty()) f.fail("stop", "must not contain an empty string");
        if (s.size() > kMaxStopLength) f.fail("stop", fmt::format("strings are limited to {} bytes", kMaxStopLength));
    }
    return stops;
}

std::vector<std::pair<int32_t, float>> parseLogitBias(const Fields& f) {
    const json* v = f.find("logit_bias");
    if (!v) return {};
    if (!v->is_object()) f.fail("logit_bias", "must be an object mapping token ids to numbers");
    std::vector<std::pair<int32_t, float>> bias;
    for (const auto& [key, value] : v->items()) {
        int64_t id = -1;
        const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
        if (ec != std::errc() || end != key.data() + key.size() || id < 0 || id > std::numeric_limits<int32_t>::max())
            f.fail("logit_bias", fmt::format("keys must be token ids, got '{}'", key));
        if (!value.is_number() || !(value.get<double>() >= -100 && value.get<double>() <= 100))
            f.fail("logit_bias", fmt::format("values must be numbers between -100 and 100 (token {})", key));
        bias.emplace_back(static_cast<int32_t>(id), value.get<float>());
    }
    return bias;
}

}  // namespace

std::shared_ptr<const JsonGrammar> compileSchema(const json& schema, const std::string& param) {
    try {
        return JsonGrammar::fromSchema(schema);
    } catch (const GrammarError& e) {
        throw ApiError::badRequest(fmt::format("'{}': {}", param, e.what()), param);
    }
}

namespace {

// Fields OpenAI defines that this server cannot honour: refused so that a client never gets
// an answer made without them.
void refuseUnsupported(const Fields& f) {
    if (auto n = f.integer("n", 1, 128); n && *n != 1) f.fail("n", "must be 1 (one choice per request)");
    for (const char* penalty : {"frequency_penalty", "presence_penalty"}) {
        if (auto p = f.number(penalty, -2, 2); p && *p != 0)
            f.fail(penalty, "is not supported; use repetition_penalty");
    }
    if (const json* lp = f.find("logprobs"); lp && !(lp->is_boolean() && !lp->get<bool>()))
        f.fail("logprobs", "is not supported");
    if (f.find("top_logprobs")) f.fail("top_logprobs", "is not supported");
    if (f.find("functions") || f.find("function_call")) f.fail(f.find("functions") ? "functions" : "function_call", "are replaced by tools and tool_choice");
}

// response_format: {"type": "text"}, {"type": "json_object"} or
// {"type": "json_schema", "json_schema": {"name": ..., "schema": {...}, "strict": ...}}.
std::shared_ptr<const JsonGrammar> parseResponseFormat(const Fields& f) {
    const json* rf = f.find("response_format");
    if (!rf) return nullptr;
    if (!rf->is_object()) f.fail("response_format", "must be an object");
    const Fields format(*rf, "response_format.");
    const std::string type = format.string("type").value_or("");
    if (type == "text") return nullptr;
    if (type == "json_object") return JsonGrammar::anyObject();
    if (type != "json_schema") format.fail("type", "must be one of text, json_object, json_schema");
    const json* spec = format.find("json_schema");
    if (!spec || !spec->is_object()) format.fail("json_schema", "must be an object holding a 'schema'");
    const Fields specFields(*spec, "response_format.json_schema.");
    const json* schema = specFields.find("schema");
    if (!schema) specFields.fail("schema", "is required");
    return compileSchema(*schema, "response_format.json_schema.schema");
}

GenerationParams parseGeneration(const json& body, const runtime::SamplerParams& defaults) {
    const Fields f(body);
    refuseUnsupported(f);
    GenerationParams p;
    p.model = f.string("model").value_or("");
    p.stream = f.boolean("stream").value_or(false);
    if (const json* so = f.find("stream_options")) {
        if (!so->is_object()) f.fail("stream_options", "must be an object");
        p.includeUsage = Fields(*so, "stream_options.").boolean("include_usage").value_or(false);
    }
    constexpr int64_t kMaxTokens = std::numeric_limits<int32_t>::max();
    auto maxTokens = f.integer("max_completion_tokens", 1, kMaxTokens);
    if (!maxTokens) maxTokens = f.integer("max_tokens", 1, kMaxTokens);
    if (maxTokens) p.maxTokens = static_cast<int32_t>(*maxTokens);
    p.stop = parseStop(f);
    p.sampling = defaults;
    runtime::SamplerParams& s = p.sampling;
    s.temperature = static_cast<float>(f.number("temperature", 0, 2).value_or(s.temperature));
    s.topP = static_cast<float>(f.number("top_p", 0, 1).value_or(s.topP));
    s.topK = static_cast<int32_t>(f.integer("top_k", 0, 1 << 24).value_or(s.topK));
    s.minP = static_cast<float>(f.number("min_p", 0, 1).value_or(s.minP));
    auto penalty = f.number("repetition_penalty", 0.01, 10);
    if (!penalty) penalty = f.number("repeat_penalty", 0.01, 10);
    s.repeatPenalty = static_cast<float>(penalty.value_or(s.repeatPenalty));
    s.repeatLastN = static_cast<int32_t>(f.integer("repeat_last_n", 0, 1 << 24).value_or(s.repeatLastN));
    if (const json* seed = f.find("seed")) {
        if (!seed->is_number_integer()) f.fail("seed", "must be an integer");
        p.seed = seed->is_number_unsigned() ? seed->get<uint64_t>() : static_cast<uint64_t>(seed->get<int64_t>());
    }
    p.logitBias = parseLogitBias(f);
    p.grammar = parseResponseFormat(f);
    return p;
}

// A message's content: a string, or an array of {"type": "text", "text": ...} parts.
std::string messageContent(const json& content, const std::string& param) {
    if (content.is_string()) return content.get<std::string>();
    if (!content.is_array()) throw ApiError::badRequest(fmt::format("'{}' must be a string or an array of text parts", param), param);
    std::string text;
    for (const json& part : content) {
        if (!part.is_object() || !part.contains("type") || part["type"] != "text" || !part.contains("text") ||
            !part["text"].is_string())
            throw ApiError::badRequest(fmt::format("'{}' may only hold parts of type \"text\" (no images or audio)", param), param);
        text += part["text"].get<std::string>();
    }
    return text;
}

std::vector<model::ChatMessage> parseMessages(const json& body) {
    const auto it = body.find("messages");
    if (it == body.end() || it->is_null()) throw ApiError::badRequest("'messages' is required", "messages");
    if (!it->is_array() || it->empty()) throw ApiError::badRequest("'messages' must be a non-empty array", "messages");
    std::vector<model::ChatMessage> messages;
    for (size_t i = 0; i < it->size(); ++i) {
        const json& m = (*it)[i];
        const std::string param = fmt::format("messages[{}]", i);
        if (!m.is_object()) throw ApiError::badRequest(fmt::format("'{}' must be an object", param), param);
        const Fields f(m, param + ".");
        const std::string role = f.string("role").value_or("");
        if (role != "system" && role != "developer" && role != "user" && role != "assistant" && role != "tool")
            f.fail("role", "must be one of system, developer, user, assistant, tool");
        const json* content = f.find("content");
        if (!content && role != "assistant") f.fail("content", "is required");
        // OpenAI's "developer" role is the newer name of "system".
        messages.push_back({role == "developer" ? "system" : role, content ? messageContent(*content, f.param("content")) : ""});
    }
    return messages;
}

// An assistant message's tool_calls: [{"id", "type": "function", "function": {"name", "arguments": "<json>"}}].
std::vector<ToolCall> parseMessageToolCalls(const json& message, const std::string& param) {
    const auto it = message.find("tool_calls");
    if (it == message.end() || it->is_null()) return {};
    if (!it->is_array()) throw ApiError::badRequest(fmt::format("'{}.tool_calls' must be an array", param), param + ".tool_calls");
    std::vector<ToolCall> calls;
    for (size_t i = 0; i < it->size(); ++i) {
        const std::string p = fmt::format("{}.tool_calls[{}]", param, i);
        const json& c = (*it)[i];
        if (!c.is_object() || !c.contains("function") || !c["function"].is_object())
            throw ApiError::badRequest(fmt::format("'{}' must be an object with a 'function'", p), p);
        const Fields fn(c["function"], p + ".function.");
        ToolCall call;
        call.id = Fields(c, p + ".").string("id").value_or("");
        call.name = fn.string("name").value_or("");
        if (call.name.empty()) fn.fail("name", "is required");
        call.arguments = fn.string("arguments").value_or("{}");
        if (!json::parse(call.arguments, nullptr, false).is_object()) fn.fail("arguments", "must be a JSON object, as text");
        calls.push_back(std::move(call));
    }
    return calls;
}

ToolRequest parseTools(const Fields& f) {
    ToolRequest r;
    if (const json* tools = f.find("tools")) {
        if (!tools->is_array()) f.fail("tools", "must be an array");
        for (size_t i = 0; i < tools->size(); ++i) {
            const std::string p = fmt::format("tools[{}]", i);
            const json& t = (*tools)[i];
            if (!t.is_object() || t.value("type", "") != "function" || !t.contains("function") || !t["function"].is_object())
                throw ApiError::badRequest(fmt::format("'{}' must be {{\"type\": \"function\", \"function\": {{...}}}}", p), p);
            const Fields fn(t["function"], p + ".function.");
            ToolSpec spec;
            spec.name = fn.string("name").value_or("");
            if (spec.name.empty()) fn.fail("name", "is required");
            spec.description = fn.string("description").value_or("");
            if (const json* params = fn.find("parameters")) {
                if (!params->is_object()) fn.fail("parameters", "must be a JSON Schema object");
                spec.parameters = *params;
            }
            spec.strict = fn.boolean("strict").value_or(false);
            if (spec.strict) compileSchema(spec.parameters, fn.param("parameters"));  // refused now, not mid-answer
            r.tools.push_back(std::move(spec));
        }
    }
    if (const json* choice = f.find("tool_choice")) {
        if (choice->is_string()) {
            const std::string c = choice->get<std::string>();
            if (c == "none") r.choice = ToolChoice::None;
            else if (c == "auto") r.choice = ToolChoice::Auto;
            else if (c == "required") r.choice = ToolChoice::Required;
            else f.fail("tool_choice", "must be none, auto, required or {\"type\": \"function\", \"function\": {\"name\": ...}}");
        } else if (choice->is_object() && choice->contains("function") && (*choice)["function"].is_object()) {
            r.choice = ToolChoice::Named;
            r.named = Fields((*choice)["function"], "tool_choice.function.").string("name").value_or("");
            const bool known = std::any_of(r.tools.begin(), r.tools.end(), [&](const ToolSpec& t) { return t.name == r.named; });
            if (!known) f.fail("tool_choice", fmt::format("names the function '{}', which is not in 'tools'", r.named));
        } else {
            f.fail("tool_choice", "must be none, auto, required or {\"type\": \"function\", \"function\": {\"name\": ...}}");
        }
        if (r.choice != ToolChoice::None && r.tools.empty()) f.fail("tool_choice", "needs 'tools'");
    }
    return r;
}

}  // namespace

ChatRequest parseChatRequest(std::string_view body, const runtime::SamplerParams& defaults) {
    const json j = parseJsonObject(body);
    ChatRequest r;
    r.params = parseGeneration(j, defaults);
    r.messages = parseMessages(j);
    for (size_t i = 0; i < r.messages.size(); ++i)
        r.messageToolCalls.push_back(parseMessageToolCalls(j["messages"][i], fmt::format("messages[{}]", i)));
    const Fields f(j);
    r.tools = parseTools(f);
    if (auto format = f.string("reasoning_format")) {
        if (*format != "none" && *format != "auto" && *format != "deepseek")
            f.fail("reasoning_format", "must be none, auto or deepseek");
        r.splitReasoning = *format != "none";
    }
    r.enableThinking = f.boolean("enable_thinking");
    if (const json* kwargs = f.find("chat_template_kwargs")) {
        if (!kwargs->is_object()) f.fail("chat_template_kwargs", "must be an object");
        if (auto think = Fields(*kwargs, "chat_template_kwargs.").boolean("enable_thinking")) r.enableThinking = think;
    }
    return r;
}

CompletionRequest parseCompletionRequest(std::string_view body, const runtime::SamplerParams& defaults) {
    const json j = parseJsonObject(body);
    CompletionRequest r;
    r.params = parseGeneration(j, defaults);
    const Fields f(j);
    if (f.boolean("echo").value_or(false)) f.fail("echo", "is not supported");
    if (f.find("suffix")) f.fail("suffix", "is not supported");
    if (auto bestOf = f.integer("best_of", 1, 128); bestOf && *bestOf != 1) f.fail("best_of", "must be 1");
    const json* prompt = f.find("prompt");
    if (!prompt) throw ApiError::badRequest("'prompt' is required", "prompt");
    const json* text = prompt;
    if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) text = &(*prompt)[0];
    if (text->is_string()) {
        r.prompt = text->get<std::string>();
        if (r.prompt.empty()) f.fail("prompt", "must not be empty");
    } else if (prompt->is_array() && !prompt->empty()) {
        for (const json& id : *prompt) {
            if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > std::numeric_limits<int32_t>::max())
                f.fail("prompt", "must be a string, an array of one string, or an array of token ids");
            r.promptTokens.push_back(static_cast<int32_t>(id.get<int64_t>()));
        }
        r.promptIsTokens = true;
    } else {
        f.fail("prompt", "must be a string, an array of one string, or an array of token ids");
    }
    return r;
}

}  // namespace zinc::serve
