#pragma once
// Shared helpers of the tokenizer tests: reading llama.cpp's vocab test vectors and the
// reference goldens, and loading each tokenizer once per test process (the 151k-token Qwen3
// tokenizer.json takes a few hundred ms to parse).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/tokenizer/tokenizer.h"

namespace zinc::test {

struct VocabVector {
    std::string text;
    std::vector<int32_t> ids;
};

// `<vocab>.inp` holds inputs separated by "\n__ggml_vocab_test__\n" (each input, including the
// last, is followed by the separator); `<vocab>.out` one line of expected ids per input. Read
// exactly as llama.cpp's test-tokenizer-0 reads them.
std::vector<VocabVector> readVocabVectors(const std::string& inpPath, const std::string& outPath);

struct GoldenPrompt {
    bool hasText = false;
    std::string text;             // everything after "text " on the line, spaces included
    std::vector<int32_t> prompt;  // the "prompt" line
};
GoldenPrompt readGoldenPrompt(const std::string& goldenPath);

std::vector<int32_t> parseIds(const std::string& line);

// Cached per process; paths are relative to ../shared.
const model::Tokenizer& ggufTokenizer(const std::string& sharedRelativePath);
const model::Tokenizer& qwen3Tokenizer();  // qwen3-tokenizer/tokenizer.json.gz + config
const model::TokenizerData& qwen3TokenizerData();

bool isValidUtf8(const std::string& s);

// English, emoji, CJK, Cyrillic and indented code, repeated to at least `bytes` bytes: the
// performance test's and tokenizer_bench's mixed text.
std::string mixedText(size_t bytes);

}  // namespace zinc::test
