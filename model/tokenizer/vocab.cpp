#include "model/tokenizer/vocab.h"


#include "model/model_error.h"

namespace zinc::model {

namespace {

// 0xFF never occurs in UTF-8, so it cannot be confused with a byte of either side.
constexpr char kMergeSeparator = '\xFF';

TokenType toTokenType(int32_t raw) {
    // Values outside llama_token_type are treated like llama.cpp does: as undefined.
    return (raw >= 0 && raw <= 6) ? static_cast<TokenType>(raw) : TokenType::Undefined;
}

const std::string& textKey(std::string_view left, std::string_view right, std::string& scratch) {
    scratch.assign(left);
    scratch += kMergeSeparator;
    scratch.append(right);
    return scratch;
}

int hexDigit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

}  // namespace

Vocab::Vocab(const TokenizerData& data) {
    const size_t n = data.tokens.size();
    if (n == 0) throw ModelError("tokenizer has no tokens (tokenizer.ggml.tokens is empty)");
    if (n > static_cast<size_t>(INT32_MAX)) throw ModelError("tokenizer has too many tokens");
    if (!data.scores.empty() && data.scores.size() != n) {
        throw ModelError("tokenizer.ggml.scores has " + std::to_string(data.scores.size()) +
                         " entries for " + std::to_string(n) + " tokens");
    }
    if (!data.tokenTypes.empty() && data.tokenTypes.size() != n) {
        throw ModelError("tokenizer.ggml.token_type has " + std::to_string(data.tokenTypes.size()) +
                         " entries for " + std::to_string(n) + " tokens");
    }
    texts_ = data.tokens;
    scores_ = data.scores.empty() ? std::vector<float>(n, 0.0f) : data.scores;
    types_.resize(n, TokenType::Normal);
    for (size_t i = 0; i < data.tokenTypes.size(); ++i) types_[i] = toTokenType(data.tokenTypes[i]);

    ids_.reset(n);
    for (size_t i = 0; i < n; ++i) {
        // An empty text could never be matched and would make special-token search loop;
        // llama.cpp renames such entries the same way.
        if (texts_[i].empty()) texts_[i] = "[EMPTY_" + std::to_string(i) + "]";
        const int32_t first = ids_.insert(texts_[i], static_cast<int32_t>(i), texts_);
        if (first != static_cast<int32_t>(i)) {
            throw ModelError("duplicate token in vocabulary: '" + texts_[i] + "' has ids " + std::to_string(first) +
                             " and " + std::to_string(i));
        }
    }

    mergeRanks_.reset(data.merges.size());
    std::string scratch;
    for (size_t i = 0; i < data.merges.size(); ++i) {
        const std::string_view merge = data.merges[i];
        // Split at the first space after the first byte, as llama.cpp does, so a merge whose
        // left side is a lone space (SPM-style vocabularies) still parses.
        const size_t space = merge.find(' ', 1);
        if (space == std::string_view::npos) {
            throw ModelError("tokenizer.ggml.merges[" + std::to_string(i) + "] = '" + std::string(merge) +
                             "' is not of the form 'left right'");
        }
        const std::string_view left = merge.substr(0, space);
        const std::string_view right = merge.substr(space + 1);
        const int32_t leftId = find(left);
        const int32_t rightId = find(right);
        // The first occurrence of a pair wins, as llama.cpp's emplace does.
        if (leftId >= 0 && rightId >= 0) {
            mergeRanks_.insert(leftId, rightId, static_cast<int32_t>(i));
        } else {
            textMergeRanks_.emplace(textKey(left, right, scratch), static_cast<int32_t>(i));
        }
    }
    mergeCount_ = data.merges.size();

    static constexpr char kHex[] = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) {
        const char hex[7] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>', 0};
        int32_t id = find(hex);
        if (id < 0) id = find(std::string(1, static_cast<char>(b)));
        byteTokens_[b] = id;
    }
}

int32_t Vocab::find(std::string_view text) const { return ids_.find(text, texts_); }

int32_t Vocab::mergeRank(std::string_view left, std::string_view right, std::string& scratch) const {
    const int32_t leftId = find(left);
    const int32_t rightId = find(right);
    if (leftId >= 0 && rightId >= 0) {
        if (const int32_t rank = mergeRanks_.find(leftId, rightId); rank >= 0) return rank;
    }
    if (textMergeRanks_.empty()) return -1;
    const auto it = textMergeRanks_.find(textKey(left, right, scratch));
    return it == textMergeRanks_.end() ? -1 : it->second;
}

int Vocab::byteOfToken(int32_t id) const {
    const std::string& t = texts_[id];
    if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
    const int hi = hexDigit(t[3]);
    const int lo = hexDigit(t[4]);
    return (hi < 0 || lo < 0) ? -1 : hi * 16 + lo;
}

}  // namespace zinc::model
