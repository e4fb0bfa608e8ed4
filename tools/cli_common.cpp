#include "tools/cli_common.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "kfd/tier/pm4_tier.h"
#include "runtime/cpu/cpu_tier.h"
#include "tools/pm4_tiers.h"
#include "vulkan/vulkan_tier.h"

namespace zinc::tools {
namespace {

std::optional<int32_t> envInt(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v) return std::nullopt;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (*end != '\0') throw CLI::ValidationError(name, fmt::format("'{}' is not a whole number", v));
    return static_cast<int32_t>(n);
}

}  // namespace

void GlobalOptions::readEnvironment() {
    if (const char* t = std::getenv("ZINC_TIER"); t && *t) tier = t;
    threads = envInt("ZINC_THREADS").value_or(threads);
    contextLength = envInt("ZINC_CTX").value_or(contextLength);
    batch = envInt("ZINC_BATCH").value_or(batch);
    device = envInt("ZINC_DEVICE").value_or(device);
}

std::string GlobalOptions::describe() const {
    return fmt::format("tier={}\nthreads={}\nctx={}\nbatch={}\nprecision={}\ndevice={}\ngpu_timestamps={}\n", tier,
                       threads, contextLength, batch, precision, device, gpuTimestamps) +
           fmt::format("sim={}\ngfx={}\ndump_pm4={}\nsubmit={}\n", sim, gfx, dumpPm4, submit) +
           fmt::format("wait_timeout_ms={}\ndevice_memory_mib={}\nactivation_mib={}\n", waitTimeoutMs, deviceMemoryMiB,
                       activationMiB);
}

runtime::TierOptions GlobalOptions::tierOptions() const {
    if (batch < 1) throw runtime::TierError(fmt::format("--batch {}: a prefill step takes at least 1 token", batch));
    if (contextLength < 0) throw runtime::TierError(fmt::format("--ctx {}: the context length is 0 (the model's) or more", contextLength));
    runtime::TierOptions o;
    o.threads = threads;
    o.contextLength = contextLength;
    o.maxBatch = batch;
    o.activationBudget = activationMiB << 20;
    o.device = device;
    o.gpuTimestamps = gpuTimestamps;
    o.waitTimeoutMs = waitTimeoutMs;
    o.deviceMemoryLimit = deviceMemoryMiB << 20;
    if (precision == "f32")
        o.precision = runtime::Precision::F32;
    else if (precision != "ggml")
        throw runtime::TierError(fmt::format("unknown precision '{}' (ggml or f32)", precision));
    return o;
}

std::unique_ptr<runtime::Tier> makeTier(const std::string& name, const graph::Graph& graph,
                                        const runtime::TierOptions& options, const GlobalOptions* global) {
    if (name == "cpu") return cpu::makeCpuTier(graph, options);
    if (name == "vulkan") return vulkan::makeVulkanTier(graph, options, options.device);
    const GlobalOptions defaults;
    const GlobalOptions& g = global ? *global : defaults;
    if (name == "kfd" || name == "umq") return makePm4Tier(name, graph, options, g);
    if (name == "auto") {
        AutoChoice choice = chooseAutoTier(g);
        std::fprintf(stderr, "%s\n", describe(choice).c_str());
        if (choice.tier == "vulkan") return vulkan::makeVulkanTier(graph, options, choice.vulkanDevice);
        if (choice.tier == "cpu") return cpu::makeCpuTier(graph, options);
        if (!choice.device) return makePm4Tier(choice.tier, graph, options, g);
        kfd::Pm4TierOptions o;
        o.dumpPm4Dir = g.dumpPm4;
        o.tierName = choice.tier;
        o.timeoutMs = options.waitTimeoutMs;
        return kfd::makePm4Tier(graph, options, choice.device, o);
    }
    throw runtime::TierError(fmt::format("unknown tier '{}' (tiers: cpu, vulkan, kfd, umq, auto)", name));
}

std::unique_ptr<Engine> openEngine(const std::string& modelPath, const GlobalOptions& options) {
    auto engine = std::make_unique<Engine>();
    engine->model = model::Model::load(modelPath);
    engine->graph = graph::buildDecodeGraph(engine->model->config(), engine->model->weights());
    engine->tier = makeTier(options.tier, engine->graph, options.tierOptions(), &options);
    return engine;
}

void addSamplingOptions(CLI::App& cmd, runtime::SamplerParams& p) {
    cmd.add_option("--temp", p.temperature, "temperature; 0 = greedy")->capture_default_str();
    cmd.add_option("--top-k", p.topK, "keep the k most likely tokens; 0 = off")->capture_default_str();
    cmd.add_option("--top-p", p.topP, "nucleus sampling; 1 = off")->capture_default_str();
    cmd.add_option("--min-p", p.minP, "drop tokens below min-p x the top probability; 0 = off")->capture_default_str();
    cmd.add_option("--repeat-penalty", p.repeatPenalty, "penalise recent tokens; 1 = off")->capture_default_str();
    cmd.add_option("--repeat-last-n", p.repeatLastN, "how many recent tokens the penalty looks at")->capture_default_str();
    cmd.add_option("--seed", p.seed, "random seed")->capture_default_str();
}

}  // namespace zinc::tools
