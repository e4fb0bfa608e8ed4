#pragma once
// A conversation -> prompt token ids in the model's chat template; shared by `zinc-rt chat`
// and `zinc-rt serve` so both send the model exactly the same tokens.
#include <cstdint>
#include <span>
#include <vector>

#include "model/tokenizer/chat_template.h"
#include "model/tokenizer/tokenizer.h"

namespace zinc::serve {

// Renders the messages with an assistant generation prompt and tokenizes them (special tokens
// parsed; BOS added unless the template spells it out itself, as Llama 3's does).
std::vector<int32_t> encodeConversation(const model::Tokenizer& tokenizer, model::ChatTemplateFamily family,
                                        std::span<const model::ChatMessage> messages, bool enableThinking);

}  // namespace zinc::serve
