// What the tokenizer benchmark times (tokenizer_bench.cpp), checked for what it produces, not
// how fast: a few KB of mixed text, a 64 KB single "word" (BPE merges inside one pre-token; SPM
// over the whole text) and a 64 KB whitespace run encode to tokens that decode back to the text,
// and the 151k-token Qwen3 tokenizer builds. The times live in the benchmark and
// results/tokenizer.md; a quadratic merge queue would show there, and as this test's meson
// timeout, not as a bound in a test.
#include <gtest/gtest.h>

#include "tests/tokenizer/test_support.h"

namespace zinc::test {
namespace {

const model::Tokenizer& byName(const std::string& name) {
    if (name == "qwen3") return qwen3Tokenizer();
    return ggufTokenizer("models/llama.cpp-vocab/ggml-vocab-" + name + ".gguf");
}

// Encoded without special tokens and decoded, the text comes back (SPM's leading space, which
// the llama vocabulary adds, aside).
void expectRoundTrip(const model::Tokenizer& tok, const std::string& text, const std::string& name) {
    const std::vector<int32_t> ids = tok.encode(text, false, false);
    ASSERT_FALSE(ids.empty()) << name;
    EXPECT_LE(ids.size(), text.size()) << name << ": more tokens than bytes";
    std::string back = tok.decode(ids);
    if (back.size() == text.size() + 1 && back[0] == ' ') back.erase(0, 1);
    EXPECT_TRUE(back == text) << name << ": " << text.size() << " bytes came back as " << back.size();
}

TEST(Performance, MixedTextRoundTrips) {
    const std::string text = mixedText(4096);
    for (const std::string name : {"llama-spm", "gpt-2", "qwen3"}) expectRoundTrip(byName(name), text, name);
}

TEST(Performance, LongWordsAndRunsRoundTrip) {
    for (const std::string name : {"llama-spm", "gpt-2", "qwen3"}) {
        expectRoundTrip(byName(name), std::string(65536, 'a'), name + ", 64 KB word");
        expectRoundTrip(byName(name), std::string(65536, ' '), name + ", 64 KB of spaces");
    }
}

TEST(Performance, BuildsQwen3Tokenizer) {
    const auto& data = qwen3TokenizerData();
    model::Tokenizer tok(data);
    EXPECT_EQ(tok.encode("Hello world", false, false), qwen3Tokenizer().encode("Hello world", false, false));
}

}  // namespace
}  // namespace zinc::test
