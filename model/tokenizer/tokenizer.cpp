#include "model/tokenizer/tokenizer.h"

#include <algorithm>

#include "model/model_error.h"
#include "model/tokenizer/bpe_encoder.h"
#include "model/tokenizer/byte_level.h"
#include "model/tokenizer/spm_encoder.h"
#include "model/tokenizer/vocab.h"

namespace zinc::model {

namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// Texts of tokens that end a turn, in the order llama.cpp's converters and loader look for
// them. The first one present becomes eot() when the file names none.
constexpr std::string_view kEndOfTurnTexts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
};
// Further tokens that also stop generation.
constexpr std::string_view kOtherEndOfGenerationTexts[] = {"<|eom_id|>", "<end_of_utterance>"};

// Appends `s` to `out` with every `from` replaced by `to`.
void appendReplacing(std::string& out, std::string_view s, std::string_view from, std::string_view to) {
    size_t pos = 0;
    for (size_t hit = s.find(from); hit != std::string_view::npos; hit = s.find(from, pos)) {
        out.append(s.substr(pos, hit - pos));
        out.append(to);
        pos = hit + from.size();
    }
    out.append(s.substr(pos));
}

bool isSpecialType(TokenType t) {
    return t == TokenType::Control || t == TokenType::UserDefined || t == TokenType::Unknown;
}

}  // namespace

Tokenizer::Tokenizer(const TokenizerData& data)
    : vocab_(std::make_unique<Vocab>(data)),
      kind_(data.kind),
      pre_(data.pre),
      bos_(data.bos),
      eos_(data.eos),
      eot_(data.eot),
      unk_(data.unk),
      pad_(data.pad),
      addBos_(data.addBos),
      addEos_(data.addEos),
      addSpacePrefix_(data.kind == TokenizerKind::Spm && data.addSpacePrefix),
      chatTemplate_(data.chatTemplate) {
    // Out-of-range special ids are dropped (llama.cpp warns and does the same); being asked to
    // add a BOS or EOS that does not exist is an error, since every prompt would be wrong.
    for (int32_t* id : {&bos_, &eos_, &eot_, &unk_, &pad_}) {
        if (!vocab_->contains(*id)) *id = -1;
    }
    if (addBos_ && bos_ < 0) {
        throw ModelError("tokenizer.ggml.add_bos_token is true, but tokenizer.ggml.bos_token_id is not a valid token (" +
                         std::to_string(data.bos) + ")");
    }
    if (addEos_ && eos_ < 0) {
        throw ModelError("tokenizer.ggml.add_eos_token is true, but tokenizer.ggml.eos_token_id is not a valid token (" +
                         std::to_string(data.eos) + ")");
    }
    if (kind_ == TokenizerKind::Bpe) {
        if (data.merges.empty()) throw ModelError("BPE tokenizer without merges (tokenizer.ggml.merges)");
        bpe_ = std::make_unique<BpeEncoder>(*vocab_, pre_, unk_);
    }
    findEndOfGenerationTokens();

    for (int32_t id = 0; id < vocab_->size(); ++id) {
        if (isSpecialType(vocab_->type(id))) specialTokens_.push_back(id);
    }
    // Longer texts first, so "<|im_end|>" is not cut up by a shorter token it contains.
    std::stable_sort(specialTokens_.begin(), specialTokens_.end(), [&](int32_t a, int32_t b) {
        return vocab_->text(a).size() > vocab_->text(b).size();
    });
}

Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

void Tokenizer::findEndOfGenerationTokens() {
    std::vector<int32_t> eog;
    for (std::string_view text : kEndOfTurnTexts) {
        const int32_t id = vocab_->find(text);
        if (id < 0) continue;
        if (eot_ < 0) eot_ = id;
        eog.push_back(id);
    }
    for (std::string_view text : kOtherEndOfGenerationTexts) {
        if (const int32_t id = vocab_->find(text); id >= 0) eog.push_back(id);
    }
    // A token that ends generation must not be printed as text: llama.cpp makes such tokens
    // control tokens when a converter forgot to.
    for (int32_t id : eog) {
        if (vocab_->type(id) != TokenType::Control) vocab_->setType(id, TokenType::Control);
    }
    if (eos_ >= 0) eog.push_back(eos_);
    if (eot_ >= 0) eog.push_back(eot_);
    std::sort(eog.begin(), eog.end());
    eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
    eogIds_ = std::move(eog);
}

