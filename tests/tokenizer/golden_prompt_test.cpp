// The reference goldens were produced by llama.cpp from `text` lines: each model's own
// tokenizer, with special tokens added as the model asks (llama_tokenize(add_special = true,
// parse_special = false)), must give exactly the `prompt` ids.
#include <gtest/gtest.h>

#include "tests/test_paths.h"
#include "tests/tokenizer/test_support.h"

namespace zinc::test {
namespace {

struct GoldenCase {
    const char* golden;
    const char* model;
};

class GoldenPromptTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenPromptTest, TextTokenizesToPrompt) {
    const auto golden = readGoldenPrompt(sharedPath(std::string("reference/") + GetParam().golden));
    ASSERT_TRUE(golden.hasText);
    ASSERT_FALSE(golden.prompt.empty());
    const auto& tok = ggufTokenizer(std::string("models/") + GetParam().model);
    EXPECT_EQ(tok.encode(golden.text, /*addSpecial=*/true, /*parseSpecial=*/false), golden.prompt)
        << "text '" << golden.text << "'";
    // And back: decoding the prompt (BOS skipped) gives the text again.
    EXPECT_EQ(tok.decode(golden.prompt, /*skipSpecial=*/true), golden.text);
}

INSTANTIATE_TEST_SUITE_P(Models, GoldenPromptTest,
                         ::testing::Values(GoldenCase{"stories260K.golden", "stories260K.gguf"},
                                           GoldenCase{"qwen3-tiny.golden", "qwen3-tiny.gguf"},
                                           GoldenCase{"qwen3moe-tiny.golden", "qwen3moe-tiny.gguf"},
                                           GoldenCase{"qwen35moe-tiny.golden", "qwen35moe-tiny.gguf"}),
                         [](const auto& info) {
                             std::string name = info.param.model;
                             name = name.substr(0, name.find('.'));
                             for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                             return name;
                         });

// llama-2-tiny-random.golden has no text line; its prompt is "Hello, how are you" with BOS.
TEST(GoldenPrompt, Llama2TinyRandomPromptRoundTrips) {
    const auto golden = readGoldenPrompt(sharedPath("reference/llama-2-tiny-random.golden"));
    const auto& tok = ggufTokenizer("models/llama-2-tiny-random.gguf");
    const std::string text = tok.decode(golden.prompt, /*skipSpecial=*/true);
    EXPECT_EQ(text, "Hello, how are you");
    EXPECT_EQ(tok.encode(text, true, false), golden.prompt);
}

// What the forward pass relies on: BOS defaults and end-of-generation ids of the shared models.
TEST(GoldenPrompt, SpecialTokensOfSharedModels) {
    const auto& stories = ggufTokenizer("models/stories260K.gguf");
    EXPECT_TRUE(stories.addsBos());
    EXPECT_EQ(stories.bos(), 1);
    EXPECT_EQ(stories.eos(), 2);
    EXPECT_TRUE(stories.isEndOfGeneration(2));
    EXPECT_FALSE(stories.isEndOfGeneration(1));

    const auto& llama2 = ggufTokenizer("models/llama-2-tiny-random.gguf");
    EXPECT_TRUE(llama2.addsBos());
    EXPECT_EQ(llama2.bos(), 1);
    EXPECT_EQ(llama2.endOfGenerationIds(), std::vector<int32_t>{2});

    const auto& qwen = ggufTokenizer("models/qwen3-tiny.gguf");
    EXPECT_FALSE(qwen.addsBos());
    EXPECT_EQ(qwen.bos(), 1022);
    EXPECT_EQ(qwen.eos(), 1023);
    EXPECT_EQ(qwen.endOfGenerationIds(), std::vector<int32_t>{1023});
}

}  // namespace
}  // namespace zinc::test
