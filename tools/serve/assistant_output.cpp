#include "tools/serve/assistant_output.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <random>

namespace zinc::serve {
namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kCallOpen = "<tool_call>";
constexpr std::string_view kCallClose = "</tool_call>";
constexpr std::string_view kSpace = " \t\r\n";

// Bytes at the end of `text` that start `tag` (and so may still become it).
size_t heldTail(std::string_view text, std::string_view tag) {
    for (size_t n = std::min(text.size(), tag.size() - 1); n > 0; --n)
        if (text.substr(text.size() - n) == tag.substr(0, n)) return n;
    return 0;
}

std::string_view trimLeft(std::string_view s) {
    const size_t i = s.find_first_not_of(kSpace);
    return i == std::string_view::npos ? std::string_view() : s.substr(i);
}

}  // namespace

std::string newToolCallId() {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    return fmt::format("call_{:012x}{:012x}", rng() & 0xFFFFFFFFFFFFull, rng() & 0xFFFFFFFFFFFFull);
}

AssistantOutputParser::AssistantOutputParser(bool splitReasoning, ToolCallFormat tools)
    : splitReasoning_(splitReasoning), tools_(tools) {}

AssistantDelta AssistantOutputParser::push(std::string_view text) {
    buffer_ += text;
    AssistantDelta out;
    step(out, false);
    return out;
}

AssistantDelta AssistantOutputParser::finish() {
    AssistantDelta out;
    step(out, true);
    return out;
}

bool AssistantOutputParser::parseCall(std::string_view text, AssistantDelta& out) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) return false;
    const char* argsKey = j.contains("arguments") ? "arguments" : "parameters";
    nlohmann::json args = j.contains(argsKey) ? j[argsKey] : nlohmann::json::object();
    if (args.is_string()) args = nlohmann::json::parse(args.get<std::string>(), nullptr, false);  // already text
    if (!args.is_object()) return false;
    out.toolCalls.push_back({newToolCallId(), j["name"].get<std::string>(), args.dump()});
    return true;
}

void AssistantOutputParser::step(AssistantDelta& out, bool final) {
    while (true) {
        const std::string_view b = buffer_;
        switch (state_) {
            case State::Start: {
                const std::string_view t = trimLeft(b);
                if (splitReasoning_ && t.substr(0, kThinkOpen.size()) == kThinkOpen) {
                    buffer_.erase(0, b.size() - t.size() + kThinkOpen.size());
                    state_ = State::Reasoning;
                    continue;
                }
                if (splitReasoning_ && !final && kThinkOpen.substr(0, t.size()) == t) return;  // may still be <think>
                state_ = State::Content;
                continue;
            }
            case State::Reasoning: {
                const size_t close = b.find(kThinkClose);
                if (close == std::string_view::npos) {
                    const size_t keep = final ? 0 : heldTail(b, kThinkClose);
                    out.reasoning += b.substr(0, b.size() - keep);
                    buffer_.erase(0, b.size() - keep);
                    return;
                }
                out.reasoning += b.substr(0, close);
                buffer_.erase(0, close + kThinkClose.size());
                state_ = State::SkipSpace;
                continue;
            }
            case State::SkipSpace: {  // blank lines after </think> or a tool call
                const std::string_view t = trimLeft(b);
                buffer_.erase(0, b.size() - t.size());
                if (t.empty() && !final) return;
                state_ = State::Content;
                continue;
            }
            case State::Content: {
                if (tools_ == ToolCallFormat::Llama3Json && !contentStarted_) {
                    const std::string_view t = trimLeft(b);
                    if (t.empty() && !final) return;
                    if (!t.empty() && t[0] == '{') {
                        state_ = State::JsonCall;
                        continue;
                    }
                }
                const std::string_view c = buffer_;
                const size_t open = tools_ == ToolCallFormat::Hermes ? c.find(kCallOpen) : std::string_view::npos;
                if (open == std::string_view::npos) {
                    const size_t keep = final || tools_ != ToolCallFormat::Hermes ? 0 : heldTail(c, kCallOpen);
                    out.content += c.substr(0, c.size() - keep);
                    contentStarted_ = contentStarted_ || c.size() > keep;
                    buffer_.erase(0, c.size() - keep);
                    return;
                }
                out.content += c.substr(0, open);
                contentStarted_ = contentStarted_ || open > 0;
                buffer_.erase(0, open + kCallOpen.size());
                state_ = State::ToolCall;
                continue;
            }
            case State::ToolCall: {
                const size_t close = b.find(kCallClose);
                if (close == std::string_view::npos) {
                    if (!final) return;
                    if (!parseCall(b, out)) out.content += std::string(kCallOpen) + buffer_;  // cut short: leave it as text
                    buffer_.clear();
                    return;
                }
                if (!parseCall(b.substr(0, close), out))
                    out.content += std::string(kCallOpen) + std::string(b.substr(0, close + kCallClose.size()));
                buffer_.erase(0, close + kCallClose.size());
                state_ = State::SkipSpace;
                continue;
            }
            case State::JsonCall: {  // Llama 3.1: the whole answer is one JSON call, or text after all
                if (!final) return;
                if (!parseCall(b, out)) out.content += b;
                buffer_.clear();
                return;
            }
        }
    }
}

}  // namespace zinc::serve
