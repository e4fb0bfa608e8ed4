// `zinc-rt chat`: an interactive conversation in the model's own chat template (the prompt
// code is shared with `zinc-rt serve`). The KV cache is kept between turns: each turn renders
// the whole conversation and only the tokens after the cached common prefix are run. A long
// prefill shows its progress; every answer ends with its speed.
#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>
#include <functional>
#include <iostream>

#include "model/tokenizer/chat_template.h"
#include "runtime/session.h"
#include "tools/cli_common.h"
#include "tools/generate.h"
#include "tools/serve/chat_prompt.h"

namespace zinc::tools {
namespace {

struct ChatOptions {
    std::string model;
    std::string system;
    std::string templateName;
    bool noThink = false;
    int32_t maxTokens = 1024;
    runtime::SamplerParams sampling;
};

// A line on stderr while a long prompt is prefilled ("prefill 1024/3000 tokens"), rewritten
// after each batch and erased at the end; only on a terminal, and only when there is more
// than one batch to wait for.
class PrefillProgress {
public:
    PrefillProgress(size_t newTokens, size_t batch) : shown_(newTokens > batch && isatty(fileno(stderr))) {}
    ~PrefillProgress() {
        if (shown_) fmt::print(stderr, "\r\033[K");
    }
    void operator()(size_t done, size_t total) const {
        if (shown_ && done < total) fmt::print(stderr, "\rprefill {}/{} tokens", done, total);
    }

private:
    bool shown_;
};

size_t uncachedTokens(const std::vector<int32_t>& history, const std::vector<int32_t>& prompt) {
    size_t common = 0;
    while (common < history.size() && common < prompt.size() && history[common] == prompt[common]) ++common;
    return prompt.size() - common;
}

void runChat(const ChatOptions& o, const GlobalOptions& global) {
    auto engine = openEngine(o.model, global);
    const auto& tokenizer = engine->model->tokenizer();
    model::ChatTemplateFamily family;
    try {
        family = model::resolveChatTemplate(tokenizer.chatTemplate(), o.templateName);
    } catch (const model::ModelError& e) {
        if (!o.templateName.empty()) throw;
        throw model::ModelError(fmt::format("{}: {} (--template NAME)", o.model, e.what()));
    }
    fmt::print(stderr, "model: {}\ntier: {}\ntemplate: {}\nsampling: {}\ntype /reset to start over, /exit or Ctrl-D to quit\n",
               engine->model->config().summary(), engine->tier->describe(), model::chatTemplateName(family),
               o.sampling.describe());
    runtime::Session session(engine->model->config(), *engine->tier);
    runtime::Sampler sampler(o.sampling);
    std::vector<model::ChatMessage> messages;
    if (!o.system.empty()) messages.push_back({"system", o.system});
    const size_t systemMessages = messages.size();
    std::string line;
    while (true) {
        fmt::print(stderr, "\n> ");
        if (!std::getline(std::cin, line) || line == "/exit") break;
        if (line == "/reset") {
            messages.resize(systemMessages);
            session.reset();
            continue;
        }
        if (line.empty()) continue;
        messages.push_back({"user", line});
        const auto prompt = serve::encodeConversation(tokenizer, family, messages, !o.noThink);
        session.resetStats();
        int32_t reused = 0;
        try {
            const PrefillProgress progress(uncachedTokens(session.history(), prompt),
                                           static_cast<size_t>(engine->tier->maxBatch()));
            reused = session.feedReusingPrefix(prompt, std::cref(progress));
        } catch (const runtime::ContextFull& e) {
            // The conversation no longer fits: refuse this turn, keep the chat.
            messages.pop_back();
            session.reset();
            fmt::print(stderr, "zinc-rt: error: {}; the turn was dropped, /reset to start over\n", e.what());
            continue;
        }
        std::string answer;
        const auto result = generate(session, sampler, &tokenizer, o.maxTokens, [&](std::string_view text) {
            answer += text;
            std::fwrite(text.data(), 1, text.size(), stdout);
            std::fflush(stdout);
        });
        messages.push_back({"assistant", answer});
        const auto& s = session.stats();
        fmt::print(stderr, "\n[{} tokens, {:.1f} tok/s; prompt {} new + {} cached tokens, {:.1f} tok/s{}]\n",
                   result.tokens.size(), s.decodeTokensPerSecond(), s.prefillTokens, reused, s.prefillTokensPerSecond(),
                   result.contextFull ? "; context full, /reset to continue" : "");
    }
}

}  // namespace

void addChatCommand(CLI::App& app, const GlobalOptions& global) {
    auto o = std::make_shared<ChatOptions>();
    auto* cmd = app.add_subcommand("chat", "interactive chat in the model's chat template, KV cache kept between turns");
    cmd->add_option("model", o->model, "GGUF model file")->required();
    cmd->add_option("--system", o->system, "system message");
    cmd->add_option("--template", o->templateName,
                    "override the chat template family: chatml, qwen3, llama3, llama2, gemma, phi3");
    cmd->add_flag("--no-think", o->noThink, "Qwen3: answer without a thinking block");
    cmd->add_option("-n,--n-predict", o->maxTokens, "most tokens per answer")->capture_default_str();
    addSamplingOptions(*cmd, o->sampling);
    cmd->callback([o, &global] { runChat(*o, global); });
}

}  // namespace zinc::tools
