#pragma once
// Tokenizer metadata for generated models: the tokenizer.ggml.* keys llama.cpp's converters
// write (gguf-py constants.py Keys.Tokenizer; convert_hf_to_gguf.py), a built-in byte-level
// BPE vocabulary for models made without a tokenizer.json, and vocabulary padding.
#include <cstddef>
#include <string>

#include "model/gguf/gguf_writer.h"
#include "model/tokenizer/tokenizer_data.h"

namespace zinc::model {

// tokenizer.ggml.model ("gpt2" / "llama"), .pre, .tokens, .scores and .token_type when present,
// .merges, the special token ids that are set, .add_bos_token, .add_eos_token,
// .add_space_prefix (SPM only) and tokenizer.chat_template when present. Throws ModelError when
// the data is inconsistent (array lengths, ids out of range).
void writeTokenizerMetadata(GgufWriter& writer, const TokenizerData& tokenizer);

// A small real byte-level BPE vocabulary: the 256 byte symbols of GPT-2's byte-to-unicode
// alphabet in byte order, merges of "Ġ"+letter and letter pairs (up to maxMerges), then the
// control tokens <|bos|> and <|eos|>. BOS is prepended only for the llama-bpe pre-tokenizer.
TokenizerData builtinByteLevelTokenizer(const std::string& pre, size_t maxMerges = 702);

// Appends "[PAD{id}]" tokens of type UNUSED (score -1000 when scores exist) up to vocabSize,
// as convert_hf_to_gguf.py pads a vocabulary to the model's vocab_size.
void padVocabulary(TokenizerData& tokenizer, size_t vocabSize);

}  // namespace zinc::model
