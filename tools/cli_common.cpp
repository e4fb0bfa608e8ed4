#include "tools/cli_common.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>

#include "kfd/tier/pm4_tier.h"
#include "runtime/cpu/cpu_tier.h"
#include "tools/models/model_cache.h"
#include "tools/pm4_tiers.h"
#include "vulkan/vulkan_tier.h"

namespace zinc::tools {
namespace {

std::string rangeText(double lo, double hi) {
    if (hi == std::numeric_limits<double>::infinity()) return fmt::format(">= {}", lo);
    return fmt::format("[{}, {}]", lo, hi);
}

// A ZINC_* whole number, checked against the same range as its option.
std::optional<int32_t> envInt(const char* name, double lo, double hi) {
    const char* v = std::getenv(name);
    if (!v || !*v) return std::nullopt;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (*end != '\0') throw CLI::ValidationError(name, fmt::format("'{}' is not a whole number", v));
    if (n < lo || n > hi) throw CLI::ValidationError(name, fmt::format("{} is out of range (allowed: {})", v, rangeText(lo, hi)));
    return static_cast<int32_t>(n);
}

constexpr double kUnbounded = std::numeric_limits<double>::infinity();

}  // namespace

void GlobalOptions::readEnvironment() {
    if (const char* t = std::getenv("ZINC_TIER"); t && *t) tier = t;
    threads = envInt("ZINC_THREADS", 0, kUnbounded).value_or(threads);
    contextLength = envInt("ZINC_CTX", 0, kUnbounded).value_or(contextLength);
    batch = envInt("ZINC_BATCH", 1, kUnbounded).value_or(batch);
    if (const auto d = envInt("ZINC_DEVICE", 0, kUnbounded)) {
        device = *d;
        deviceChosen = true;
    }
}

std::string GlobalOptions::describe() const {
    return fmt::format("tier={}\nthreads={}\nctx={}\nbatch={}\nprecision={}\ndelta_chunk={}\ndevice={}\ngpu_timestamps={}\n",
                       tier, threads, contextLength, batch, precision, deltaChunk, device, gpuTimestamps) +
           fmt::format("sim={}\ngfx={}\nsim_nodes={}\nsim_bar_mib={}\ndump_pm4={}\nsubmit={}\nloop={}\n", sim, gfx, simNodes,
                       simBarMiB ? std::to_string(simBarMiB) : std::string("all"), dumpPm4, submit, loop) +
           fmt::format("wait_timeout_ms={}\ndevice_memory_mib={}\nactivation_mib={}\nrope_scaling={}\n", waitTimeoutMs,
                       deviceMemoryMiB, activationMiB ? std::to_string(activationMiB) : std::string("auto"), ropeScaling.empty() ? "off" : ropeScaling);
}

runtime::TierOptions GlobalOptions::tierOptions() const {
    runtime::TierOptions o;
    o.threads = threads;
    o.contextLength = contextLength;
    o.maxBatch = batch;
    o.activationBudget = activationMiB << 20;
    o.device = device;
    o.gpuTimestamps = gpuTimestamps;
    o.waitTimeoutMs = waitTimeoutMs;
    o.deviceMemoryLimit = deviceMemoryMiB << 20;
    o.sequences = sequences;
    o.deltaChunk = deltaChunk;
    if (precision == "f32")
        o.precision = runtime::Precision::F32;
    else if (precision != "ggml")
        throw runtime::TierError(fmt::format("unknown precision '{}' (ggml or f32)", precision));
    return o;
}

namespace {

// The vulkan tier's options: GlobalOptions::gpuSequences KV slots where asked for (a hybrid's
// recurrent state too: the tier keeps a copy a slot).
runtime::TierOptions vulkanOptions(const graph::Graph&, runtime::TierOptions options, const GlobalOptions& g) {
    if (g.gpuSequences > 0) options.sequences = g.gpuSequences;
    return options;
}

}  // namespace

std::unique_ptr<runtime::Tier> makeTier(const std::string& name, const graph::Graph& graph,
                                        const runtime::TierOptions& options, const GlobalOptions* global) {
    const GlobalOptions defaults;
    const GlobalOptions& g = global ? *global : defaults;
    if (name == "cpu") return cpu::makeCpuTier(graph, options);
    if (name == "vulkan") return vulkan::makeVulkanTier(graph, vulkanOptions(graph, options, g), options.device);
    if (name == "kfd" || name == "umq") return makePm4Tier(name, graph, options, g);
    if (name == "auto") {
        AutoChoice choice = chooseAutoTier(g);
        std::fprintf(stderr, "%s\n", describe(choice).c_str());
        if (choice.tier == "vulkan") return vulkan::makeVulkanTier(graph, vulkanOptions(graph, options, g), choice.vulkanDevice);
        if (choice.tier == "cpu") return cpu::makeCpuTier(graph, options);
        if (!choice.device) return makePm4Tier(choice.tier, graph, options, g);
        kfd::Pm4TierOptions o = pm4TierOptions(choice.tier, options, g);
        o.route = kfd::SubmitRoute::Doorbell;
        return kfd::makePm4Tier(graph, options, choice.device, o);
    }
    throw runtime::TierError(fmt::format("unknown tier '{}' (tiers: cpu, vulkan, kfd, umq, auto)", name));
}

std::unique_ptr<Engine> openEngine(const std::string& modelRef, const GlobalOptions& options) {
    if (options.sim && options.tier != "kfd" && options.tier != "umq" && options.tier != "auto")
        throw CLI::ValidationError("--sim", fmt::format("only with --tier kfd, umq or auto (the tiers with a simulated GPU); the tier is {}",
                                                       options.tier));
    auto engine = std::make_unique<Engine>();
    engine->model = model::Model::load(models::resolveModel(modelRef));
    // The GGUF's own rope scaling (rope.scaling.* keys) extends the length --ctx may ask for
    // without --rope-scaling; --rope-scaling none runs past that with the GGUF's RoPE unchanged.
    const auto& config = engine->model->config();
    const int32_t trained = config.nCtxTrain;
    const int32_t scaled = std::max(trained, config.ropeScaling.scaledContext);
    if (trained > 0 && options.contextLength > scaled && options.ropeScaling.empty())
        throw CLI::ValidationError("--ctx", fmt::format("{} is out of range (allowed: [0, {}], the model's {}; "
                                                        "--rope-scaling none runs past it as trained)",
                                                        options.contextLength, scaled,
                                                        scaled > trained ? "length with its GGUF's rope scaling" : "trained length"));
    engine->graph = graph::buildDecodeGraph(engine->model->config(), engine->model->weights());
    GlobalOptions withStops = options;
    if (engine->model->hasTokenizer()) withStops.stopTokens = engine->model->tokenizer().endOfGenerationIds();
    engine->tier = makeTier(options.tier, engine->graph, options.tierOptions(), &withStops);
    return engine;
}

CLI::Validator allowedRange(double lo, double hi) {
    return CLI::Validator(
        [lo, hi](std::string& value) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(value.c_str(), &end);
            if (end == value.c_str() || *end != '\0') return fmt::format("'{}' is not a number", value);
            if (std::isnan(v) || v < lo || v > hi) return fmt::format("{} is out of range (allowed: {})", value, rangeText(lo, hi));
            return {};
        },
        rangeText(lo, hi));
}

