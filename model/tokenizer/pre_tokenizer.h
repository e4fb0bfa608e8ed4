#pragma once
// The regex pre-tokenizer of byte-level BPE vocabularies: splits text into "words" that BPE
// merges never cross. Which regex applies is named by tokenizer.ggml.pre, the same names
// llama.cpp's converter writes. The patterns are run by PCRE2 in UTF + UCP mode, so \p{L},
// \p{N}, \s and the (?!\S) look-ahead mean what the Hugging Face tokenizers mean by them.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zinc::model {

// One family of split regexes, as tokenizer.ggml.pre names it.
struct PreTokenizerSpec {
    std::string regex;           // PCRE2 syntax
    bool ignoreMerges = false;   // a word that is itself a token is taken whole (llama-3)
    bool addBosByDefault = false;
};

// The spec for a tokenizer.ggml.pre value; nullopt for names this runtime does not know.
// "default" and "gpt-2" are GPT-2's regex; "llama3"/"llama-v3"/"llama-bpe" Llama 3's;
// "qwen2" Qwen2's (Qwen2/2.5/3); "qwen35" Qwen3.5's (Qwen2's with combining marks kept on
// their letters). llama.cpp splits "default" with a different multi-regex chain, but GGUFs
// that say "default" for a byte-level vocab are GPT-2 style in practice, and guessing wider
// than that would silently mis-tokenize, so other names are refused by the caller.
std::optional<PreTokenizerSpec> preTokenizerSpec(std::string_view pre);

// The tokenizer.ggml.pre name for a Hugging Face Split regex (as written in tokenizer.json),
// or nullopt when it is not one of the known families.
std::optional<std::string> preNameForHfRegex(std::string_view regex);

class PreTokenizer {
public:
    // Throws ModelError naming `pre` when it is unknown or its regex does not compile.
    explicit PreTokenizer(std::string_view pre);
    ~PreTokenizer();
    PreTokenizer(const PreTokenizer&) = delete;
    PreTokenizer& operator=(const PreTokenizer&) = delete;

    bool ignoreMerges() const { return spec_.ignoreMerges; }

    // `text` must be valid UTF-8 (PCRE2 in UTF mode requires it; the caller sanitises).
    // Returns consecutive pieces covering the whole text: each regex match, and any text
    // between matches as a piece of its own (as Hugging Face's "Isolated" split does).
    std::vector<std::string_view> split(std::string_view text) const;

private:
    struct Compiled;
    PreTokenizerSpec spec_;
    std::unique_ptr<Compiled> compiled_;
    std::string pre_;
};

}  // namespace zinc::model
