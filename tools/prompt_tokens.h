#pragma once
// The prompt of `trace` and `ab`: text through the model's tokenizer, or token ids given
// directly (--tokens "1 2 3", as `score` takes them; also for models without a tokenizer).
#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"

namespace zinc::tools {

// Throws CLI::ValidationError for a malformed id list (the tier checks ids against the vocabulary).
std::vector<int32_t> promptTokens(const model::Model& model, const std::string& text, const std::string& ids);
// "1 2 3" -> {1, 2, 3}; throws CLI::ValidationError naming --tokens for a word that is no id.
std::vector<int32_t> parseTokenList(const std::string& text);

}  // namespace zinc::tools
