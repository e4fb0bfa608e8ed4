#pragma once
// The assistant's generated text -> what an OpenAI client expects apart: the reasoning (a
// leading <think>...</think> block, as Qwen3 and DeepSeek-R1 write it; llama-server and
// DeepSeek's API return it as reasoning_content), the answer, and tool calls, in the format of
// the model family: Hermes / Qwen3 `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`
// blocks (any number: parallel calls), or Llama 3.1's bare JSON `{"name": ..., "parameters":
// {...}}` answer. Works on a stream: push() returns what can be released so far, holding back
// a tail that could still turn into a tag.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace zinc::serve {

enum class ToolCallFormat { None, Hermes, Llama3Json };

struct ToolCall {
    std::string id;         // "call_..."
    std::string name;
    std::string arguments;  // a JSON object, as text
};

struct AssistantDelta {
    std::string reasoning;
    std::string content;
    std::vector<ToolCall> toolCalls;
    bool empty() const { return reasoning.empty() && content.empty() && toolCalls.empty(); }
};

class AssistantOutputParser {
public:
    // splitReasoning: false keeps <think> blocks inside the content (reasoning_format "none").
    AssistantOutputParser(bool splitReasoning, ToolCallFormat tools);
    AssistantDelta push(std::string_view text);
    AssistantDelta finish();

private:
    enum class State { Start, Reasoning, SkipSpace, Content, ToolCall, JsonCall };
    void step(AssistantDelta& out, bool final);
    bool parseCall(std::string_view json, AssistantDelta& out);

    bool splitReasoning_;
    ToolCallFormat tools_;
    State state_ = State::Start;
    std::string buffer_;
    bool contentStarted_ = false;
};

// "call_" and 24 random hex digits.
std::string newToolCallId();

}  // namespace zinc::serve
