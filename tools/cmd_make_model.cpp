// `zinc-rt make-model`: GGUF files with real model shapes, real quantized block layouts and
// random weights, any size (there are no big weights on our machines).
#include <fmt/format.h>

#include "model/make_model/make_model.h"
#include "tools/cli_common.h"

namespace zinc::tools {
namespace {

std::string choicesText(const std::vector<model::MakeModelChoice>& choices) {
    std::string text;
    for (const auto& c : choices) text += fmt::format("\n  {:<16} {}", c.name, c.description);
    return text;
}

}  // namespace

void addMakeModelCommand(CLI::App& app, const GlobalOptions& global) {
    auto o = std::make_shared<model::MakeModelOptions>();
    auto layers = std::make_shared<uint32_t>(0);
    auto ctx = std::make_shared<uint32_t>(0);
    auto list = std::make_shared<bool>(false);
    auto* cmd = app.add_subcommand("make-model", "write a GGUF model with real shapes and random weights");
    cmd->add_option("--preset", o->preset, "model shape" + choicesText(model::makeModelPresetChoices()));
    cmd->add_option("--quant", o->quantMix, "tensor type mix" + choicesText(model::makeModelQuantMixChoices()))
        ->capture_default_str();
    cmd->add_option("-o,--output", o->outputPath, "GGUF file to write");
    cmd->add_option("--seed", o->seed, "random seed (same seed, same bytes)")->capture_default_str();
    cmd->add_option("--tokenizer", o->tokenizerJson, "a Hugging Face tokenizer.json (or .json.gz) to embed");
    cmd->add_option("--tokenizer-config", o->tokenizerConfigJson, "its tokenizer_config.json (bos/eos, chat template)");
    cmd->add_option("--layers", *layers, "override the preset's layer count");
    cmd->add_option("--context-length", *ctx, "override the preset's context length");
    cmd->add_flag("--list", *list, "list presets and quant mixes");
    cmd->callback([o, layers, ctx, list, &global] {
        if (*list) {
            fmt::print("presets:{}\nquant mixes:{}\n", choicesText(model::makeModelPresetChoices()),
                       choicesText(model::makeModelQuantMixChoices()));
            return;
        }
        if (o->preset.empty() || o->outputPath.empty())
            throw CLI::ValidationError("make-model", "give --preset and -o (see --list)");
        if (*layers) o->layers = *layers;
        if (*ctx) o->contextLength = *ctx;
        o->threads = static_cast<unsigned>(std::max(0, global.threads));
        model::makeModel(*o);
    });
}

}  // namespace zinc::tools
