#pragma once
// A `zinc-rt chat` conversation kept as the tokens the model has seen: a reply is never
// re-tokenized, and each user turn adds only its own tokens (the end of the previous reply's
// turn, the user message, the assistant header) rendered in the model's chat template.
// The messages are kept too, as text, for /save and for starting afresh (/load, a reset session).
#include <cstdint>
#include <string>
#include <vector>

#include "model/tokenizer/chat_template.h"
#include "model/tokenizer/tokenizer.h"

namespace zinc::tools {

class ChatConversation {
public:
    ChatConversation(const model::Tokenizer& tokenizer, model::ChatTemplateFamily family, bool enableThinking, std::string system);

    // The tokens to feed for a user message: the whole conversation (with BOS) when the session
    // is empty (`fresh`), else only what follows the tokens already fed.
    std::vector<int32_t> userTurnTokens(const std::string& text, bool fresh) const;
    // The user message was fed: it joins the conversation.
    void addUserTurn(const std::string& text);
    // The reply as shown, and its tokens that the session has not run yet (fed with the next turn).
    void addReply(std::string text, std::vector<int32_t> unfed);
    // Back to the system message alone.
    void reset();

    const std::vector<model::ChatMessage>& messages() const { return messages_; }
    // JSON {"messages": [{"role", "content"}...]}; load replaces the conversation (the session
    // must be reset: the next turn renders it whole). Both throw std::runtime_error naming the file.
    void save(const std::string& path) const;
    void load(const std::string& path);

private:
    std::vector<int32_t> encode(const std::string& text, bool withBos) const;

    const model::Tokenizer& tokenizer_;
    model::ChatTemplateFamily family_;
    bool enableThinking_;
    std::vector<model::ChatMessage> messages_;
    size_t systemMessages_;
    std::vector<int32_t> unfed_;
};

}  // namespace zinc::tools
