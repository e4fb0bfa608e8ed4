#pragma once
// Tool calling in the prompt: the function definitions written where the model family expects
// them (Qwen3 / Hermes: a <tools> block in the system message; Llama 3.1: JSON definitions in
// the first user message), an assistant's earlier calls written back in the family's call format,
// tool results as the family's tool turns (Qwen3 <tool_response>, Llama 3.1 "ipython"); and,
// for tool_choice "required" or a named function, the grammar that makes the model call one.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/tokenizer/chat_template.h"
#include "tools/serve/assistant_output.h"
#include "tools/serve/json_grammar.h"

namespace zinc::serve {

struct ToolSpec {
    std::string name;
    std::string description;
    nlohmann::ordered_json parameters = nlohmann::ordered_json::object();  // a JSON Schema of the arguments object
    bool strict = false;
};

enum class ToolChoice { None, Auto, Required, Named };

struct ToolRequest {
    std::vector<ToolSpec> tools;
    ToolChoice choice = ToolChoice::Auto;
    std::string named;  // ToolChoice::Named
    bool active() const { return !tools.empty() && choice != ToolChoice::None; }
};

// The call format of a template family: Llama 3 writes bare JSON, every other family Hermes tags.
ToolCallFormat toolCallFormat(model::ChatTemplateFamily family);

// The conversation ready for applyChatTemplate. calls[i]: the tool calls of messages[i] (an
// assistant's), may be shorter than messages.
std::vector<model::ChatMessage> renderToolConversation(model::ChatTemplateFamily family,
                                                       const std::vector<model::ChatMessage>& messages,
                                                       const std::vector<std::vector<ToolCall>>& calls,
                                                       const ToolRequest& tools);

// ToolChoice Required / Named: the grammar of one call in the family's format, each function's
// arguments following its schema (the name, written first, picks it). Auto with a strict
// function (Hermes format): the same for strict functions, triggered by each "<tool_call>" the
// model writes. nullptr otherwise. Throws GrammarError for a schema it cannot enforce.
std::shared_ptr<const JsonGrammar> toolCallGrammar(model::ChatTemplateFamily family, const ToolRequest& tools);

}  // namespace zinc::serve
