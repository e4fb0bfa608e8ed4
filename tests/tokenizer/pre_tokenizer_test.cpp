// The split regexes per tokenizer.ggml.pre family, checked on the cases where they differ.
#include <gtest/gtest.h>

#include "model/model_error.h"
#include "model/tokenizer/pre_tokenizer.h"

namespace zinc::test {
namespace {

using Pieces = std::vector<std::string>;

Pieces split(std::string_view pre, std::string_view text) {
    const model::PreTokenizer p(pre);
    Pieces out;
    for (auto piece : p.split(text)) out.emplace_back(piece);
    return out;
}

TEST(PreTokenizer, Gpt2) {
    // \s+(?!\S) leaves the last blank before a word to \s+ on its own.
    EXPECT_EQ(split("gpt-2", "Hello world's  x\n\n12345"),
              (Pieces{"Hello", " world", "'s", " ", " x", "\n", "\n", "12345"}));
    EXPECT_EQ(split("default", "a\tb"), (Pieces{"a", "\t", "b"}));
}

TEST(PreTokenizer, Llama3GroupsDigitsByThree) {
    EXPECT_EQ(split("llama-bpe", "12345 I'M ok\n\n"), (Pieces{"123", "45", " I", "'M", " ok", "\n\n"}));
    EXPECT_EQ(split("llama3", "12345"), split("llama-v3", "12345"));
}

TEST(PreTokenizer, Qwen2SplitsEveryDigit) {
    EXPECT_EQ(split("qwen2", "12345 ok"), (Pieces{"1", "2", "3", "4", "5", " ok"}));
    // A combining mark is not a letter: it starts a new piece.
    EXPECT_EQ(split("qwen2", "e\xCC\x81x"), (Pieces{"e", "\xCC\x81x"}));
}

TEST(PreTokenizer, Qwen35KeepsCombiningMarksWithTheirLetters) {
    EXPECT_EQ(split("qwen35", "e\xCC\x81x 12"), (Pieces{"e\xCC\x81x", " ", "1", "2"}));
}

TEST(PreTokenizer, PiecesCoverTheText) {
    const std::string text = "  mixed\t\t text, 🚀 with 1234 \r\n\r\n end  ";
    for (const char* pre : {"gpt-2", "llama-bpe", "qwen2", "qwen35"}) {
        std::string joined;
        for (const auto& piece : split(pre, text)) joined += piece;
        EXPECT_EQ(joined, text) << pre;
    }
}

TEST(PreTokenizer, UnknownPreThrowsNamingIt) {
    try {
        model::PreTokenizer p("deepseek-coder");
        FAIL() << "expected ModelError";
    } catch (const model::ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("'deepseek-coder'"), std::string::npos) << e.what();
    }
}

TEST(PreTokenizer, HfRegexDetection) {
    EXPECT_EQ(model::preNameForHfRegex(
                  R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
              "qwen2");
    EXPECT_EQ(model::preNameForHfRegex(
                  R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
              "llama-bpe");
    EXPECT_EQ(model::preNameForHfRegex(R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)"),
              "gpt-2");
    EXPECT_EQ(model::preNameForHfRegex(R"(\p{N}{1,3})"), std::nullopt);
}

}  // namespace
}  // namespace zinc::test
