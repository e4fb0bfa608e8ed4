#pragma once
// Byte-level BPE as GPT-2 and its descendants (Llama 3, Qwen2/3) use it: split the text with
// the family's regex, map each word's bytes to GPT-2's printable alphabet, then apply merges in
// rank order inside each word.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace zinc::model {

class PreTokenizer;
class Vocab;

class BpeEncoder {
public:
    // Throws ModelError naming `pre` when it is not a known pre-tokenizer.
    BpeEncoder(const Vocab& vocab, std::string_view pre, int32_t unk);
    ~BpeEncoder();

    // Appends the tokens of `text` (any bytes: invalid UTF-8 becomes U+FFFD first, as in
    // llama.cpp) to `out`.
    void encode(std::string_view text, std::vector<int32_t>& out) const;

private:
    void encodeWord(std::string_view word, std::vector<int32_t>& out) const;

    const Vocab& vocab_;
    std::unique_ptr<PreTokenizer> preTokenizer_;
    int32_t unk_;
};

}  // namespace zinc::model
