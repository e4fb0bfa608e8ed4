// `zinc-rt ab`: the same prompt through two tiers (--tiers A,B), two devices of one tier
// (--devices A,B) or two model files (--model-b): token agreement, the first diverging token,
// the residual after every layer there, both decode speeds; --validate DIR dumps every op
// output of that step from both sides (.npy + index.json).
#include <fmt/format.h>

#include <array>
#include <iostream>
#include <sstream>

#include "tools/cli_common.h"
#include "tools/prompt_tokens.h"
#include "tools/trace/ab.h"

namespace zinc::tools {
namespace {

struct AbCliOptions {
    std::string model;
    std::string modelB;
    std::string tiers;
    std::string devices;
    std::string prompt = "Once upon a time";
    std::string tokens;
    int32_t generate = 16;
    double layerTolerance = 0.05;
    double tieTolerance = 0.05;
    std::string validateDir;
    bool json = false;
};

std::vector<std::string> splitPair(const std::string& text, const char* option) {
    std::vector<std::string> parts;
    std::istringstream in(text);
    std::string part;
    while (std::getline(in, part, ',')) parts.push_back(part);
    if (parts.size() != 2 || parts[0].empty() || parts[1].empty())
        throw CLI::ValidationError(option, fmt::format("'{}' is not two comma-separated values (A,B)", text));
    return parts;
}

struct Side {
    std::string tierName;
    int32_t device = 0;
    std::string modelPath;
    std::unique_ptr<model::Model> model;
    graph::Graph graph;
    std::unique_ptr<runtime::Tier> tier;
};

void open(Side& side, const GlobalOptions& global) {
    side.model = model::Model::load(side.modelPath);
    side.graph = graph::buildDecodeGraph(side.model->config(), side.model->weights());
    runtime::TierOptions options = global.tierOptions();
    options.device = side.device;
    side.tier = makeTier(side.tierName, side.graph, options, &global);
}

std::string label(const Side& side, bool devices, bool models) {
    std::string s = side.tierName;
    if (devices) s += fmt::format(" device {}", side.device);
    if (models) s += fmt::format(" ({})", side.modelPath);
    return s;
}

void runAbCommand(const AbCliOptions& o, const GlobalOptions& global) {
    const auto tiers = o.tiers.empty() ? std::vector<std::string>{"cpu", global.tier} : splitPair(o.tiers, "--tiers");
    std::array<Side, 2> sides;
    for (size_t i = 0; i < 2; ++i) {
        sides[i].tierName = tiers[i];
        sides[i].device = global.device;
        sides[i].modelPath = i == 1 && !o.modelB.empty() ? o.modelB : o.model;
    }
    if (!o.devices.empty()) {
        const auto devices = splitPair(o.devices, "--devices");
        for (size_t i = 0; i < 2; ++i) {
            try {
                sides[i].device = std::stoi(devices[i]);
            } catch (const std::exception&) {
                throw CLI::ValidationError("--devices", fmt::format("'{}' is not a device index", devices[i]));
            }
        }
    }
    for (Side& side : sides) open(side, global);
    trace::AbOptions options;
    options.prompt = promptTokens(*sides[0].model, o.prompt, o.tokens);
    options.tokens = o.generate;
    options.layerTolerance = o.layerTolerance;
    options.tieTolerance = o.tieTolerance;
    options.validateDir = o.validateDir;
    const bool devices = !o.devices.empty(), models = !o.modelB.empty();
    const trace::AbReport report = trace::runAb({label(sides[0], devices, models), sides[0].tier.get(), &sides[0].graph},
                                                {label(sides[1], devices, models), sides[1].tier.get(), &sides[1].graph}, options);
    if (o.json)
        std::cout << trace::abJson(report).dump(2) << std::endl;
    else
        fmt::print("{}", trace::formatAb(report));
    if (!o.validateDir.empty() && !o.json) fmt::print("validate: {}/index.json lists them\n", o.validateDir);
}

}  // namespace

void addAbCommand(CLI::App& app, const GlobalOptions& global) {
    auto o = std::make_shared<AbCliOptions>();
    auto* cmd = app.add_subcommand("ab", "the same prompt through two tiers, devices or models: agreement, first diverging "
                                         "layer, speed ratio");
    cmd->add_option("model", o->model, "GGUF model file")->required();
    cmd->add_option("--tiers", o->tiers, "the two tiers, A,B (default: cpu and --tier)");
    cmd->add_option("--devices", o->devices, "GPU tiers: the two device indices, A,B (default: --device for both)");
    cmd->add_option("--model-b", o->modelB, "side B runs this model file instead (same architecture and shapes)");
    cmd->add_option("-p,--prompt", o->prompt, "prompt text")->capture_default_str();
    cmd->add_option("--tokens", o->tokens, "prompt as token ids instead (\"1 2 3\")");
    cmd->add_option("-n,--n-predict", o->generate, "steps compared: A generates greedily, B is fed A's tokens")->capture_default_str()->check(CLI::Range(1, 1 << 16));
    cmd->add_option("--layer-tol", o->layerTolerance, "a layer diverges when max |a-b| > this x max |a| of its residual")
        ->capture_default_str();
    cmd->add_option("--tie-tol", o->tieTolerance, "differing choices within this logit gap (either side) are a near tie")
        ->capture_default_str();
    cmd->add_option("--validate", o->validateDir, "dump every op output of the compared step from both sides to this folder");
    cmd->add_flag("--json", o->json, "print the report as JSON");
    cmd->callback([o, &global] { runAbCommand(*o, global); });
}

}  // namespace zinc::tools
