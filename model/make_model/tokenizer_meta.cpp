#include "model/make_model/tokenizer_meta.h"

#include "model/model_error.h"
#include "model/tokenizer/byte_level.h"

namespace zinc::model {
namespace {

constexpr float kPadScore = -1000.0f;  // convert_hf_to_gguf.py's score for SPM padding

void checkConsistent(const TokenizerData& t) {
    const size_t n = t.tokens.size();
    if (n == 0) throw ModelError("tokenizer: no tokens");
    if (!t.scores.empty() && t.scores.size() != n)
        throw ModelError("tokenizer: " + std::to_string(t.scores.size()) + " scores for " + std::to_string(n) + " tokens");
    if (!t.tokenTypes.empty() && t.tokenTypes.size() != n) {
        throw ModelError("tokenizer: " + std::to_string(t.tokenTypes.size()) + " token types for " +
                         std::to_string(n) + " tokens");
    }
    const std::pair<const char*, int32_t> ids[] = {
        {"bos", t.bos}, {"eos", t.eos}, {"unk", t.unk}, {"pad", t.pad}, {"eot", t.eot}};
    for (const auto& [what, id] : ids) {
        if (id >= static_cast<int64_t>(n))
            throw ModelError(std::string("tokenizer: ") + what + " id " + std::to_string(id) + " is out of range");
    }
}

void addTokenId(GgufWriter& w, const char* key, int32_t id) {
    if (id >= 0) w.addU32(key, static_cast<uint32_t>(id));
}

}  // namespace

void writeTokenizerMetadata(GgufWriter& w, const TokenizerData& t) {
    checkConsistent(t);
    w.addString("tokenizer.ggml.model", t.kind == TokenizerKind::Bpe ? "gpt2" : "llama");
    w.addString("tokenizer.ggml.pre", t.pre);
    w.addStringArray("tokenizer.ggml.tokens", t.tokens);
    if (!t.scores.empty()) w.addF32Array("tokenizer.ggml.scores", t.scores);
    if (!t.tokenTypes.empty()) w.addI32Array("tokenizer.ggml.token_type", t.tokenTypes);
    if (!t.merges.empty()) w.addStringArray("tokenizer.ggml.merges", t.merges);
    addTokenId(w, "tokenizer.ggml.bos_token_id", t.bos);
    addTokenId(w, "tokenizer.ggml.eos_token_id", t.eos);
    addTokenId(w, "tokenizer.ggml.unknown_token_id", t.unk);
    addTokenId(w, "tokenizer.ggml.padding_token_id", t.pad);
    addTokenId(w, "tokenizer.ggml.eot_token_id", t.eot);
    w.addBool("tokenizer.ggml.add_bos_token", t.addBos);
    w.addBool("tokenizer.ggml.add_eos_token", t.addEos);
    if (t.kind == TokenizerKind::Spm) w.addBool("tokenizer.ggml.add_space_prefix", t.addSpacePrefix);
    if (!t.chatTemplate.empty()) w.addString("tokenizer.chat_template", t.chatTemplate);
}

TokenizerData builtinByteLevelTokenizer(const std::string& pre, size_t maxMerges) {
    TokenizerData t;
    t.kind = TokenizerKind::Bpe;
    t.pre = pre;
    t.addSpacePrefix = false;
    for (int b = 0; b < 256; ++b) t.tokens.push_back(byte_level::byteToSymbol(static_cast<uint8_t>(b)));
    // English letters by frequency: space+letter first, then letter pairs, most frequent first.
    const std::string letters = "etaoinshrdlcumwfgypbvkjxqz";
    const std::string space = byte_level::byteToSymbol(' ');
    auto addMerge = [&](const std::string& left, const std::string& right) {
        if (t.merges.size() >= maxMerges) return;
        t.merges.push_back(left + " " + right);
        t.tokens.push_back(left + right);
    };
    for (char c : letters) addMerge(space, std::string(1, c));
    for (size_t sum = 0; sum <= 2 * (letters.size() - 1); ++sum) {
        for (size_t i = 0; i < letters.size(); ++i) {
            const size_t j = sum - i;
            if (j < letters.size() && i <= sum) addMerge(std::string(1, letters[i]), std::string(1, letters[j]));
        }
    }
    t.tokenTypes.assign(t.tokens.size(), static_cast<int32_t>(TokenType::Normal));
    t.bos = static_cast<int32_t>(t.tokens.size());
    t.tokens.push_back("<|bos|>");
    t.eos = static_cast<int32_t>(t.tokens.size());
    t.tokens.push_back("<|eos|>");
    t.tokenTypes.resize(t.tokens.size(), static_cast<int32_t>(TokenType::Control));
    t.addBos = pre == "llama-bpe";
    return t;
}

void padVocabulary(TokenizerData& t, size_t vocabSize) {
    if (t.tokenTypes.empty()) t.tokenTypes.assign(t.tokens.size(), static_cast<int32_t>(TokenType::Normal));
    const bool hasScores = !t.scores.empty();
    for (size_t id = t.tokens.size(); id < vocabSize; ++id) {
        t.tokens.push_back("[PAD" + std::to_string(id) + "]");
        t.tokenTypes.push_back(static_cast<int32_t>(TokenType::Unused));
        if (hasScores) t.scores.push_back(kPadScore);
    }
}

}  // namespace zinc::model
