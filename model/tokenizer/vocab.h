#pragma once
// The token table the encoders and decoders share: texts, types, scores, a text -> id hash
// map, BPE merge ranks and the byte-fallback tokens. Built once from TokenizerData.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/tokenizer/hash_index.h"
#include "model/tokenizer/tokenizer_data.h"

namespace zinc::model {

class Vocab {
public:
    // Throws ModelError on duplicate token texts or arrays of inconsistent lengths.
    explicit Vocab(const TokenizerData& data);
    // Not copyable: nothing needs it and the index would have to be rebuilt.
    Vocab(const Vocab&) = delete;
    Vocab& operator=(const Vocab&) = delete;

    int32_t size() const { return static_cast<int32_t>(texts_.size()); }
    bool contains(int32_t id) const { return id >= 0 && id < size(); }
    // -1 when no token has exactly this text.
    int32_t find(std::string_view text) const;
    // Preconditions: contains(id).
    const std::string& text(int32_t id) const { return texts_[id]; }
    TokenType type(int32_t id) const { return types_[id]; }
    float score(int32_t id) const { return scores_[id]; }
    void setType(int32_t id, TokenType type) { types_[id] = type; }

    // Rank of the BPE merge "left right" (lower merges first), -1 when there is none.
    // `scratch` is reused between calls to avoid an allocation per lookup.
    int32_t mergeRank(std::string_view left, std::string_view right, std::string& scratch) const;
    size_t mergeCount() const { return mergeCount_; }

    // SPM byte fallback: the token for a raw byte ("<0xXX>", else the one-byte text), -1 if none.
    int32_t byteToken(uint8_t byte) const { return byteTokens_[byte]; }
    // The byte an SPM byte token "<0xXX>" stands for, -1 for other tokens.
    int byteOfToken(int32_t id) const;

private:
    std::vector<std::string> texts_;
    std::vector<TokenType> types_;
    std::vector<float> scores_;
    TextIdIndex ids_;
    // Merges by the ids of their two sides. Merges with a side that is no token (never in real
    // vocabularies; Hugging Face rejects them) are kept by text, "left\xFFright", so they still
    // apply.
    PairRankIndex mergeRanks_;
    std::unordered_map<std::string, int32_t> textMergeRanks_;
    size_t mergeCount_ = 0;
    std::array<int32_t, 256> byteTokens_{};
};

}  // namespace zinc::model
