// `zinc-rt score`: teacher-forced top-k logits per position and a greedy continuation, in
// exactly the format of ../shared/reference/*.golden, so any tier can be checked against an
// independent engine. Tokens are fed one per step (the decode path every tier shares).
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <sstream>

#include "runtime/session.h"
#include "tools/cli_common.h"
#include "tools/prompt_tokens.h"

namespace zinc::tools {
namespace {

struct ScoreOptions {
    std::string model;
    std::string text;
    std::string tokens;
    int32_t top = 5;
    int32_t greedy = 0;
};

std::string topLine(std::span<const float> logits, int32_t top) {
    std::vector<int32_t> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    const auto k = static_cast<size_t>(std::min<int64_t>(top, static_cast<int64_t>(order.size())));
    std::partial_sort(order.begin(), order.begin() + static_cast<ptrdiff_t>(k), order.end(),
                      [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
    std::string line;
    for (size_t i = 0; i < k; ++i) line += fmt::format(" {}:{:.6f}", order[i], logits[static_cast<size_t>(order[i])]);
    return line;
}

void runScore(const ScoreOptions& o, const GlobalOptions& global) {
    auto engine = openEngine(o.model, global);
    std::vector<int32_t> prompt;
    if (!o.text.empty()) {
        prompt = engine->model->tokenizer().encode(o.text, true, true);
        fmt::print("text {}\n", o.text);
    } else {
        prompt = parseTokenList(o.tokens);
    }
    fmt::print("prompt {}\n", fmt::join(prompt, " "));
    runtime::Session session(engine->model->config(), *engine->tier);
    for (size_t p = 0; p < prompt.size(); ++p) {
        auto logits = session.step(prompt[p]);
        fmt::print("pos {} in {} top{}\n", p, prompt[p], topLine(logits, o.top));
    }
    if (o.greedy > 0) {
        std::vector<int32_t> out;
        for (int32_t i = 0; i < o.greedy; ++i) {
            out.push_back(runtime::argmax(session.logits()));
            if (i + 1 < o.greedy) session.step(out.back());
        }
        fmt::print("greedy {}\n", fmt::join(out, " "));
    }
    std::fflush(stdout);
}

}  // namespace

void addScoreCommand(CLI::App& app, const GlobalOptions& global) {
    auto o = std::make_shared<ScoreOptions>();
    auto* cmd = app.add_subcommand("score", "teacher-forced top logits per position and a greedy continuation "
                                            "(the format of ../shared/reference/*.golden)");
    cmd->add_option("model", o->model, "GGUF model file")->required();
    auto* text = cmd->add_option("--text", o->text, "prompt text (tokenized with the model's tokenizer, BOS as the model says)");
    auto* tokens = cmd->add_option("--tokens", o->tokens, "prompt token ids, e.g. \"1 2 3\"");
    text->excludes(tokens);
    cmd->add_option("--top", o->top, "logits listed per position")->capture_default_str()->check(CLI::Range(1, 1000));
    cmd->add_option("--greedy", o->greedy, "greedy tokens after the prompt")->capture_default_str()->check(CLI::Range(0, 100000));
    cmd->callback([o, &global] {
        if (o->text.empty() && o->tokens.empty()) throw CLI::ValidationError("score", "give --text or --tokens");
        runScore(*o, global);
    });
}

}  // namespace zinc::tools
