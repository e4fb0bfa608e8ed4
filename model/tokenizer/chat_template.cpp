#include "model/tokenizer/chat_template.h"

#include <array>

#include "model/model_error.h"

namespace zinc::model {

namespace {

constexpr std::array<std::pair<ChatTemplateFamily, std::string_view>, 6> kNames = {{
    {ChatTemplateFamily::ChatMl, "chatml"},
    {ChatTemplateFamily::Qwen3, "qwen3"},
    {ChatTemplateFamily::Llama3, "llama3"},
    {ChatTemplateFamily::Llama2, "llama2"},
    {ChatTemplateFamily::Gemma, "gemma"},
    {ChatTemplateFamily::Phi3, "phi3"},
}};

bool contains(std::string_view haystack, std::string_view needle) {
    return haystack.find(needle) != std::string_view::npos;
}

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool endsWith(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view trim(std::string_view s, std::string_view chars = " \t\n\r\f\v") {
    const size_t first = s.find_first_not_of(chars);
    if (first == std::string_view::npos) return {};
    return s.substr(first, s.find_last_not_of(chars) - first + 1);
}
std::string_view trimLeft(std::string_view s, std::string_view chars) {
    const size_t first = s.find_first_not_of(chars);
    return first == std::string_view::npos ? std::string_view() : s.substr(first);
}
std::string_view trimRight(std::string_view s, std::string_view chars) {
    const size_t last = s.find_last_not_of(chars);
    return last == std::string_view::npos ? std::string_view() : s.substr(0, last + 1);
}

std::string formatChatMl(std::span<const ChatMessage> messages, bool addGenerationPrompt) {
    std::string out;
    for (const ChatMessage& m : messages) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    if (addGenerationPrompt) out += "<|im_start|>assistant\n";
    return out;
}

// Qwen3's template: ChatML, where assistant turns after the last real user query keep their
// reasoning in a <think> block and earlier ones lose it, and tool results are wrapped in
// <tool_response> inside user turns.
std::string formatQwen3(std::span<const ChatMessage> messages, bool addGenerationPrompt, bool enableThinking) {
    // The last user message that is not a wrapped tool response.
    size_t lastQuery = messages.empty() ? 0 : messages.size() - 1;
    for (size_t i = messages.size(); i-- > 0;) {
        const std::string_view c = messages[i].content;
        if (messages[i].role == "user" && !(startsWith(c, "<tool_response>") && endsWith(c, "</tool_response>"))) {
            lastQuery = i;
            break;
        }
    }
    std::string out;
    for (size_t i = 0; i < messages.size(); ++i) {
        const ChatMessage& m = messages[i];
        if (m.role == "user" || m.role == "system") {
            out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
        } else if (m.role == "assistant") {
            std::string_view content = m.content;
            std::string_view reasoning;
            if (const size_t close = content.find("</think>"); close != std::string_view::npos) {
                // Reasoning: between <think> and the first </think>; answer: after the last.
                std::string_view before = trimRight(content.substr(0, close), "\n");
                if (const size_t open = before.rfind("<think>"); open != std::string_view::npos) {
                    before = before.substr(open + 7);
                }
                reasoning = trimLeft(before, "\n");
                content = trimLeft(content.substr(content.rfind("</think>") + 8), "\n");
            }
            out += "<|im_start|>assistant\n";
            const bool last = i + 1 == messages.size();
            if (i > lastQuery && (last || !reasoning.empty())) {
                out += "<think>\n";
                out += trim(reasoning, "\n");
                out += "\n</think>\n\n";
                out += trimLeft(content, "\n");
            } else {
                out += content;
            }
            out += "<|im_end|>\n";
        } else if (m.role == "tool") {
            if (i == 0 || messages[i - 1].role != "tool") out += "<|im_start|>user";
            out += "\n<tool_response>\n" + m.content + "\n</tool_response>";
            if (i + 1 == messages.size() || messages[i + 1].role != "tool") out += "<|im_end|>\n";
        } else {
            throw ModelError("qwen3 chat template: unsupported role '" + m.role + "'");
        }
    }
    if (addGenerationPrompt) {
        out += "<|im_start|>assistant\n";
        if (!enableThinking) out += "<think>\n\n</think>\n\n";
    }
    return out;
}

std::string formatLlama3(std::span<const ChatMessage> messages, bool addGenerationPrompt) {
    std::string out;
    for (const ChatMessage& m : messages) {
        out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n";
        out += trim(m.content);
        out += "<|eot_id|>";
    }
    if (addGenerationPrompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
    return out;
}

// Meta's Llama 2 chat format: the system prompt goes inside the first [INST]; each completed
// exchange ends with </s> and the next one starts with <s> (the first BOS is the tokenizer's).
// The model answers after [/INST], so there is no separate generation prompt.
std::string formatLlama2(std::span<const ChatMessage> messages) {
    std::string out;
    bool inTurn = false;  // an [INST] has been opened and not yet answered
    bool firstTurn = true;
    auto openTurn = [&] {
        if (inTurn) return;
        out += firstTurn ? "[INST] " : "<s>[INST] ";
        inTurn = true;
        firstTurn = false;
    };
    for (const ChatMessage& m : messages) {
        if (m.role == "system") {
            openTurn();
            out += "<<SYS>>\n";
            out += trim(m.content);
            out += "\n<</SYS>>\n\n";
        } else if (m.role == "assistant") {
            out += " ";
            out += trim(m.content);
            out += " </s>";
            inTurn = false;
        } else {
            openTurn();
            out += trim(m.content);
            out += " [/INST]";
        }
    }
    return out;
}

// Gemma has no system role: the system text opens the first user turn (llama.cpp does the
// same), and the assistant is called "model".
std::string formatGemma(std::span<const ChatMessage> messages, bool addGenerationPrompt) {
    std::string out;
    std::string system;
    for (const ChatMessage& m : messages) {
        if (m.role == "system") {
            system += trim(m.content);
            continue;
        }
        const std::string role = m.role == "assistant" ? "model" : m.role;
        out += "<start_of_turn>" + role + "\n";
        if (!system.empty() && role != "model") {
            out += system + "\n\n";
            system.clear();
        }
        out += trim(m.content);
        out += "<end_of_turn>\n";
    }
    if (addGenerationPrompt) out += "<start_of_turn>model\n";
    return out;
}

std::string formatPhi3(std::span<const ChatMessage> messages, bool addGenerationPrompt) {
    std::string out;
    for (const ChatMessage& m : messages) out += "<|" + m.role + "|>\n" + m.content + "<|end|>\n";
    if (addGenerationPrompt) out += "<|assistant|>\n";
    return out;
}

}  // namespace

ChatTemplateFamily detectChatTemplate(std::string_view t) {
    if (trim(t).empty()) return ChatTemplateFamily::ChatMl;
    if (contains(t, "<|im_start|>")) {
        return contains(t, "<think>") || contains(t, "enable_thinking") ? ChatTemplateFamily::Qwen3
                                                                        : ChatTemplateFamily::ChatMl;
    }
    if (contains(t, "<|start_header_id|>") && contains(t, "<|end_header_id|>")) return ChatTemplateFamily::Llama3;
    if (contains(t, "<start_of_turn>")) return ChatTemplateFamily::Gemma;
    // Zephyr also says <|user|> but ends turns with </s>; Phi-3 ends them with <|end|>.
    if (contains(t, "<|user|>") && contains(t, "<|end|>")) return ChatTemplateFamily::Phi3;
    if (contains(t, "[INST]")) return ChatTemplateFamily::Llama2;
    std::string head(trim(t).substr(0, 60));
    for (char& c : head) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    throw ModelError("unsupported chat template (starts with: " + head + (trim(t).size() > 60 ? "...)" : ")") +
                     "; choose a family by name: chatml, qwen3, llama3, llama2, gemma, phi3");
}

ChatTemplateFamily chatTemplateFromName(std::string_view name) {
    for (const auto& [family, n] : kNames) {
        if (n == name) return family;
    }
    throw ModelError("unknown chat template name '" + std::string(name) +
                     "'; known: chatml, qwen3, llama3, llama2, gemma, phi3");
}

std::string_view chatTemplateName(ChatTemplateFamily family) {
    for (const auto& [f, n] : kNames) {
        if (f == family) return n;
    }
    return "unknown";
}

ChatTemplateFamily resolveChatTemplate(std::string_view templateText, std::string_view overrideName) {
    return overrideName.empty() ? detectChatTemplate(templateText) : chatTemplateFromName(overrideName);
}

std::string applyChatTemplate(ChatTemplateFamily family, std::span<const ChatMessage> messages,
                              bool addGenerationPrompt, bool enableThinking) {
    switch (family) {
        case ChatTemplateFamily::ChatMl: return formatChatMl(messages, addGenerationPrompt);
        case ChatTemplateFamily::Qwen3: return formatQwen3(messages, addGenerationPrompt, enableThinking);
        case ChatTemplateFamily::Llama3: return formatLlama3(messages, addGenerationPrompt);
        case ChatTemplateFamily::Llama2: return formatLlama2(messages);
        case ChatTemplateFamily::Gemma: return formatGemma(messages, addGenerationPrompt);
        case ChatTemplateFamily::Phi3: return formatPhi3(messages, addGenerationPrompt);
    }
    throw ModelError("applyChatTemplate: invalid template family");
}

}  // namespace zinc::model
