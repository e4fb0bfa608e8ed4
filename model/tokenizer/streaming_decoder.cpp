#include "model/tokenizer/tokenizer.h"
#include "model/tokenizer/utf8.h"

namespace zinc::model {

StreamingDecoder::StreamingDecoder(const Tokenizer& tokenizer, bool skipSpecial, bool atTextStart)
    : tokenizer_(&tokenizer), skipSpecial_(skipSpecial) {
    reset(atTextStart);
}

void StreamingDecoder::reset(bool atTextStart) {
    stripSpace_ = atTextStart && tokenizer_->addsSpacePrefix();
    pending_.clear();
}

std::string StreamingDecoder::push(int32_t id) {
    std::string piece = tokenizer_->tokenToPiece(id, !skipSpecial_);
    if (piece.empty()) return {};
    if (stripSpace_ && piece.front() == ' ') piece.erase(0, 1);
    stripSpace_ = false;
    pending_ += piece;
    // Hold back only a tail that more bytes could still complete; everything before it is
    // final. The tail starts with a lead byte, so no sequence spans the cut and replacing
    // invalid bytes chunk by chunk gives the same text as replacing them in the whole.
    const size_t hold = utf8::incompleteTailLength(pending_);
    std::string ready = utf8::sanitize(std::string_view(pending_).substr(0, pending_.size() - hold),
                                       utf8::Substitution::MaximalSubpart);
    pending_.erase(0, pending_.size() - hold);
    return ready;
}

std::string StreamingDecoder::finish() {
    std::string rest = utf8::sanitize(pending_, utf8::Substitution::MaximalSubpart);
    pending_.clear();
    return rest;
}

}  // namespace zinc::model
