#include "tools/chat_conversation.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <stdexcept>

namespace zinc::tools {
namespace {
// Stands in for the last reply when rendering: the text after it is what the template puts
// between that reply and the next turn, whatever the reply's own tokens were.
constexpr std::string_view kReplyMark = "\x1e" "zinc-reply" "\x1e";
}  // namespace

ChatConversation::ChatConversation(const model::Tokenizer& tokenizer, model::ChatTemplateFamily family, bool enableThinking,
                                   std::string system)
    : tokenizer_(tokenizer), family_(family), enableThinking_(enableThinking) {
    if (!system.empty()) messages_.push_back({"system", std::move(system)});
    systemMessages_ = messages_.size();
}

std::vector<int32_t> ChatConversation::encode(const std::string& text, bool withBos) const {
    // Templates that spell out the BOS text (Llama 3) must not get a second BOS.
    const bool bosInText = tokenizer_.bos() >= 0 && text.rfind(tokenizer_.tokenText(tokenizer_.bos()), 0) == 0;
    return tokenizer_.encode(text, withBos && !bosInText, true);
}

std::vector<int32_t> ChatConversation::userTurnTokens(const std::string& text, bool fresh) const {
    std::vector<model::ChatMessage> rendered = messages_;
    rendered.push_back({"user", text});
    const bool afterReply = !fresh && messages_.size() > systemMessages_ && messages_.back().role == "assistant";
    if (!afterReply) return encode(model::applyChatTemplate(family_, rendered, true, enableThinking_), true);
    rendered[rendered.size() - 2].content = std::string(kReplyMark);
    const std::string whole = model::applyChatTemplate(family_, rendered, true, enableThinking_);
    const size_t mark = whole.find(kReplyMark);
    if (mark == std::string::npos) throw std::logic_error("chat template dropped the last reply");
    std::vector<int32_t> tokens = unfed_;
    const auto turn = encode(whole.substr(mark + kReplyMark.size()), false);
    tokens.insert(tokens.end(), turn.begin(), turn.end());
    return tokens;
}

void ChatConversation::addUserTurn(const std::string& text) {
    messages_.push_back({"user", text});
    unfed_.clear();
}

void ChatConversation::addReply(std::string text, std::vector<int32_t> unfed) {
    messages_.push_back({"assistant", std::move(text)});
    unfed_ = std::move(unfed);
}

void ChatConversation::reset() {
    messages_.resize(systemMessages_);
    unfed_.clear();
}

void ChatConversation::save(const std::string& path) const {
    nlohmann::json out = {{"messages", nlohmann::json::array()}};
    for (const auto& m : messages_) out["messages"].push_back({{"role", m.role}, {"content", m.content}});
    std::ofstream file(path);
    file << out.dump(2) << "\n";
    if (!file) throw std::runtime_error(fmt::format("{}: cannot write the conversation", path));
}

void ChatConversation::load(const std::string& path) {
    std::ifstream file(path);
    if (!file) throw std::runtime_error(fmt::format("{}: cannot read it", path));
    std::vector<model::ChatMessage> loaded;
    try {
        const auto in = nlohmann::json::parse(file);
        for (const auto& m : in.at("messages")) loaded.push_back({m.at("role").get<std::string>(), m.at("content").get<std::string>()});
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(fmt::format("{}: not a saved conversation ({})", path, e.what()));
    }
    messages_ = std::move(loaded);
    systemMessages_ = 0;
    while (systemMessages_ < messages_.size() && messages_[systemMessages_].role == "system") ++systemMessages_;
    unfed_.clear();
}

}  // namespace zinc::tools
