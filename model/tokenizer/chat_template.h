#pragma once
// Chat formatting for the template families this runtime knows. GGUF files carry a Jinja
// template (tokenizer.chat_template); rather than running Jinja we recognise the family from
// marker strings, as llama.cpp's llm_chat_detect_template does, and format the conversation
// with hand-written code that reproduces the family's template. The result is text to pass to
// Tokenizer::encode(text, addSpecial = true, parseSpecial = true): BOS is left to the tokenizer
// and never written into the text.
#include <span>
#include <string>
#include <string_view>

namespace zinc::model {

enum class ChatTemplateFamily {
    ChatMl,  // <|im_start|>role\n...<|im_end|>\n (Qwen2, many fine-tunes)
    Qwen3,   // ChatML plus Qwen3's <think> handling and enable_thinking switch
    Llama3,  // <|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|>
    Llama2,  // [INST] <<SYS>>...<</SYS>> ... [/INST]
    Gemma,   // <start_of_turn>user\n...<end_of_turn>\n, "model" for the assistant
    Phi3,    // <|user|>\n...<|end|>\n<|assistant|>\n
};

struct ChatMessage {
    std::string role;  // "system", "user", "assistant" (Qwen3 also "tool")
    std::string content;
};

// The family of a tokenizer.chat_template text. An empty template gives ChatMl, the
// documented fallback (what llama.cpp uses too). A template of no known family throws
// ModelError "unsupported chat template (starts with: ...)".
ChatTemplateFamily detectChatTemplate(std::string_view templateText);

// Explicit choice by name: "chatml", "qwen3", "llama3", "llama2", "gemma", "phi3". Throws
// ModelError listing the names for anything else.
ChatTemplateFamily chatTemplateFromName(std::string_view name);
std::string_view chatTemplateName(ChatTemplateFamily family);

// The override when it is not empty, else the family detected from the template text.
ChatTemplateFamily resolveChatTemplate(std::string_view templateText, std::string_view overrideName = {});

// Formats `messages`. addGenerationPrompt appends the header of an assistant turn.
// enableThinking matters for Qwen3 only: false appends the empty "<think>\n\n</think>\n\n"
// block to the generation prompt, as Qwen3's template does for enable_thinking=false.
std::string applyChatTemplate(ChatTemplateFamily family, std::span<const ChatMessage> messages,
                              bool addGenerationPrompt, bool enableThinking = true);

}  // namespace zinc::model
