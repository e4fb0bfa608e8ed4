#include "tools/serve/chat_prompt.h"

namespace zinc::serve {

std::vector<int32_t> encodeConversation(const model::Tokenizer& tokenizer, model::ChatTemplateFamily family,
                                        std::span<const model::ChatMessage> messages, bool enableThinking) {
    const std::string text = model::applyChatTemplate(family, messages, true, enableThinking);
    // Templates that spell out the BOS text (Llama 3) must not get a second BOS.
    const bool bosInText = tokenizer.bos() >= 0 && text.rfind(tokenizer.tokenText(tokenizer.bos()), 0) == 0;
    return tokenizer.encode(text, !bosInText, true);
}

}  // namespace zinc::serve
