#pragma once
// SentencePiece-style BPE as llama.cpp runs "llama" vocabularies: start from UTF-8 characters
// and repeatedly merge the adjacent pair whose concatenation is the highest-scoring token.
#include <cstdint>
#include <string_view>
#include <vector>

namespace zinc::model {

class Vocab;

// Appends the tokens of `text` to `out`. `text` must already have its spaces escaped to U+2581
// (and the space prefix added where wanted). Characters that no token covers fall back to
// byte tokens (<0xXX>), then to `unk`; with neither, ModelError names the byte.
void spmEncode(const Vocab& vocab, std::string_view text, int32_t unk, std::vector<int32_t>& out);

}  // namespace zinc::model
