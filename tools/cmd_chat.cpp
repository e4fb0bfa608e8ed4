// `zinc-rt chat`: an interactive conversation in the model's own chat template (the prompt code
// is shared with `zinc-rt serve`). The conversation is kept as the tokens the model has seen, so
// each turn prefills only its own new tokens (--verbose prints the counts). On a terminal the
// prompt is a line editor with history; Ctrl-C stops a reply and keeps the conversation, and a
// second Ctrl-C at an empty prompt exits. Qwen3's thinking is shown dimmed.
#include <fmt/format.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "model/tokenizer/chat_template.h"
#include "runtime/session.h"
#include "tools/chat_conversation.h"
#include "tools/cli_common.h"
#include "tools/generate.h"
#include "tools/line_editor.h"

namespace zinc::tools {
namespace {

struct ChatOptions {
    std::string model;
    std::string system;
    std::string templateName;
    bool noThink = false;
    bool verbose = false;
    int32_t maxTokens = 1024;
    runtime::SamplerParams sampling;
};

constexpr const char* kHelp =
    "/help          this list\n"
    "/reset         start over (asks first); the system message stays\n"
    "/save FILE     write the conversation to FILE (JSON)\n"
    "/load FILE     continue a conversation saved with /save\n"
    "/exit          quit (also Ctrl-D, or Ctrl-C twice at the prompt)\n"
    "A line ending in \\ continues on the next line; \"\"\" starts and ends a block of lines.\n"
    "Ctrl-C during a reply stops it; the conversation is kept.\n";

std::atomic<bool> interrupted{false};

void onInterrupt(int) { interrupted.store(true); }

// SIGINT sets `interrupted` (no SA_RESTART, so a blocking read returns) instead of killing chat.
void catchInterrupts() {
    struct sigaction sa {};
    sa.sa_handler = onInterrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
}

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

// The reply on stdout; on a terminal Qwen3's <think>...</think> block is dimmed.
class ReplyPrinter {
public:
    ReplyPrinter() : dim_(isatty(fileno(stdout))) {}
    void operator()(std::string_view text) {
        std::string out(text);
        if (dim_) {
            replaceAll(out, "<think>", "\033[2m<think>");
            replaceAll(out, "</think>", "</think>\033[0m");
            if (out.find("\033[2m") != std::string::npos) thinking_ = true;
            if (out.find("\033[0m") != std::string::npos) thinking_ = false;
        }
        std::fwrite(out.data(), 1, out.size(), stdout);
        std::fflush(stdout);
    }
    void finish() {
        if (thinking_) std::fputs("\033[0m", stdout);
        std::fflush(stdout);
    }

private:
    static void replaceAll(std::string& s, std::string_view from, std::string_view to) {
        for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size()) s.replace(at, from.size(), to);
    }
    bool dim_;
    bool thinking_ = false;
};

// One message from the user: a line, lines joined by a trailing backslash, or a """ block.
// Empty optional at end of input; "\x03" for Ctrl-C.
std::optional<std::string> readMessage(LineEditor& editor) {
    interrupted.store(false);
    LineEditor::Read r = editor.readLine("> ");
    if (r.status == LineEditor::Status::EndOfInput) return std::nullopt;
    if (r.status == LineEditor::Status::Interrupted) return std::string("\x03");
    std::string message;
    const bool block = r.text.rfind("\"\"\"", 0) == 0;
    std::string line = block ? r.text.substr(3) : r.text;
    while (true) {
        if (block && line.size() >= 3 && line.ends_with("\"\"\"")) {
            message += line.substr(0, line.size() - 3);
            break;
        }
        const bool continued = !block && line.ends_with("\\");
        message += continued ? line.substr(0, line.size() - 1) : line;
        if (!block && !continued) break;
        message += "\n";
        r = editor.readLine("... ");
        if (r.status != LineEditor::Status::Line) return r.status == LineEditor::Status::Interrupted ? std::string("\x03") : message;
        line = r.text;
    }
    editor.addHistory(block ? "\"\"\"" + message + "\"\"\"" : r.text);
    return message;
}

bool confirmed(LineEditor& editor, std::string_view question) {
    const LineEditor::Read r = editor.readLine(fmt::format("{} [y/N] ", question));
    return r.status == LineEditor::Status::Line && (r.text == "y" || r.text == "Y" || r.text == "yes");
}

// The slash commands; false when the line is not one.
bool runCommand(const std::string& line, LineEditor& editor, ChatConversation& chat, runtime::Session& session) {
    if (line == "/help") {
        fmt::print(stderr, "{}", kHelp);
    } else if (line == "/reset") {
        if (confirmed(editor, "Start the conversation over?")) {
            chat.reset();
            session.reset();
            fmt::print(stderr, "conversation reset\n");
        } else {
            fmt::print(stderr, "conversation kept\n");
        }
    } else if (line.rfind("/save ", 0) == 0) {
        chat.save(line.substr(6));
        fmt::print(stderr, "saved {} messages to {}\n", chat.messages().size(), line.substr(6));
    } else if (line.rfind("/load ", 0) == 0) {
        chat.load(line.substr(6));
        session.reset();
        fmt::print(stderr, "loaded {} messages from {}\n", chat.messages().size(), line.substr(6));
    } else if (line.starts_with("/") && line.find(' ') == std::string::npos) {
        fmt::print(stderr, "unknown command {} (/help lists them)\n", line);
    } else {
        return false;
    }
    return true;
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
    fmt::print(stderr, "model: {}\ntier: {}\ntemplate: {}\nsampling: {}\n/help lists the commands, /exit or Ctrl-D quits\n",
               engine->model->config().summary(), engine->tier->describe(), model::chatTemplateName(family), o.sampling.describe());
    runtime::Session session(engine->model->config(), *engine->tier);
    runtime::Sampler sampler(o.sampling);
    ChatConversation chat(tokenizer, family, !o.noThink, o.system);
    LineEditor editor;
    catchInterrupts();
    bool interruptedAtPrompt = false;
    for (int turn = 1;;) {
        fmt::print(stderr, "\n");
        const std::optional<std::string> message = readMessage(editor);
        if (!message || *message == "/exit") break;
        if (*message == "\x03") {
            if (interruptedAtPrompt) break;
            interruptedAtPrompt = true;
            fmt::print(stderr, "(Ctrl-C again to exit, /help for the commands)\n");
            continue;
        }
        interruptedAtPrompt = false;
        if (message->empty()) continue;
        try {
            if (runCommand(*message, editor, chat, session)) continue;
        } catch (const std::runtime_error& e) {
            fmt::print(stderr, "zinc-rt: error: {}\n", e.what());
            continue;
        }
        const bool fresh = session.history().empty();
        const std::vector<int32_t> tokens = chat.userTurnTokens(*message, fresh);
        const size_t cached = session.history().size();
        session.resetStats();
        try {
            const PrefillProgress progress(tokens.size(), static_cast<size_t>(engine->tier->maxBatch()));
            session.feed(tokens, std::cref(progress));
        } catch (const runtime::ContextFull& e) {
            // The conversation no longer fits: refuse this turn, keep the chat as it was.
            fmt::print(stderr, "zinc-rt: error: {}; the turn was dropped, /reset to start over\n", e.what());
            continue;
        }
        chat.addUserTurn(*message);
        if (o.verbose) fmt::print(stderr, "[turn {}: prefill {} cached + {} new tokens]\n", turn, cached, tokens.size());
        ++turn;
        const size_t beforeReply = session.history().size();
        std::string reply;
        ReplyPrinter printer;
        interrupted.store(false);
        const auto result = generate(
            session, sampler, &tokenizer, o.maxTokens,
            [&](std::string_view text) {
                reply += text;
                printer(text);
            },
            &interrupted);
        printer.finish();
        const size_t fed = session.history().size() - beforeReply;
        std::vector<int32_t> unfed(result.tokens.begin() + static_cast<ptrdiff_t>(std::min(fed, result.tokens.size())), result.tokens.end());
        chat.addReply(reply, std::move(unfed));
        const auto& s = session.stats();
        fmt::print(stderr, "\n[{}{} tokens, {:.1f} tok/s; prompt {} new + {} cached tokens, {:.1f} tok/s; conversation {} tokens{}]\n",
                   result.stopped ? "stopped; " : "", result.tokens.size(), s.decodeTokensPerSecond(), tokens.size(), cached,
                   s.prefillTokensPerSecond(), session.history().size(), result.contextFull ? "; context full, /reset to continue" : "");
    }
}

}  // namespace

void addChatCommand(CLI::App& app, const GlobalOptions& global) {
    auto o = std::make_shared<ChatOptions>();
    auto* cmd = app.add_subcommand("chat", "interactive chat in the model's chat template, the conversation kept as tokens");
    cmd->add_option("model", o->model, "GGUF model file or cached model name (zinc-rt ls)")->required();
    cmd->add_option("--system", o->system, "system message");
    cmd->add_option("--template", o->templateName,
                    "override the chat template family: chatml, qwen3, llama3, llama2, gemma, phi3");
    cmd->add_flag("--no-think", o->noThink, "Qwen3: answer without a thinking block");
    cmd->add_flag("-v,--verbose", o->verbose, "print each turn's prefill: tokens cached and new");
    cmd->add_option("-n,--n-predict", o->maxTokens, "most tokens per answer")->capture_default_str()->check(allowedRange(0, 1 << 24));
    addSamplingOptions(*cmd, o->sampling);
    cmd->callback([o, &global] { runChat(*o, global); });
}

}  // namespace zinc::tools