std::vector<Tokenizer::Fragment> Tokenizer::splitSpecialTokens(std::string_view text, bool parseSpecial) const {
    std::vector<Fragment> fragments;
    if (text.empty()) return fragments;
    fragments.push_back({-1, 0, text.size()});
    std::vector<Fragment> next;
    for (int32_t id : specialTokens_) {
        // Without parseSpecial, control and unknown texts stay plain text, but user-defined
        // tokens are still matched first (Hugging Face's added-token behaviour).
        if (!parseSpecial && vocab_->type(id) != TokenType::UserDefined) continue;
        const std::string& special = vocab_->text(id);
        next.clear();
        bool found = false;
        for (const Fragment& f : fragments) {
            if (f.token >= 0) {
                next.push_back(f);
                continue;
            }
            const std::string_view raw = text.substr(f.offset, f.length);
            size_t from = 0;
            for (size_t hit = raw.find(special); hit != std::string_view::npos; hit = raw.find(special, from)) {
                found = true;
                if (hit > from) next.push_back({-1, f.offset + from, hit - from});
                next.push_back({id, 0, 0});
                from = hit + special.size();
            }
            if (from < raw.size()) next.push_back({-1, f.offset + from, raw.size() - from});
        }
        if (found) fragments.swap(next);
    }
    return fragments;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool addSpecial, bool parseSpecial) const {
    std::vector<int32_t> out;
    out.reserve(text.size() / 3 + 2);
    if (addSpecial && addBos_) out.push_back(bos_);
    // SPM puts the space prefix on the first text and again after every special token, as
    // llama.cpp does (sentencepiece itself treats each text run as a new "sentence").
    bool afterSpecial = true;
    std::string escaped;
    for (const Fragment& f : splitSpecialTokens(text, parseSpecial)) {
        if (f.token >= 0) {
            out.push_back(f.token);
            afterSpecial = true;
            continue;
        }
        const std::string_view raw = text.substr(f.offset, f.length);
        if (kind_ == TokenizerKind::Spm) {
            escaped.clear();
            if (addSpacePrefix_ && afterSpecial) escaped.append(kSpmSpace);
            appendReplacing(escaped, raw, " ", kSpmSpace);
            spmEncode(*vocab_, escaped, unk_, out);
        } else {
            bpe_->encode(raw, out);
        }
        afterSpecial = false;
    }
    if (addSpecial && addEos_) out.push_back(eos_);
    return out;
}

std::string Tokenizer::tokenToPiece(int32_t id, bool renderSpecial) const {
    if (!vocab_->contains(id)) return {};
    const std::string& text = vocab_->text(id);
    switch (vocab_->type(id)) {
        case TokenType::Control:
        case TokenType::Unknown:
            return renderSpecial ? text : std::string();
        case TokenType::UserDefined:
            return text;
        case TokenType::Normal:
            if (kind_ == TokenizerKind::Bpe) return byte_level::decode(text);
            {
                std::string piece;
                appendReplacing(piece, text, kSpmSpace, " ");
                return piece;
            }
        case TokenType::Byte:
            if (const int byte = vocab_->byteOfToken(id); byte >= 0) return std::string(1, static_cast<char>(byte));
            return kind_ == TokenizerKind::Bpe ? byte_level::decode(text) : text;
        case TokenType::Undefined:
        case TokenType::Unused:
            break;  // render as nothing, like llama.cpp
    }
    return {};
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skipSpecial) const {
    std::string out;
    bool stripSpace = addSpacePrefix_;
    for (int32_t id : ids) {
        std::string piece = tokenToPiece(id, !skipSpecial);
        if (piece.empty()) continue;
        // The first text piece carries the space prefix encode() added; a BOS before it
        // renders as nothing (or as "<s>", which has no space to strip).
        if (stripSpace && piece.front() == ' ') piece.erase(0, 1);
        stripSpace = false;
        out += piece;
    }
    return out;
}

int32_t Tokenizer::vocabSize() const { return vocab_->size(); }

const std::string& Tokenizer::tokenText(int32_t id) const {
    if (!vocab_->contains(id)) {
        throw ModelError("token id " + std::to_string(id) + " is out of range (vocabulary has " +
                         std::to_string(vocab_->size()) + " tokens)");
    }
    return vocab_->text(id);
}

TokenType Tokenizer::tokenType(int32_t id) const {
    return vocab_->contains(id) ? vocab_->type(id) : TokenType::Undefined;
}

int32_t Tokenizer::findToken(std::string_view text) const { return vocab_->find(text); }

bool Tokenizer::isControl(int32_t id) const {
    return vocab_->contains(id) && vocab_->type(id) == TokenType::Control;
}

bool Tokenizer::isEndOfGeneration(int32_t id) const {
    return std::binary_search(eogIds_.begin(), eogIds_.end(), id);
}

}  // namespace zinc::model
