#include "tools/prompt_tokens.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <climits>
#include <sstream>

namespace zinc::tools {

std::vector<int32_t> promptTokens(const model::Model& model, const std::string& text, const std::string& ids) {
    if (ids.empty()) {
        if (!model.hasTokenizer())
            throw CLI::ValidationError("--prompt", "the model has no tokenizer; give the prompt as --tokens \"1 2 3\"");
        auto tokens = model.tokenizer().encode(text, true, true);
        if (tokens.empty()) throw CLI::ValidationError("--prompt", "the prompt encodes to no tokens");
        return tokens;
    }
    return parseTokenList(ids);
}

std::vector<int32_t> parseTokenList(const std::string& text) {
    std::vector<int32_t> tokens;
    std::istringstream in(text);
    std::string word;
    while (in >> word) {
        size_t used = 0;
        long id = -1;
        try {
            id = std::stol(word, &used);
        } catch (const std::exception&) {
        }
        if (used != word.size() || id < 0 || id > INT32_MAX)
            throw CLI::ValidationError("--tokens", fmt::format("'{}' is not a token id", word));
        tokens.push_back(static_cast<int32_t>(id));
    }
    if (tokens.empty()) throw CLI::ValidationError("--tokens", "no token ids given");
    return tokens;
}

}  // namespace zinc::tools
