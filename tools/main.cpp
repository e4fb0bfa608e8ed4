// zinc-rt: the command line. Global options (--tier, --threads, --ctx) come before or after
// the command; every error ends in one line on stderr and a non-zero exit.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "tools/cli_common.h"

int main(int argc, char** argv) {
    using namespace zinc::tools;
    GlobalOptions global;
    CLI::App app{"zinc-rt: LLM inference with direct GPU submission; the cpu tier is the correctness oracle"};
    app.set_version_flag("--version", "zinc-rt 0.1.0");
    app.require_subcommand(0, 1);
    app.fallthrough();
    try {
        global.readEnvironment();
    } catch (const CLI::Error& e) {
        std::fprintf(stderr, "zinc-rt: error: %s\n", e.what());
        return 2;
    }
    app.add_option("--tier", global.tier, "cpu | vulkan | kfd | umq | auto (env ZINC_TIER)")->capture_default_str();
    app.add_option("--threads", global.threads, "cpu tier threads; 0 = all cores (env ZINC_THREADS)")->check(atLeast(0));
    app.add_option("--ctx", global.contextLength, "context length; 0 = min(model, 4096) (env ZINC_CTX)")->check(atLeast(0));
    app.add_option("--rope-scaling", global.ropeScaling,
                   "how to run with --ctx beyond the model's trained length (or the length its GGUF's own rope scaling reaches): "
                   "none (the GGUF's RoPE as it is, quality degrades)")
        ->check(CLI::IsMember({"none"}));
    app.add_option("--batch", global.batch, "prompt tokens per prefill step, at most (env ZINC_BATCH)")->capture_default_str()->check(atLeast(1));
    app.add_option("--activation-mib", global.activationMiB,
                   "MiB the activation arena may take: a prefill step takes the tokens that fit, up to --batch "
                   "(default: 64 where it is host memory, 4096 in a discrete GPU's memory)")
        ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
    app.add_option("--delta-chunk", global.deltaChunk,
                   "hybrid (DeltaNet) models, cpu and vulkan tiers: prefill runs the delta rule in chunks of this many "
                   "tokens (the chunked / WY form); 0 = token by token (the recurrence)")
        ->capture_default_str()
        ->check(CLI::Range(0, 64));
    app.add_option("--precision", global.precision,
                   "cpu tier rounding: ggml (as llama.cpp: 8-bit activations, F16 KV) or f32")
        ->capture_default_str();
    app.add_option_function<int32_t>("--device", [&global](int32_t d) { global.device = d; global.deviceChosen = true; },
                   "GPU tiers: device index, see `zinc-rt devices`; integrated GPUs are numbered after discrete ones and "
                   "used only when named here (env ZINC_DEVICE)")
        ->check(atLeast(0));
    app.add_flag("--gpu-timestamps", global.gpuTimestamps, "GPU tiers: time each submission with timestamp queries");
    app.add_flag("--sim", global.sim, "kfd/umq tiers, probe, devices: run on the simulated GPU (never chosen without this flag)");
    app.add_option_function<std::string>("--sim-exec", [](const std::string& v) { setenv("ZINC_SIM_EXEC", v.c_str(), 1); }, "the simulated GPU runs the kernels' machine code in the ISA interpreter (isa, the default) or their OpenCL C on PoCL (pocl, faster); env ZINC_SIM_EXEC")->check(CLI::IsMember({"isa", "pocl"}));
    app.add_option("--sim-nodes", global.simNodes, "--sim: GPU nodes of the simulated machine, all of --gfx (--device picks one)")
        ->capture_default_str()->check(CLI::Range(1u, 8u));
    app.add_option("--sim-bar-mib", global.simBarMiB,
                   "--sim, kfd tier: MiB of the simulated GPU's VRAM the CPU can map (a small BAR: weights and KV then go "
                   "through a GTT staging buffer and a CP copy); 0 = all")
        ->capture_default_str()->check(atLeast(0));
    app.add_option("--gfx", global.gfx, "the simulated GPU's target: gfx1100 (or 11), gfx1201 (or 12)")->transform(gfxTarget())->capture_default_str();
    app.add_option("--dump-pm4", global.dumpPm4, "kfd tier: write the IBs and ring dwords submitted to this folder (read with `zinc-rt pm4 decode`)");
    app.add_option("--submit", global.submit,
                   "kfd tier: doorbell (a KFD queue of ours) or cs (the same IBs through the amdgpu CS ioctl, the kernel's ring)")
        ->check(CLI::IsMember({"doorbell", "cs"}))
        ->capture_default_str();
    app.add_flag("--loop", global.loop,
                 "kfd/umq tiers: sampled generation as one persistent command-processor loop (no doorbell or syscall per token); "
                 "not with --submit=cs, whose jobs the kernel resets past its job timeout");
    app.add_option("--wait-timeout", global.waitTimeoutMs,
                   "GPU tiers: give up waiting for the GPU after this many ms, with the queue's state")
        ->capture_default_str()->check(CLI::Range(1u, 3600000u));
    app.add_option("--device-memory", global.deviceMemoryMiB,
                   "GPU tiers: MiB of device memory to use at most; 0 = all the device has")
        ->capture_default_str()->check(atLeast(0));
    app.add_flag("--print-config", global.printConfig, "print the settings in force and exit");
    addRunCommand(app, global);
    addChatCommand(app, global);
    addServeCommand(app, global);
    addScoreCommand(app, global);
    addBenchCommand(app, global);
    addBenchServeCommand(app, global);
    addGgufCommand(app, global);
    addMakeModelCommand(app, global);
    addPm4Command(app, global);
    addProbeCommand(app, global);
    addDevicesCommand(app, global);
    addTraceCommand(app, global);
    addAbCommand(app, global);
    addModelCommands(app, global);
    addKernelsCommand(app, global);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "zinc-rt: error: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fflush(stdout);
        std::fprintf(stderr, "zinc-rt: error: %s\n", e.what());
        return 1;
    }
    if (global.printConfig) {
        std::fputs(global.describe().c_str(), stdout);
        return 0;
    }
    if (app.get_subcommands().empty()) {
        std::fputs(app.help().c_str(), stderr);
        return 2;
    }
    return 0;
}
