#include <gtest/gtest.h>

#include "model/model_error.h"
#include "model/tokenizer/chat_template.h"
#include "tests/tokenizer/test_support.h"

namespace zinc::test {
namespace {

using model::ChatMessage;
using model::ChatTemplateFamily;

const std::vector<ChatMessage> kConversation = {
    {"system", "You are a helpful assistant."},
    {"user", "What is 2+2?"},
};

std::string format(ChatTemplateFamily family, bool addGenerationPrompt = true, bool enableThinking = true) {
    return model::applyChatTemplate(family, kConversation, addGenerationPrompt, enableThinking);
}

TEST(ChatTemplate, RecognisesQwen3TemplateFromTokenizerConfig) {
    EXPECT_EQ(model::detectChatTemplate(qwen3TokenizerData().chatTemplate), ChatTemplateFamily::Qwen3);
}

TEST(ChatTemplate, RecognisesPhi3TemplateFromVocabGguf) {
    const auto& tok = ggufTokenizer("models/llama.cpp-vocab/ggml-vocab-phi-3.gguf");
    ASSERT_FALSE(tok.chatTemplate().empty());
    EXPECT_EQ(model::detectChatTemplate(tok.chatTemplate()), ChatTemplateFamily::Phi3);
}

TEST(ChatTemplate, RecognisesFamiliesByMarkers) {
    EXPECT_EQ(model::detectChatTemplate("{% for m in messages %}<|im_start|>{{ m.role }}..."), ChatTemplateFamily::ChatMl);
    EXPECT_EQ(model::detectChatTemplate("{{ '<|start_header_id|>' + role + '<|end_header_id|>' }}"),
              ChatTemplateFamily::Llama3);
    EXPECT_EQ(model::detectChatTemplate("{{ bos_token + '[INST] ' + content + ' [/INST]' }}"), ChatTemplateFamily::Llama2);
    EXPECT_EQ(model::detectChatTemplate("{{ '<start_of_turn>' + role + '\\n' }}"), ChatTemplateFamily::Gemma);
}

TEST(ChatTemplate, EmptyTemplateFallsBackToChatMl) {
    EXPECT_EQ(model::detectChatTemplate(""), ChatTemplateFamily::ChatMl);
    EXPECT_EQ(model::detectChatTemplate("  \n"), ChatTemplateFamily::ChatMl);
}

TEST(ChatTemplate, UnknownTemplateThrowsWithItsBeginning) {
    try {
        model::detectChatTemplate("{% for message in messages %}### Human: {{ message.content }}");
        FAIL() << "expected ModelError";
    } catch (const model::ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("unsupported chat template (starts with: {% for message in messages %}### Human"),
                  std::string::npos)
            << e.what();
    }
}

TEST(ChatTemplate, OverrideByName) {
    EXPECT_EQ(model::resolveChatTemplate("anything unknown", "gemma"), ChatTemplateFamily::Gemma);
    EXPECT_EQ(model::resolveChatTemplate(qwen3TokenizerData().chatTemplate, ""), ChatTemplateFamily::Qwen3);
    for (auto family : {ChatTemplateFamily::ChatMl, ChatTemplateFamily::Qwen3, ChatTemplateFamily::Llama3,
                        ChatTemplateFamily::Llama2, ChatTemplateFamily::Gemma, ChatTemplateFamily::Phi3}) {
        EXPECT_EQ(model::chatTemplateFromName(model::chatTemplateName(family)), family);
    }
    EXPECT_THROW(model::chatTemplateFromName("vicuna"), model::ModelError);
}

TEST(ChatTemplate, ChatMlFormat) {
    EXPECT_EQ(format(ChatTemplateFamily::ChatMl),
              "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
              "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
              "<|im_start|>assistant\n");
}

TEST(ChatTemplate, Qwen3FormatWithThinking) {
    EXPECT_EQ(format(ChatTemplateFamily::Qwen3, true, true),
              "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
              "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
              "<|im_start|>assistant\n");
}

TEST(ChatTemplate, Qwen3FormatWithoutThinkingAddsEmptyThinkBlock) {
    EXPECT_EQ(format(ChatTemplateFamily::Qwen3, true, false),
              "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
              "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
              "<|im_start|>assistant\n<think>\n\n</think>\n\n");
    // Without a generation prompt there is nothing to switch off.
    EXPECT_EQ(format(ChatTemplateFamily::Qwen3, false, false), format(ChatTemplateFamily::Qwen3, false, true));
}

TEST(ChatTemplate, Qwen3DropsReasoningOfEarlierTurnsAndKeepsTheLast) {
    const std::vector<ChatMessage> messages = {
        {"user", "Hi"},
        {"assistant", "<think>\nGreet back.\n</think>\n\nHello!"},
        {"user", "2+2?"},
        {"assistant", "<think>\nAdd.\n</think>\n\n4"},
    };
    EXPECT_EQ(model::applyChatTemplate(ChatTemplateFamily::Qwen3, messages, false),
              "<|im_start|>user\nHi<|im_end|>\n"
              "<|im_start|>assistant\nHello!<|im_end|>\n"
              "<|im_start|>user\n2+2?<|im_end|>\n"
              "<|im_start|>assistant\n<think>\nAdd.\n</think>\n\n4<|im_end|>\n");
}

// Expected text checked against Qwen3's Jinja template rendered with jinja2.
TEST(ChatTemplate, Qwen3WrapsToolResultsInOneUserTurn) {
    const std::vector<ChatMessage> messages = {
        {"user", "Q"}, {"assistant", "calling"}, {"tool", "r1"}, {"tool", "r2"}, {"assistant", "<think>x</think>done"},
    };
    EXPECT_EQ(model::applyChatTemplate(ChatTemplateFamily::Qwen3, messages, true),
              "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\ncalling<|im_end|>\n"
              "<|im_start|>user\n<tool_response>\nr1\n</tool_response>\n<tool_response>\nr2\n</tool_response><|im_end|>\n"
              "<|im_start|>assistant\n<think>\nx\n</think>\n\ndone<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, Llama3Format) {
    EXPECT_EQ(format(ChatTemplateFamily::Llama3),
              "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant.<|eot_id|>"
              "<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>"
              "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplate, Llama2Format) {
    EXPECT_EQ(format(ChatTemplateFamily::Llama2),
              "[INST] <<SYS>>\nYou are a helpful assistant.\n<</SYS>>\n\nWhat is 2+2? [/INST]");
    const std::vector<ChatMessage> twoTurns = {{"user", "Hi"}, {"assistant", "Hello!"}, {"user", "Bye"}};
    EXPECT_EQ(model::applyChatTemplate(ChatTemplateFamily::Llama2, twoTurns, true),
              "[INST] Hi [/INST] Hello! </s><s>[INST] Bye [/INST]");
}

TEST(ChatTemplate, GemmaFormatMergesSystemIntoFirstUserTurn) {
    EXPECT_EQ(format(ChatTemplateFamily::Gemma),
              "<start_of_turn>user\nYou are a helpful assistant.\n\nWhat is 2+2?<end_of_turn>\n"
              "<start_of_turn>model\n");
}

TEST(ChatTemplate, Phi3Format) {
    EXPECT_EQ(format(ChatTemplateFamily::Phi3),
              "<|system|>\nYou are a helpful assistant.<|end|>\n"
              "<|user|>\nWhat is 2+2?<|end|>\n"
              "<|assistant|>\n");
}

// The formatted text goes through encode(parseSpecial = true): the markers become single
// control tokens.
TEST(ChatTemplate, Qwen3PromptEncodesMarkersAsSpecialTokens) {
    const auto& tok = qwen3Tokenizer();
    const auto ids = tok.encode(format(ChatTemplateFamily::Qwen3, true, false), true, true);
    const int32_t imStart = tok.findToken("<|im_start|>");
    const int32_t imEnd = tok.findToken("<|im_end|>");
    ASSERT_EQ(imStart, 151644);
    ASSERT_EQ(imEnd, 151645);
    EXPECT_EQ(ids.front(), imStart);  // no BOS for Qwen
    EXPECT_EQ(std::count(ids.begin(), ids.end(), imStart), 3);
    EXPECT_EQ(std::count(ids.begin(), ids.end(), imEnd), 2);
    EXPECT_NE(std::find(ids.begin(), ids.end(), tok.findToken("<think>")), ids.end());
    EXPECT_EQ(tok.decode(ids, /*skipSpecial=*/false), format(ChatTemplateFamily::Qwen3, true, false));
}

}  // namespace
}  // namespace zinc::test
