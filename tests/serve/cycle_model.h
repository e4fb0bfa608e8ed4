#pragma once
// A test model whose output is known: llama-shaped, one layer that adds nothing (zero attention
// output and FFN down projections), so the logits depend on the last token alone. token_embd
// puts each token on one axis, output.weight maps that axis to the next token of a fixed cycle:
// whatever the prompt, the model says the cycle's tokens again and again. A real forward pass
// and a real tokenizer, with an answer the test can compute from the tokenizer alone.
#include <cstdint>
#include <string>
#include <vector>

#include "model/tokenizer/tokenizer_data.h"

namespace zinc::test {

// Writes the model to `path`. `cycle` holds distinct token ids (at most 63); the first is said
// after any token outside the cycle.
void writeCycleModel(const std::string& path, const model::TokenizerData& tokenizer, const std::vector<int32_t>& cycle,
                     uint32_t contextLength);

}  // namespace zinc::test
