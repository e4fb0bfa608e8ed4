#pragma once
// What every zinc-rt command shares: the global options (read once from the command line and
// ZINC_* variables), opening a model on a tier by name, and sampling options.
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "graph/graph.h"
#include "model/model.h"
#include "runtime/sampler.h"
#include "runtime/tier.h"

namespace zinc::tools {

struct GlobalOptions {
    std::string tier = "cpu";
    int32_t threads = 0;
    int32_t contextLength = 0;
    int32_t batch = 512;
    uint64_t activationMiB = 0;       // activation arena budget (0: the tier's default): a prefill step takes the tokens that fit
    std::string precision = "ggml";
    int32_t deltaChunk = runtime::TierOptions{}.deltaChunk;  // DeltaNet prefill chunk; 0 = the recurrence
    int32_t device = 0;          // GPU tiers: device index (env ZINC_DEVICE)
    bool deviceChosen = false;   // --device or ZINC_DEVICE given: an integrated GPU may be picked
    bool gpuTimestamps = false;  // GPU tiers: time submissions with timestamp queries
    bool sim = false;            // kfd tier, probe: the simulated GPU, chosen explicitly
    std::string gfx = "gfx1100"; // the simulated GPU's target (gfx1100 | gfx1201)
    uint32_t simNodes = 1;       // --sim: how many GPU nodes the simulated machine has (--device picks one)
    uint64_t simBarMiB = 0;      // --sim: CPU-visible VRAM of the simulated GPU (a small BAR); 0 = all
    std::string dumpPm4;         // kfd tier: folder for the IBs and ring dwords submitted
    std::string submit = "doorbell";  // kfd tier: doorbell (a KFD queue) or cs (the amdgpu CS ioctl)
    bool loop = false;                // kfd/umq tiers: sampled generation as a persistent CP loop
    uint32_t waitTimeoutMs = 120000;  // GPU tiers: bound on every wait for the GPU
    uint64_t deviceMemoryMiB = 0;     // GPU tiers: device memory to use at most; 0 = all there is
    int32_t sequences = 1;            // KV slots the tier holds (serve --parallel)
    // Not an option: serve's default --parallel. > 0: the vulkan tier holds this many KV slots
    // (and copies of a hybrid's recurrent state) instead of `sequences`.
    int32_t gpuSequences = 0;
    std::string ropeScaling;          // how to run past the model's trained context: "none" (as trained)
    bool printConfig = false;
    // Not an option: openEngine fills it from the model's tokenizer (its end-of-generation ids), for
    // the tiers that decide the end of a generation on the GPU.
    std::vector<int32_t> stopTokens;

    // Fills defaults from ZINC_TIER, ZINC_THREADS, ZINC_CTX, ZINC_BATCH, ZINC_DEVICE before parsing.
    void readEnvironment();
    std::string describe() const;
    runtime::TierOptions tierOptions() const;
};

// A model opened on a tier: the model, its decode graph and the tier that runs it.
struct Engine {
    std::unique_ptr<model::Model> model;
    graph::Graph graph;
    std::unique_ptr<runtime::Tier> tier;
};

// Throws TierError for a tier this build or machine lacks, naming what was looked for.
std::unique_ptr<runtime::Tier> makeTier(const std::string& name, const graph::Graph& graph,
                                        const runtime::TierOptions& options, const GlobalOptions* global = nullptr);
// modelRef is a GGUF path or the name of a model in the cache (`zinc-rt ls`). Refuses, as a
// CLI::ValidationError (exit 2), --sim with a tier that has no simulated GPU and --ctx beyond the
// model's trained length without --rope-scaling.
std::unique_ptr<Engine> openEngine(const std::string& modelRef, const GlobalOptions& options);

// Range checks for options: a CLI11 validator whose error names the value and the allowed range
// ("--top-p: 2 is out of range (allowed: [0, 1])"), so a bad value is one line and exit 2.
CLI::Validator allowedRange(double lo, double hi);
CLI::Validator atLeast(double lo);
// --gfx everywhere: gfx1100 or 11 (RDNA3), gfx1201 or 12 (RDNA4); normalized to the gfx name.
CLI::Validator gfxTarget();

// The sampling options; the seed defaults to a random one (SamplerParams::describe prints it).
void addSamplingOptions(CLI::App& cmd, runtime::SamplerParams& params);

// Each command registers itself on the app and runs when selected.
void addRunCommand(CLI::App& app, const GlobalOptions& global);
void addChatCommand(CLI::App& app, const GlobalOptions& global);
void addServeCommand(CLI::App& app, const GlobalOptions& global);
void addBenchServeCommand(CLI::App& app, const GlobalOptions& global);
void addScoreCommand(CLI::App& app, const GlobalOptions& global);
void addBenchCommand(CLI::App& app, const GlobalOptions& global);
void addGgufCommand(CLI::App& app, const GlobalOptions& global);
void addMakeModelCommand(CLI::App& app, const GlobalOptions& global);
void addPm4Command(CLI::App& app, const GlobalOptions& global);
void addProbeCommand(CLI::App& app, const GlobalOptions& global);
void addDevicesCommand(CLI::App& app, const GlobalOptions& global);
void addTraceCommand(CLI::App& app, const GlobalOptions& global);
void addAbCommand(CLI::App& app, const GlobalOptions& global);
void addModelCommands(CLI::App& app, const GlobalOptions& global);  // pull, ls, rm
void addKernelsCommand(CLI::App& app, const GlobalOptions& global);

}  // namespace zinc::tools
