#include "tools/serve/grammar_constraint.h"

#include <limits>

namespace zinc::serve {

TokenPieces::TokenPieces(const model::Tokenizer& tokenizer) {
    const int32_t n = tokenizer.vocabSize();
    pieces_.resize(static_cast<size_t>(n));
    for (int32_t id = 0; id < n; ++id) {
        if (tokenizer.isEndOfGeneration(id)) endOfGeneration_.push_back(id);
        if (tokenizer.isControl(id)) continue;
        std::string piece = tokenizer.tokenToPiece(id);
        if (piece.empty()) continue;
        byFirstByte_[static_cast<uint8_t>(piece[0])].push_back(id);
        pieces_[static_cast<size_t>(id)] = std::move(piece);
    }
}

GrammarConstraint::GrammarConstraint(std::shared_ptr<const JsonGrammar> grammar, std::shared_ptr<const TokenPieces> pieces)
    : grammar_(grammar), pieces_(std::move(pieces)), active_(grammar->trigger.empty()), matcher_(grammar), scratch_(grammar),
      allowed_(pieces_->size()) {}

std::vector<int32_t> GrammarConstraint::allowed(int32_t remaining) {
    std::vector<int32_t> ids;
    std::fill(allowed_.begin(), allowed_.end(), 0);
    if (matcher_.complete()) {
        ids = pieces_->endOfGeneration();
        if (matcher_.closed()) return ids;  // else a top-level number or literal that may go on
    }
    for (int b = 0; b < 256; ++b) {
        scratch_ = matcher_;
        if (!scratch_.feed(static_cast<uint8_t>(b))) continue;  // no token starting with b can follow
        for (int32_t id : pieces_->startingWith(static_cast<uint8_t>(b))) {
            const std::string& piece = pieces_->piece(id);
            scratch_ = matcher_;
            if (!scratch_.feed(piece)) continue;
            if (scratch_.shortestCompletion() > remaining - 1) continue;  // it would not close in time
            ids.push_back(id);
        }
    }
    return ids;
}

size_t GrammarConstraint::mask(std::span<float> logits, int32_t remaining) {
    if (!active_) return logits.size();
    const std::vector<int32_t> ids = allowed(remaining);
    for (int32_t id : ids)
        if (static_cast<size_t>(id) < allowed_.size()) allowed_[static_cast<size_t>(id)] = 1;
    for (size_t i = 0; i < logits.size(); ++i)
        if (i >= allowed_.size() || !allowed_[i]) logits[i] = -std::numeric_limits<float>::infinity();
    return ids.size();
}

void GrammarConstraint::accept(int32_t id) {
    if (static_cast<size_t>(id) >= pieces_->size()) return;
    const std::string& piece = pieces_->piece(id);
    if (!active_) return watchForTrigger(piece);
    for (size_t i = 0; i < piece.size(); ++i) {
        if (!matcher_.feed(static_cast<uint8_t>(piece[i]))) return;  // the mask allowed only what it accepts
        if (matcher_.closed() && !grammar_->trigger.empty()) {  // this call is done: wait for the next
            active_ = false;
            matcher_ = JsonMatcher(grammar_);
            tail_.clear();
            return watchForTrigger(std::string_view(piece).substr(i + 1));
        }
    }
}

void GrammarConstraint::watchForTrigger(std::string_view piece) {
    tail_ += piece;
    const std::string& trigger = grammar_->trigger;
    const size_t at = tail_.find(trigger);
    if (at == std::string::npos) {
        if (tail_.size() >= trigger.size()) tail_.erase(0, tail_.size() - (trigger.size() - 1));
        return;
    }
    active_ = true;
    const std::string after = tail_.substr(at + trigger.size());
    tail_.clear();
    for (char c : after) {
        if (!matcher_.feed(static_cast<uint8_t>(c))) {  // the model went its own way within one token
            active_ = false;
            matcher_ = JsonMatcher(grammar_);
            return;
        }
    }
}

}  // namespace zinc::serve
