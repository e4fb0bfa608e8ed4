#pragma once
// Everything a tokenizer needs, as plain data: read from GGUF metadata (`tokenizer.ggml.*`,
// the keys llama.cpp's converters write) or imported from a Hugging Face tokenizer.json so
// that make-model can write it into a GGUF file.
#include <cstdint>
#include <string>
#include <vector>

namespace zinc::model {

class GgufFile;

enum class TokenizerKind { Spm /* tokenizer.ggml.model = "llama" */, Bpe /* "gpt2" */ };

// Values of tokenizer.ggml.token_type (llama.cpp's llama_token_type).
enum class TokenType : int32_t {
    Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6,
};

struct TokenizerData {
    TokenizerKind kind = TokenizerKind::Spm;
    std::string pre = "default";        // tokenizer.ggml.pre: "default", "llama-bpe", "qwen2", "gpt-2"...
    std::vector<std::string> tokens;    // tokenizer.ggml.tokens
    std::vector<float> scores;          // tokenizer.ggml.scores (may be empty)
    std::vector<int32_t> tokenTypes;    // tokenizer.ggml.token_type (may be empty)
    std::vector<std::string> merges;    // tokenizer.ggml.merges, "left right" (BPE)
    int32_t bos = -1, eos = -1, unk = -1, pad = -1, eot = -1;
    bool addBos = false, addEos = false;
    bool addSpacePrefix = true;         // tokenizer.ggml.add_space_prefix (SPM)
    std::string chatTemplate;           // tokenizer.chat_template (may be empty)

    // Throws ModelError naming the file and key when the tokenizer metadata is missing or
    // inconsistent (e.g. scores of another length than tokens).
    static TokenizerData fromGguf(const GgufFile& file);
    // tokenizer.json (+ optional tokenizer_config.json for bos/eos/chat template), plain or
    // gzip-compressed (.gz). Throws ModelError naming the file.
    // Byte-level BPE only (a ByteLevel pre-tokenizer, after at most one Split regex that must
    // be GPT-2's, Llama 3's, Qwen2's or Qwen3.5's). Added tokens: special -> Control, else
    // UserDefined, except that <|...|> texts are Control as convert_hf_to_gguf.py makes them.
    // An NFC normalizer is accepted but not applied, as in llama.cpp. bos comes from
    // tokenizer_config.json or a TemplateProcessing post-processor.
    static TokenizerData fromHfTokenizerJson(const std::string& tokenizerJsonPath,
                                             const std::string& tokenizerConfigPath = {});
};

}  // namespace zinc::model
