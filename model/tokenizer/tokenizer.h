#pragma once
// Text <-> token ids for the two vocabulary kinds GGUF models use: SentencePiece-style
// ("llama", scores + byte fallback) and byte-level BPE ("gpt2", merges + a regex
// pre-tokenizer). Encoding matches llama.cpp's llama_tokenize token for token; see
// tests/tokenizer for the vectors that prove it.
//
// A Tokenizer is immutable after construction; encode/decode may run on several threads.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/tokenizer/tokenizer_data.h"

namespace zinc::model {

class Vocab;
class BpeEncoder;

class Tokenizer {
public:
    // Throws ModelError when the data is inconsistent (duplicate tokens, special ids out of
    // range while they are to be added, an unknown BPE pre-tokenizer...).
    explicit Tokenizer(const TokenizerData& data);
    ~Tokenizer();
    Tokenizer(Tokenizer&&) noexcept;
    Tokenizer& operator=(Tokenizer&&) noexcept;

    // addSpecial: prepend BOS / append EOS where the model asks for them (addsBos/addsEos).
    // parseSpecial: text equal to a control token (e.g. "<|im_start|>") becomes that token;
    // otherwise only user-defined tokens are split out, as llama.cpp does. Any bytes are
    // accepted; invalid UTF-8 never throws.
    std::vector<int32_t> encode(std::string_view text, bool addSpecial, bool parseSpecial) const;

    // The bytes one token stands for. Control and unknown tokens give "" unless renderSpecial;
    // user-defined tokens give their text; out-of-range ids give "". A piece may be a part of a
    // UTF-8 sequence (byte tokens): use StreamingDecoder to print generated text.
    std::string tokenToPiece(int32_t id, bool renderSpecial = false) const;

    // The concatenated pieces; with an SPM space prefix the first piece loses its leading space,
    // so decode(encode(x)) == x. Returns raw bytes (not necessarily valid UTF-8). Unlike
    // llama.cpp, GPT-2's clean_up_tokenization_spaces is not applied: it would break the
    // round trip and cannot be applied consistently while streaming.
    std::string decode(std::span<const int32_t> ids, bool skipSpecial = true) const;

    TokenizerKind kind() const { return kind_; }
    const std::string& pre() const { return pre_; }
    int32_t vocabSize() const;
    int32_t bos() const { return bos_; }  // -1 when the vocabulary has none
    int32_t eos() const { return eos_; }
    int32_t eot() const { return eot_; }  // end of turn; from the GGUF key or found by its text
    int32_t unk() const { return unk_; }
    int32_t pad() const { return pad_; }
    bool addsBos() const { return addBos_; }
    bool addsEos() const { return addEos_; }
    bool addsSpacePrefix() const { return addSpacePrefix_; }
    const std::string& chatTemplate() const { return chatTemplate_; }

    // Throws ModelError for out-of-range ids.
    const std::string& tokenText(int32_t id) const;
    TokenType tokenType(int32_t id) const;  // Undefined for out-of-range ids
    // -1 when no token has exactly this text.
    int32_t findToken(std::string_view text) const;
    bool isControl(int32_t id) const;
    // EOS, EOT and every token whose text marks the end of a turn (<|im_end|>, <|eot_id|>,
    // <|endoftext|>, <|end|>, <end_of_turn>, ...): generation stops on any of them.
    bool isEndOfGeneration(int32_t id) const;
    const std::vector<int32_t>& endOfGenerationIds() const { return eogIds_; }

private:
    struct Fragment {
        int32_t token;  // -1 for raw text
        size_t offset;
        size_t length;
    };
    std::vector<Fragment> splitSpecialTokens(std::string_view text, bool parseSpecial) const;
    void findEndOfGenerationTokens();

    std::unique_ptr<Vocab> vocab_;
    std::unique_ptr<BpeEncoder> bpe_;
    TokenizerKind kind_;
    std::string pre_;
    int32_t bos_, eos_, eot_, unk_, pad_;
    bool addBos_, addEos_, addSpacePrefix_;
    std::string chatTemplate_;
    std::vector<int32_t> specialTokens_;  // control, user-defined, unknown; longest text first
    std::vector<int32_t> eogIds_;         // sorted
};

// Turns generated ids into text one id at a time, emitting only complete UTF-8: a piece that
// ends inside a multi-byte character is held back until the rest arrives. Every returned chunk
// is valid UTF-8 (bytes that can never complete become U+FFFD), and the concatenation of all
// chunks plus finish() equals Tokenizer::decode of the same ids whenever that is valid UTF-8.
class StreamingDecoder {
public:
    // atTextStart: the ids begin the text (as decode() assumes), so an SPM space prefix is
    // stripped from the first piece. Pass false when continuing after a prompt, where the
    // leading space of the first generated word belongs to the output.
    explicit StreamingDecoder(const Tokenizer& tokenizer, bool skipSpecial = true, bool atTextStart = true);

    // Text that became complete with this id (may be empty).
    std::string push(int32_t id);
    // Flushes what is held back; an unfinished character becomes one U+FFFD.
    std::string finish();
    void reset(bool atTextStart = true);

private:
    const Tokenizer* tokenizer_;
    bool skipSpecial_;
    bool stripSpace_;
    std::string pending_;
};

}  // namespace zinc::model
