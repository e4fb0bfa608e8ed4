#pragma once
// Structured output as a sampling hook: before each token the engine asks which tokens keep
// the text inside the grammar, and sets the others' logits to -infinity; after it, the chosen
// token is fed to the matcher. A grammar with a trigger (strict tool arguments in a free answer)
// constrains only from each trigger to the end of its match. A token is allowed when its bytes are accepted and the shortest
// completion still fits in the tokens left (every byte has a token of its own, so that many
// tokens always suffice): the JSON closes before max_tokens, whatever the model prefers. Once
// the text is complete only the end-of-generation tokens remain.
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/tokenizer/tokenizer.h"
#include "tools/serve/job.h"
#include "tools/serve/json_matcher.h"

namespace zinc::serve {

// The bytes of every token, grouped by first byte; built once per model.
class TokenPieces {
public:
    explicit TokenPieces(const model::Tokenizer& tokenizer);
    const std::string& piece(int32_t id) const { return pieces_[static_cast<size_t>(id)]; }
    const std::vector<int32_t>& startingWith(uint8_t byte) const { return byFirstByte_[byte]; }
    const std::vector<int32_t>& endOfGeneration() const { return endOfGeneration_; }
    size_t size() const { return pieces_.size(); }

private:
    std::vector<std::string> pieces_;  // "" for control tokens: never allowed
    std::array<std::vector<int32_t>, 256> byFirstByte_;
    std::vector<int32_t> endOfGeneration_;
};

class GrammarConstraint final : public TokenConstraint {
public:
    GrammarConstraint(std::shared_ptr<const JsonGrammar> grammar, std::shared_ptr<const TokenPieces> pieces);
    size_t mask(std::span<float> logits, int32_t remaining) override;
    void accept(int32_t id) override;

    // The tokens allowed next (for tests); `remaining` as in mask().
    std::vector<int32_t> allowed(int32_t remaining);

private:
    // A grammar with a trigger waits (every token allowed) until the text ends with it.
    void watchForTrigger(std::string_view piece);

    std::shared_ptr<const JsonGrammar> grammar_;
    std::shared_ptr<const TokenPieces> pieces_;
    bool active_;
    std::string tail_;  // lazily: the last bytes written, for the trigger
    JsonMatcher matcher_;
    JsonMatcher scratch_;
    std::vector<uint8_t> allowed_;
};

}  // namespace zinc::serve
