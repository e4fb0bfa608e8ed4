// The assistant's text split into reasoning, answer and tool calls, however the stream cuts it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tools/serve/assistant_output.h"

namespace zinc::serve {
namespace {

// Feeds `text` in pieces of `step` bytes and joins what comes out.
AssistantDelta parse(const std::string& text, bool splitReasoning, ToolCallFormat tools, size_t step) {
    AssistantOutputParser parser(splitReasoning, tools);
    AssistantDelta all;
    auto add = [&](const AssistantDelta& d) {
        all.reasoning += d.reasoning;
        all.content += d.content;
        all.toolCalls.insert(all.toolCalls.end(), d.toolCalls.begin(), d.toolCalls.end());
    };
    for (size_t i = 0; i < text.size(); i += step) add(parser.push(std::string_view(text).substr(i, step)));
    add(parser.finish());
    return all;
}

TEST(AssistantOutput, ThinkingBecomesReasoningContentInAnyChunking) {
    for (size_t step : {1, 2, 3, 7, 100}) {
        const auto d = parse("<think>\nLet me see.\n</think>\n\nThe answer is 4.", true, ToolCallFormat::None, step);
        EXPECT_EQ(d.reasoning, "\nLet me see.\n") << step;
        EXPECT_EQ(d.content, "The answer is 4.") << step;
    }
}

TEST(AssistantOutput, ReasoningFormatNoneKeepsItInline) {
    const std::string text = "<think>hm</think>Four.";
    const auto d = parse(text, false, ToolCallFormat::None, 1);
    EXPECT_EQ(d.reasoning, "");
    EXPECT_EQ(d.content, text);
}

TEST(AssistantOutput, TextThatOnlyLooksLikeATagIsReleased) {
    const auto d = parse("<thin ice> and <tool", true, ToolCallFormat::Hermes, 1);
    EXPECT_EQ(d.content, "<thin ice> and <tool");
    EXPECT_EQ(parse("<think>unfinished", true, ToolCallFormat::None, 2).reasoning, "unfinished");
}

TEST(AssistantOutput, HermesParallelCalls) {
    const std::string text =
        "<think>two cities</think>\n\nChecking.\n<tool_call>\n{\"name\": \"weather\", \"arguments\": {\"city\": \"Oslo\"}}\n"
        "</tool_call>\n<tool_call>\n{\"name\": \"weather\", \"arguments\": {\"city\": \"Rome\"}}\n</tool_call>";
    for (size_t step : {1, 5, 1000}) {
        const auto d = parse(text, true, ToolCallFormat::Hermes, step);
        EXPECT_EQ(d.reasoning, "two cities");
        EXPECT_EQ(d.content, "Checking.\n");
        ASSERT_EQ(d.toolCalls.size(), 2u) << step;
        EXPECT_EQ(d.toolCalls[0].name, "weather");
        EXPECT_EQ(nlohmann::json::parse(d.toolCalls[0].arguments), nlohmann::json({{"city", "Oslo"}}));
        EXPECT_EQ(nlohmann::json::parse(d.toolCalls[1].arguments), nlohmann::json({{"city", "Rome"}}));
        EXPECT_EQ(d.toolCalls[0].id.rfind("call_", 0), 0u);
        EXPECT_NE(d.toolCalls[0].id, d.toolCalls[1].id);
    }
}

TEST(AssistantOutput, ABrokenCallStaysText) {
    const auto d = parse("<tool_call>{\"name\": oops}</tool_call>", true, ToolCallFormat::Hermes, 3);
    EXPECT_TRUE(d.toolCalls.empty());
    EXPECT_EQ(d.content, "<tool_call>{\"name\": oops}</tool_call>");
}

TEST(AssistantOutput, Llama31JsonCall) {
    const auto d = parse(" {\"name\": \"weather\", \"parameters\": {\"city\": \"Oslo\"}}", true, ToolCallFormat::Llama3Json, 4);
    ASSERT_EQ(d.toolCalls.size(), 1u);
    EXPECT_EQ(d.toolCalls[0].name, "weather");
    EXPECT_EQ(nlohmann::json::parse(d.toolCalls[0].arguments), nlohmann::json({{"city", "Oslo"}}));
    EXPECT_EQ(d.content, "");
    EXPECT_EQ(parse("{not a call}", true, ToolCallFormat::Llama3Json, 4).content, "{not a call}");
    EXPECT_EQ(parse("Hello {x}", true, ToolCallFormat::Llama3Json, 1).content, "Hello {x}");
}

}  // namespace
}  // namespace zinc::serve
