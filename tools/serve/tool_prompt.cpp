#include "tools/serve/tool_prompt.h"

#include <fmt/format.h>

#include <algorithm>

namespace zinc::serve {

using json = nlohmann::ordered_json;

namespace {

json definitionJson(const ToolSpec& t) {
    return {{"type", "function"},
            {"function", {{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}}}};
}

// Hermes / Qwen3: appended to the system message.
std::string hermesToolsBlock(const ToolRequest& tools) {
    std::string out =
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
    for (const ToolSpec& t : tools.tools) out += "\n" + definitionJson(t).dump();
    out += "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
           "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
           "<args-json-object>}\n</tool_call>";
    return out;
}

// Llama 3.1's JSON tool calling: the definitions lead the first user message.
std::string llama3ToolsPreamble(const ToolRequest& tools) {
    std::string out =
        "Given the following functions, please respond with a JSON for a function call with its proper arguments "
        "that best answers the given prompt.\n\nRespond in the format {\"name\": function name, \"parameters\": "
        "dictionary of argument name and its value}. Do not use variables.\n\n";
    for (const ToolSpec& t : tools.tools) out += definitionJson(t).dump(4) + "\n\n";
    return out;
}

std::string writeCalls(ToolCallFormat format, const std::string& content, const std::vector<ToolCall>& calls) {
    std::string out = content;
    for (const ToolCall& c : calls) {
        const json args = json::parse(c.arguments, nullptr, false);
        if (format == ToolCallFormat::Llama3Json) {
            out += json{{"name", c.name}, {"parameters", args}}.dump();
        } else {
            if (!out.empty()) out += "\n";
            out += "<tool_call>\n" + json{{"name", c.name}, {"arguments", args}}.dump() + "\n</tool_call>";
        }
    }
    return out;
}

}  // namespace

ToolCallFormat toolCallFormat(model::ChatTemplateFamily family) {
    return family == model::ChatTemplateFamily::Llama3 ? ToolCallFormat::Llama3Json : ToolCallFormat::Hermes;
}

std::vector<model::ChatMessage> renderToolConversation(model::ChatTemplateFamily family,
                                                       const std::vector<model::ChatMessage>& messages,
                                                       const std::vector<std::vector<ToolCall>>& calls,
                                                       const ToolRequest& tools) {
    using Family = model::ChatTemplateFamily;
    const ToolCallFormat format = toolCallFormat(family);
    std::vector<model::ChatMessage> out;
    bool preambleWritten = false;
    size_t first = 0;
    if (tools.active() && format == ToolCallFormat::Hermes) {
        const bool hasSystem = !messages.empty() && messages[0].role == "system";
        out.push_back({"system", (hasSystem ? messages[0].content + "\n\n" : std::string()) + hermesToolsBlock(tools)});
        first = hasSystem ? 1 : 0;
    }
    for (size_t i = first; i < messages.size(); ++i) {
        model::ChatMessage m = messages[i];
        if (m.role == "assistant" && i < calls.size() && !calls[i].empty()) m.content = writeCalls(format, m.content, calls[i]);
        if (m.role == "tool") {
            if (family == Family::Llama3) {
                m.role = "ipython";
            } else if (family != Family::Qwen3) {  // Qwen3's template wraps tool turns itself
                m.content = "<tool_response>\n" + m.content + "\n</tool_response>";
                if (family != Family::ChatMl) m.role = "user";
            }
        }
        if (m.role == "user" && tools.active() && format == ToolCallFormat::Llama3Json && !preambleWritten) {
            m.content = llama3ToolsPreamble(tools) + m.content;
            preambleWritten = true;
        }
        out.push_back(std::move(m));
    }
    return out;
}

namespace {

// One call of one of `tools`: {"name": <const>, "<argsKey>": <arguments>}; a tool's own schema
// for its arguments when `strictOnly` is false or it is strict, else any object.
json callSchema(const std::vector<const ToolSpec*>& tools, const char* argsKey, bool strictOnly) {
    json alternatives = json::array();
    for (const ToolSpec* t : tools) {
        const json args = !strictOnly || t->strict ? t->parameters : json{{"type", "object"}};
        json properties = json::object();
        properties["name"] = {{"const", t->name}};  // first: the name picks the arguments' schema
        properties[argsKey] = args;
        alternatives.push_back(
            {{"type", "object"}, {"properties", properties}, {"required", {"name", argsKey}}, {"additionalProperties", false}});
    }
    return alternatives.size() == 1 ? alternatives[0] : json{{"anyOf", alternatives}};
}

}  // namespace

std::shared_ptr<const JsonGrammar> toolCallGrammar(model::ChatTemplateFamily family, const ToolRequest& tools) {
    if (!tools.active()) return nullptr;
    const bool llama = toolCallFormat(family) == ToolCallFormat::Llama3Json;
    const char* argsKey = llama ? "parameters" : "arguments";
    std::vector<const ToolSpec*> offered;
    for (const ToolSpec& t : tools.tools)
        if (tools.choice != ToolChoice::Named || t.name == tools.named) offered.push_back(&t);
    if (tools.choice == ToolChoice::Auto) {
        // Strict arguments in a free answer: the grammar starts at each <tool_call> the model writes.
        const bool anyStrict = std::any_of(offered.begin(), offered.end(), [](const ToolSpec* t) { return t->strict; });
        if (!anyStrict || llama) return nullptr;
        return JsonGrammar::fromSchema(callSchema(offered, argsKey, true))->framed("\n", "\n</tool_call>", "<tool_call>");
    }
    auto grammar = JsonGrammar::fromSchema(callSchema(offered, argsKey, false));
    return llama ? grammar : grammar->framed("<tool_call>\n", "\n</tool_call>");
}

}  // namespace zinc::serve