CLI::Validator atLeast(double lo) { return allowedRange(lo, kUnbounded); }

CLI::Validator gfxTarget() {
    return CLI::Validator(
        [](std::string& value) -> std::string {
            if (value == "11" || value == "gfx1100") {
                value = "gfx1100";
            } else if (value == "12" || value == "gfx1201") {
                value = "gfx1201";
            } else {
                return fmt::format("'{}' is not a target (allowed: gfx1100 or 11, gfx1201 or 12)", value);
            }
            return {};
        },
        "gfx1100|11|gfx1201|12");
}

void addSamplingOptions(CLI::App& cmd, runtime::SamplerParams& p) {
    p.seed = std::random_device{}();
    cmd.add_option("--temp", p.temperature, "temperature; 0 = greedy")->capture_default_str()->check(atLeast(0));
    cmd.add_option("--top-k", p.topK, "keep the k most likely tokens; 0 = off")->capture_default_str()->check(atLeast(0));
    cmd.add_option("--top-p", p.topP, "nucleus sampling; 1 = off")->capture_default_str()->check(allowedRange(0, 1));
    cmd.add_option("--min-p", p.minP, "drop tokens below min-p x the top probability; 0 = off")
        ->capture_default_str()
        ->check(allowedRange(0, 1));
    cmd.add_option("--repeat-penalty", p.repeatPenalty, "penalise recent tokens; 1 = off")->capture_default_str()->check(allowedRange(0, 10));
    cmd.add_option("--repeat-last-n", p.repeatLastN, "how many recent tokens the penalty looks at")
        ->capture_default_str()
        ->check(atLeast(0));
    cmd.add_option("--seed", p.seed, "random seed; random (and printed) when not given");
}

}  // namespace zinc::tools
