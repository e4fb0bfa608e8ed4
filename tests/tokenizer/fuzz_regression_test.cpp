// Inputs the fuzz targets (tests/fuzz) found, kept as bytes, with what they showed.
#include <gtest/gtest.h>

#include "tests/tokenizer/test_support.h"

namespace zinc::test {
namespace {

// fuzz_tokenizer, phi-3 (SPM): text after a user-defined token ("</s>" is one in Phi-3's
// vocabulary) gets SPM's space prefix, as llama.cpp's SPM tokenizer gives it to every raw-text
// fragment after a special token (is_prev_special in llama_vocab's tokenize). So decode(encode)
// adds a space there: the behaviour is llama.cpp's and kept; the fuzz target's round-trip
// property excludes texts with user-defined tokens.
TEST(FuzzRegression, SpmSpacePrefixAfterAUserDefinedToken) {
    const auto& tok = ggufTokenizer("models/llama.cpp-vocab/ggml-vocab-phi-3.gguf");
    const std::string text("\x11V\0                   $                </s> ", 44);
    const std::vector<int32_t> ids = tok.encode(text, true, false);
    EXPECT_EQ(ids, (std::vector<int32_t>{1, 29871, 20, 29963, 3, 462, 259, 395, 462, 2, 259}));
    EXPECT_EQ(tok.tokenType(2), model::TokenType::UserDefined);
    EXPECT_EQ(tok.decode(ids, true), text + " ");
}

}  // namespace
}  // namespace zinc::test
