// Arbitrary chat templates and conversations: a template text is either recognised or refused
// with a ModelError, and every family formats any conversation (a ModelError for a role it
// cannot place is fine). Input: the template text, then NUL-separated role/content pairs.
#include <string>
#include <string_view>
#include <vector>

#include "model/model_error.h"
#include "model/tokenizer/chat_template.h"

using namespace zinc::model;

namespace {

std::vector<std::string_view> splitAtNul(std::string_view s) {
    std::vector<std::string_view> parts;
    for (size_t start = 0;;) {
        const size_t end = s.find('\0', start);
        parts.push_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
        if (end == std::string_view::npos) return parts;
        start = end + 1;
    }
}

// Roles are mostly the usual ones (a one-character role chooses one), sometimes anything.
std::string role(std::string_view r) {
    static const char* const kRoles[] = {"system", "user", "assistant", "tool"};
    return r.size() == 1 ? kRoles[uint8_t(r[0]) % 4] : std::string(r);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto parts = splitAtNul(std::string_view(reinterpret_cast<const char*>(data), size));
    std::vector<ChatMessage> messages;
    for (size_t i = 1; i + 1 < parts.size(); i += 2) messages.push_back({role(parts[i]), std::string(parts[i + 1])});
    try {
        (void)detectChatTemplate(parts[0]);
    } catch (const ModelError&) {
    }
    for (auto family : {ChatTemplateFamily::ChatMl, ChatTemplateFamily::Qwen3, ChatTemplateFamily::Llama3,
                        ChatTemplateFamily::Llama2, ChatTemplateFamily::Gemma, ChatTemplateFamily::Phi3}) {
        try {
            (void)applyChatTemplate(family, messages, size % 2 == 0, size % 3 == 0);
        } catch (const ModelError&) {
        }
    }
    return 0;
}
