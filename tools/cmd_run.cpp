// `zinc-rt run`: prompt in, text out, then prefill and decode speed. The prompt is text (-p, or
// -f FILE), optionally wrapped in the model's chat template with a system message (--system),
// or token ids (--tokens, for models without a tokenizer). The seed is random unless given,
// and printed either way, so any run can be repeated.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "model/tokenizer/chat_template.h"
#include "tools/cli_common.h"
#include "tools/generate.h"
#include "tools/prompt_tokens.h"
#include "tools/serve/chat_prompt.h"

namespace zinc::tools {
namespace {

struct RunOptions {
    std::string model;
    std::string prompt = "Once upon a time";
    std::string promptFile;
    std::string system;
    std::string tokens;
    int32_t maxTokens = 128;
    runtime::SamplerParams sampling;
};

std::string readPromptFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw CLI::ValidationError("-f", fmt::format("cannot read prompt file {}", path));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The prompt's tokens and the text to echo before the answer (none for a chat-wrapped prompt).
std::vector<int32_t> promptOf(const model::Model& model, const RunOptions& o, const std::string& text, std::string& echo) {
    if (!o.tokens.empty() || !model.hasTokenizer() || o.system.empty()) {
        echo = o.tokens.empty() && model.hasTokenizer() ? text : "";
        return promptTokens(model, text, o.tokens);
    }
    const auto family = model::resolveChatTemplate(model.tokenizer().chatTemplate());
    const std::vector<model::ChatMessage> messages = {{"system", o.system}, {"user", text}};
    return serve::encodeConversation(model.tokenizer(), family, messages, true);
}

void runRun(const RunOptions& o, const GlobalOptions& global) {
    const std::string text = o.promptFile.empty() ? o.prompt : readPromptFile(o.promptFile);
    auto engine = openEngine(o.model, global);
    const model::Model& model = *engine->model;
    fmt::print(stderr, "model: {}\ntier: {}\nsampling: {}\n", model.config().summary(), engine->tier->describe(), o.sampling.describe());
    std::string echo;
    const auto prompt = promptOf(model, o, text, echo);
    runtime::Session session(model.config(), *engine->tier);
    runtime::Sampler sampler(o.sampling);
    fmt::print("{}", echo);
    std::fflush(stdout);
    session.feed(prompt);
    const model::Tokenizer* tokenizer = model.hasTokenizer() ? &model.tokenizer() : nullptr;
    const auto result = generate(session, sampler, tokenizer, o.maxTokens, [](std::string_view piece) {
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
    });
    if (!tokenizer) fmt::print("{}", fmt::join(result.tokens, " "));  // no text without a tokenizer: the ids
    const auto& s = session.stats();
    fmt::print("\n");
    fmt::print(stderr, "\nprefill: {} tokens in {:.3f} s ({:.1f} tok/s)\ndecode: {} tokens in {:.3f} s ({:.1f} tok/s){}\n",
               s.prefillTokens, s.prefillSeconds, s.prefillTokensPerSecond(), s.decodeTokens, s.decodeSeconds,
               s.decodeTokensPerSecond(),
               result.endOfGeneration ? ", stopped at end of generation" : result.contextFull ? ", context full" : "");
}

}  // namespace

void addRunCommand(CLI::App& app, const GlobalOptions& global) {
    auto o = std::make_shared<RunOptions>();
    auto* cmd = app.add_subcommand("run", "generate text from a prompt, then print prefill and decode tok/s");
    cmd->add_option("model", o->model, "GGUF model file or cached model name (zinc-rt ls)")->required();
    auto* prompt = cmd->add_option("-p,--prompt", o->prompt, "prompt text")->capture_default_str();
    auto* file = cmd->add_option("-f,--file", o->promptFile, "read the prompt from this file")->excludes(prompt);
    cmd->add_option("--system", o->system, "system message: the prompt is sent as a chat turn in the model's template");
    cmd->add_option("--tokens", o->tokens, "the prompt as token ids, \"1 2 3\" (models without a tokenizer)")
        ->excludes(prompt)
        ->excludes(file);
    cmd->add_option("-n,--n-predict", o->maxTokens, "tokens to generate")->capture_default_str()->check(allowedRange(0, 1 << 24));
    addSamplingOptions(*cmd, o->sampling);
    cmd->callback([o, &global] { runRun(*o, global); });
}

}  // namespace zinc::tools
