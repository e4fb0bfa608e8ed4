// `zinc-rt run`: prompt in, text out, then prefill and decode speed.
#include <fmt/format.h>

#include <cstdio>

#include "tools/cli_common.h"
#include "tools/generate.h"

namespace zinc::tools {
namespace {

struct RunOptions {
    std::string model;
    std::string prompt = "Once upon a time";
    int32_t maxTokens = 128;
    runtime::SamplerParams sampling;
};

void runRun(const RunOptions& o, const GlobalOptions& global) {
    auto engine = openEngine(o.model, global);
    const auto& tokenizer = engine->model->tokenizer();
    fmt::print(stderr, "model: {}\ntier: {}\nsampling: {}\n", engine->model->config().summary(),
               engine->tier->describe(), o.sampling.describe());
    const auto prompt = tokenizer.encode(o.prompt, true, true);
    runtime::Session session(engine->model->config(), *engine->tier);
    runtime::Sampler sampler(o.sampling);
    fmt::print("{}", o.prompt);
    std::fflush(stdout);
    session.feed(prompt);
    const auto result = generate(session, sampler, &tokenizer, o.maxTokens, [](std::string_view text) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
    });
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
    cmd->add_option("model", o->model, "GGUF model file")->required();
    cmd->add_option("-p,--prompt", o->prompt, "prompt text")->capture_default_str();
    cmd->add_option("-n,--n-predict", o->maxTokens, "tokens to generate")->capture_default_str()->check(CLI::Range(0, 1 << 24));
    addSamplingOptions(*cmd, o->sampling);
    cmd->callback([o, &global] { runRun(*o, global); });
}

}  // namespace zinc::tools
