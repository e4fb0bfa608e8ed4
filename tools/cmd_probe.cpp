// `zinc-rt probe [--sim] [--json] [--gfx gfx1100|gfx1201]`: the bring-up ladder (DESIGN.md
// "probe rungs"), rung by rung, from finding the device to the whole decode graph on it:
// device found -> VM acquired -> the queue rungs of kfd/device/ladder.h (memory, queue, NOP, doorbell,
// fence, GPU wait, copy, trivial dispatch) -> one real kernel equal to the cpu tier -> one
// token equal to the cpu tier -> every op of that token equal to the cpu tier's (the check mode of
// every tier, Tier::setCapture: names the first op that differs) -> the whole graph, N greedy
// tokens equal to the cpu tier. The model rungs' checks are runtime/tier_check.h; this prints.
// Each rung: pass/fail, time, and on failure the state that explains it. Without /dev/kfd it
// says so, and runs on the simulated GPU only when asked (--sim).
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>

#include "graph/graph.h"
#include "kernels/kernel_args.h"
#include "kernels/pocl_runner.h"
#include "kfd/device/kernel_ring.h"
#include "kfd/device/ladder.h"
#include "kfd/sim/sim_device.h"
#include "kfd/tier/pm4_tier.h"
#include "kfd/tier/plan_builder.h"
#include "kfd/tier/submitter.h"
#include "model/make_model/make_model.h"
#include "model/model.h"
#include "runtime/cpu/cpu_tier.h"
#include "runtime/cpu/kv_cache.h"
#include "runtime/cpu/op_context.h"
#include "runtime/cpu/quant_dot.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/sampler.h"
#include "runtime/tier_check.h"
#include "tools/cli_common.h"
#include "tools/pm4_tiers.h"
#include "umq/amdgpu_info.h"
#include "umq/availability.h"
#include "umq/drm_device.h"
#include "umq/sim_amdgpu.h"

namespace zinc::tools {
namespace {

using Clock = std::chrono::steady_clock;

struct ProbeOptions {
    bool json = false;
    std::string model;   // for the token rungs; default: stories260K from ../shared, else a made one
    int32_t tokens = 16; // greedy tokens of the last rung
    uint32_t timeoutMs = 20000;
};

const char* kLinuxHint = "; on Linux see `sudo dmesg | grep -iE 'amdgpu|kfd'` for a GPU page fault, a hung queue or a "
                         "failed CP reset";

// Runs `step` as the next rung unless an earlier one failed.
class Ladder {
public:
    explicit Ladder(bool onLinux) : hint_(onLinux ? kLinuxHint : "") {}
    bool failed() const { return failed_; }
    std::vector<kfd::Rung>& rungs() { return rungs_; }

    void climb(const std::string& name, const std::function<std::string()>& step) {
        kfd::Rung r{name, false, failed_, 0, ""};
        if (!failed_) {
            const auto start = Clock::now();
            try {
                r.detail = step();
                r.ok = true;
            } catch (const std::exception& e) {
                r.detail = e.what() + hint_;
            }
            r.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
            failed_ = !r.ok;
        }
        rungs_.push_back(std::move(r));
    }
    void add(kfd::Rung r) {
        if (failed_) r.skipped = true, r.ok = false;
        if (!r.ok && !r.skipped) {
            r.detail += hint_;
            failed_ = true;
        }
        rungs_.push_back(std::move(r));
    }

private:
    std::string hint_;
    std::vector<kfd::Rung> rungs_;
    bool failed_ = false;
};

// rms_norm on the device through the tier's own path (kernarg arena, IB, ring, fence) against
// the cpu tier's RMSNorm on the same numbers: they must agree bit for bit (kernels/README.md).
std::string realKernelRung(kfd::Device& device, uint32_t timeoutMs) {
    constexpr int32_t n = 1000, rows = 3;
    const float eps = 1e-5f;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
    std::vector<float> x(size_t(n) * rows), w(n);
    for (float& v : x) v = dist(rng);
    for (float& v : w) v = dist(rng);

    // The cpu tier's op over a one-op graph.
    model::ModelConfig config;
    config.nEmbd = n;
    config.normEps = eps;
    graph::Graph g;
    g.config = &config;
    g.buffers = {{"x", graph::ElemType::F32, n}, {"x_norm", graph::ElemType::F32, n}};
    const graph::MemoryPlan plan = graph::planMemory(g, rows);
    cpu::AlignedBytes arena(plan.arenaBytes), scratch;
    cpu::ThreadPool pool(1);
    cpu::KvCache kv(graph::KvLayout{}, 1, true);  // no attention here
    const std::vector<int32_t> tokens(rows, 0);
    model::WeightRef weight;
    weight.name = "probe_norm";
    weight.cols = n;
    weight.rows = 1;
    weight.rowBytes = size_t(n) * 4;
    weight.data = reinterpret_cast<const uint8_t*>(w.data());
    weight.nbytes = size_t(n) * 4;
    graph::Op op{graph::OpKind::RmsNorm, 0, "probe_rms_norm", 0};
    op.out = 1;
    op.weight = &weight;
    const cpu::OpContext ctx{g, plan, arena.data(), pool, kv, tokens, 0, 0, rows, nullptr, nullptr, runtime::Precision::Ggml, scratch};
    std::memcpy(ctx.f32(0, 0), x.data(), x.size() * 4);
    cpu::runOp(ctx, op);

    kfd::KernelTable kernels(device);
    kfd::DeviceMemory data(device, (2 * x.size() + w.size()) * 4, kfd::MemoryKind::Vram, "probe rms_norm data");
    float* dx = data.cpu<float>();
    std::memcpy(dx, x.data(), x.size() * 4);
    std::memcpy(dx + x.size(), w.data(), w.size() * 4);
    const uint64_t in = data.gpu(), weights = data.gpu(x.size() * 4), out = data.gpu((x.size() + w.size()) * 4);
    kfd::PlanBuilder builder(device, kernels, 1);
    builder.launch("rms_norm", kernels::RmsNormArgs{in, weights, out, n, eps, n, n}, {1, rows, 1}, {0}, {1}, "probe rms_norm");
    auto built = builder.finish("probe");
    kfd::SubmitterOptions so;
    so.timeoutMs = timeoutMs;
    kfd::Submitter submitter(device, kernels.gfx(), so);
    kfd::TokenSubmission sub;
    sub.ibAddress = built.ib.gpu();
    sub.ibDwords = built.ibDwords;
    sub.ibName = "probe";
    sub.what = "rms_norm";
    const uint64_t value = submitter.submit(sub, built.hostCopy);
    submitter.wait(value);
    const float* got = dx + x.size() + w.size();
    const float* want = ctx.f32(1, 0);
    for (size_t i = 0; i < x.size(); ++i)
        if (std::memcmp(&got[i], &want[i], 4) != 0)
            throw std::runtime_error(fmt::format("rms_norm element {} (row {}): GPU {} cpu tier {}; {}", i, i / n, got[i], want[i],
                                                 submitter.describeState()));
    return fmt::format("rms_norm over {} rows of {} floats bit-identical to the cpu tier's RMSNorm", rows, n);
}

// The model the token rungs run: the one asked for, stories260K from ../shared, or one made now.
std::string probeModel(const ProbeOptions& o, std::string& note) {
    if (!o.model.empty()) return o.model;
    const char* shared = std::getenv("ZINC_SHARED");
    for (const std::filesystem::path& base : {std::filesystem::path(shared ? shared : "../shared"), std::filesystem::path("../shared")})
        if (std::filesystem::exists(base / "models/stories260K.gguf")) return (base / "models/stories260K.gguf").string();
    const auto path = std::filesystem::temp_directory_path() / fmt::format("zinc-probe-{}.gguf", ::getpid());
    model::MakeModelOptions make;
    make.preset = "qwen3-tiny";
    make.outputPath = path.string();
    make.quantMix = "q8_0";
    make.progress = false;
    model::makeModel(make);
    note = " (stories260K not found; made " + path.string() + " with make-model qwen3-tiny q8_0)";
    return path.string();
}

struct Models {
    std::unique_ptr<model::Model> model;
    graph::Graph graph;
    std::unique_ptr<runtime::Tier> cpu, gpu;
};

// The tiers the model rungs compare: the cpu tier and the PM4 tier on `device` (`route`, `name`).
runtime::TierOptions modelRungOptions() {
    runtime::TierOptions options;
    options.threads = 2;
    options.contextLength = 128;
    options.maxBatch = 8;
    return options;
}

void loadModel(Models& m, const std::string& path) {
    if (m.model) return;
    m.model = model::Model::load(path);
    m.graph = graph::buildDecodeGraph(m.model->config(), m.model->weights());
    m.cpu = cpu::makeCpuTier(m.graph, modelRungOptions());
}

std::unique_ptr<runtime::Tier> pm4Tier(Models& m, const std::shared_ptr<kfd::Device>& device, kfd::SubmitRoute route,
                                       const std::string& name, uint32_t timeoutMs) {
    kfd::Pm4TierOptions o;
    o.timeoutMs = timeoutMs;
    o.route = route;
    o.tierName = name;
    return kfd::makePm4Tier(m.graph, modelRungOptions(), device, o);
}

// The cpu tier's generic kernels for one scope: the GPU kernels match those bit for bit (the
// AVX2 ones sum in another order: on random-weight models a near-tie can then flip).
struct GenericCpuKernels {
    GenericCpuKernels() { cpu::forceGenericQuantKernels(true); }
    ~GenericCpuKernels() { cpu::forceGenericQuantKernels(false); }
};

// The CS route's own rung: one IB (WRITE_DATA) as a job on the kernel's ring, its syncobj waited.
std::string csJobRung(kfd::Device& device, uint32_t timeoutMs) {
    kfd::Result<std::unique_ptr<kfd::KernelRing>> ring = device.openKernelRing();
    if (!ring) throw std::runtime_error(ring.error().describe());
    kfd::DeviceMemory page(device, 4096, kfd::MemoryKind::Gtt, "CS probe IB", {.uncached = true});
    std::vector<uint32_t> storage(64);
    pm4::Stream s(storage, device.caps().gfxMajor >= 12 ? pm4::Gfx::Gfx12 : pm4::Gfx::Gfx11);
    s.writeData({.address = page.gpu(2048)}, {0xC5C5C001});
    std::copy(s.dwords().begin(), s.dwords().end(), page.cpu<uint32_t>());
    const kfd::IbRange ib{page.gpu(), s.size()};
    kfd::Result<uint64_t> job = (*ring)->submit({&ib, 1});
    if (!job) throw std::runtime_error(job.error().describe());
    if (kfd::Status w = (*ring)->wait(*job, timeoutMs); !w) throw std::runtime_error(w.error().describe());
    const uint32_t landed = std::atomic_ref<uint32_t>(*page.cpu<uint32_t>(2048)).load(std::memory_order_acquire);
    if (landed != 0xC5C5C001) throw std::runtime_error(fmt::format("the syncobj signalled but the IB's WRITE_DATA target holds {:#x}", landed));
    return fmt::format("{}: job {} (one IB, WRITE_DATA) retired, syncobj signalled, value landed", (*ring)->name(), *job);
}

struct DoorContext {
    const GlobalOptions& global;
    const ProbeOptions& options;
    std::shared_ptr<kernels::PoclRunner> runner;  // --sim: shared with the KFD ladder's device
    Models& models;
    std::string& modelPath;
    std::string& note;
};

// umq::describe's two lines as one, for a rung's detail.
std::string oneLine(std::string text) {
    for (size_t at; (at = text.find("\n  ")) != std::string::npos;) text.replace(at, 3, "; ");
    return text;
}

// The amdgpu node of a door: simulated with --sim, else the render node --device picks.
std::shared_ptr<kfd::Device> openDoorNode(const DoorContext& c, bool userQueues, std::string& detail) {
    if (c.global.sim) {
        kfd::Result<std::shared_ptr<umq::DrmDevice>> sim = umq::openSimulatedDrmDevice(c.global.gfx, {.runner = c.runner});
        if (!sim) throw std::runtime_error(sim.error().describe());
        kfd::Result<umq::AmdgpuInfo> info = umq::simulatedAmdgpuInfo(c.global.gfx);
        detail = (*sim)->name() + (info ? "; " + oneLine(umq::describe(*info)) : "");
        return *sim;
    }
    umq::DrmOptions o;
    o.renderPath = chosenGpu(c.global, userQueues ? "umq" : "cs").renderNode;
    kfd::Result<std::unique_ptr<umq::DrmDevice>> opened = umq::openDrmDevice(o);
    if (!opened) throw std::runtime_error(opened.error().describe());
    if (userQueues)
        if (std::string refusal = (*opened)->userQueueRefusal(); !refusal.empty()) throw std::runtime_error(refusal);
    kfd::Result<umq::AmdgpuInfo> info = umq::queryAmdgpuInfo(o.renderPath);
    detail = (*opened)->name() + (info ? "; " + oneLine(umq::describe(*info)) : "; libdrm: " + info.error().describe());
    return std::shared_ptr<kfd::Device>(std::move(*opened));
}

// A door's rungs, prefixed "umq: " / "cs: ". A shut door lists them as skipped, the first one
// saying why; it does not fail the probe (the machine just lacks that door).
std::vector<kfd::Rung> climbDoor(const DoorContext& c, bool userQueues, const umq::DoorReport& door) {
    const std::string prefix = userQueues ? "umq: " : "cs: ";
    std::vector<std::string> names = {"door open", "device found"};
    if (userQueues) {
        for (const char* n : {"memory mapped (VRAM, GTT, doorbell)", "queue created", "NOP retired", "doorbell observed", "fence retired",
                              "GPU wait released by the CPU", "copy (WRITE_DATA/COPY_DATA)", "trivial dispatch"})
            names.emplace_back(n);
    } else {
        names.emplace_back("job retired (IB chunk, syncobj wait)");
    }
    names.emplace_back("one token equal to the cpu tier");
    Ladder ladder(!c.global.sim);
    if (!door.open) {
        std::vector<kfd::Rung> rungs;
        for (const std::string& n : names) rungs.push_back({prefix + n, false, true, 0, rungs.empty() ? "shut: " + door.reason : ""});
        return rungs;
    }
    ladder.climb(prefix + names[0], [&] { return door.reason; });
    std::shared_ptr<kfd::Device> device;
    ladder.climb(prefix + names[1], [&] {
        std::string detail;
        device = openDoorNode(c, userQueues, detail);
        return detail;
    });
    if (userQueues && device && !ladder.failed()) {
        kfd::LadderOptions lo;
        lo.timeoutMs = c.options.timeoutMs;
        const auto* drm = dynamic_cast<const umq::DrmDevice*>(device.get());
        for (kfd::Rung& r : kfd::climbLadder(*device, lo)) {
            // Which compute MQD this kernel took (with a context-save area or EOP only).
            if (r.name == "queue created" && r.ok && drm)
                r.detail += (r.detail.empty() ? "" : "; ") + umq::describeMqd(drm->facts(), drm->caps().queueBuffers.ctxSaveMappingBytes);
            if (r.name != "device found") ladder.add({prefix + r.name, r.ok, r.skipped, r.ms, r.detail});
        }
    } else if (userQueues) {
        for (size_t i = 2; i + 1 < names.size(); ++i) ladder.add({prefix + names[i], false, true, 0, ""});
    } else {
        ladder.climb(prefix + names[2], [&] { return csJobRung(*device, c.options.timeoutMs); });
    }
    ladder.climb(prefix + names.back(), [&] {
        if (c.modelPath.empty()) c.modelPath = probeModel(c.options, c.note);
        loadModel(c.models, c.modelPath);
        auto tier = pm4Tier(c.models, device, userQueues ? kfd::SubmitRoute::Doorbell : kfd::SubmitRoute::Cs,
                            userQueues ? "umq" : "kfd", c.options.timeoutMs);
        return runtime::checkOneToken(*c.models.cpu, *tier, 1, c.models.model->config().nVocab) + "; " + tier->describe();
    });
    return ladder.rungs();
}

int runProbe(const GlobalOptions& global, const ProbeOptions& o) {
    const bool hasKfd = std::filesystem::exists("/dev/kfd");
    const bool onLinux = !global.sim;
    Ladder ladder(onLinux);
    std::shared_ptr<kfd::Device> device;
    std::shared_ptr<kernels::PoclRunner> runner;
    std::string note;
    if (onLinux && !hasKfd) {
        ladder.add({"device found", false, false, 0,
                    "no /dev/kfd: looked for the amdgpu driver's KFD interface (/dev/kfd, /sys/class/kfd/kfd/topology) and found "
                    "none; `zinc-rt probe --sim` runs the ladder on the simulated GPU"});
    } else if (onLinux) {
        ladder.climb("device found", [] { return std::string("/dev/kfd present"); });
        ladder.climb("VM acquired", [&] {
            device = openKfdNode(global);  // the KFD node --device picks
            return device->name() + ": GET_VERSION and ACQUIRE_VM done";
        });
    } else {
        ladder.climb("device found", [&] {
            if (kfd::simExecFromEnvironment() == kfd::SimExec::Pocl) runner = std::make_shared<kernels::PoclRunner>();
            kfd::Result<std::unique_ptr<kfd::Device>> sim = kfd::openSimulatedDevice(global.gfx, {.runner = runner});
            if (!sim) throw std::runtime_error(sim.error().describe());
            device = std::shared_ptr<kfd::Device>(std::move(*sim));
            return device->name() + (hasKfd ? " (chosen by --sim; /dev/kfd is present)" : " (chosen by --sim; no /dev/kfd here)");
        });
        ladder.climb("VM acquired", [] { return std::string("simulated: one address space, GPU VA = host pointer"); });
    }
    if (device && !ladder.failed()) {
        kfd::LadderOptions lo;
        lo.timeoutMs = o.timeoutMs;
        for (kfd::Rung& r : kfd::climbLadder(*device, lo))
            if (r.name != "device found") ladder.add(std::move(r));
    }
    const std::vector<std::string> later = {"one real kernel equal to the cpu tier", "one token equal to the cpu tier",
                                            "every op of one token equal to the cpu tier", fmt::format("whole graph, {} tokens", o.tokens)};
    Models models;
    std::string path;
    ladder.climb(later[0], [&] { return realKernelRung(*device, o.timeoutMs); });
    ladder.climb(later[1], [&] {
        path = probeModel(o, note);
        loadModel(models, path);
        models.gpu = pm4Tier(models, device, kfd::SubmitRoute::Doorbell, "kfd", o.timeoutMs);
        return fmt::format("{}{}: {}; {}", std::filesystem::path(path).filename().string(), note,
                           runtime::checkOneToken(*models.cpu, *models.gpu, 1, models.model->config().nVocab), models.gpu->describe());
    });
    ladder.climb(later[2], [&] {
        GenericCpuKernels generic;
        return runtime::checkEveryOp(*models.cpu, *models.gpu, models.graph, 1);
    });
    ladder.climb(later[3], [&] {
        GenericCpuKernels generic;
        return runtime::checkGreedy(*models.cpu, *models.gpu, o.tokens, models.model->config().nVocab);
    });

    // The amdgpu DRM doors, each its own chain: user queues (T2) and the CS ioctl route.
    const umq::HostFacts host = umq::readHostFacts();
    const Doors open = doorsFor(global, host);
    const umq::DoorReport& umqDoor = open.umq;
    const umq::DoorReport& csDoor = open.cs;
    if (global.sim && !runner && kfd::simExecFromEnvironment() == kfd::SimExec::Pocl) runner = std::make_shared<kernels::PoclRunner>();
    const DoorContext doors{global, o, runner, models, path, note};
    std::vector<kfd::Rung> doorRungs = climbDoor(doors, true, umqDoor);
    for (kfd::Rung& r : climbDoor(doors, false, csDoor)) doorRungs.push_back(std::move(r));
    bool doorFailed = false;
    for (const kfd::Rung& r : doorRungs) doorFailed = doorFailed || (!r.ok && !r.skipped);
    for (kfd::Rung& r : doorRungs) ladder.rungs().push_back(std::move(r));
    const bool failed = ladder.failed() || doorFailed;
    if (!note.empty()) {  // the model made for this run
        models = Models{};
        std::error_code ignored;
        std::filesystem::remove(path, ignored);
    }

    if (o.json) {
        nlohmann::json out;
        out["device"] = device ? device->name() : "";
        out["simulated"] = global.sim;
        out["kfd_present"] = hasKfd;
        out["ok"] = !failed;
        out["doors"] = {{"umq", {{"open", umqDoor.open}, {"reason", umqDoor.reason}}}, {"cs", {{"open", csDoor.open}, {"reason", csDoor.reason}}}};
        for (const kfd::Rung& r : ladder.rungs())
            out["rungs"].push_back({{"name", r.name}, {"ok", r.ok}, {"skipped", r.skipped}, {"ms", r.ms}, {"detail", r.detail}});
        std::fputs((out.dump(2) + "\n").c_str(), stdout);
    } else {
        std::fputs(kfd::formatLadder(ladder.rungs()).c_str(), stdout);
        std::fputs(failed ? "probe: FAILED\n" : "probe: every rung tried passed\n", stdout);
    }
    return failed ? 1 : 0;
}

}  // namespace

void addProbeCommand(CLI::App& app, const GlobalOptions& global) {
    auto o = std::make_shared<ProbeOptions>();
    auto* cmd = app.add_subcommand("probe", "climb the bring-up ladder rung by rung: KFD, then the amdgpu doors (user queues, CS) (--sim: on the simulated GPU)");
    cmd->add_flag("--json", o->json, "one JSON object: every rung with ok, skipped, ms and detail");
    cmd->add_option("--model", o->model, "model for the token rungs (default: ../shared/models/stories260K.gguf, else one made now)");
    cmd->add_option("--tokens", o->tokens, "greedy tokens of the whole-graph rung")->capture_default_str();
    cmd->add_option("--timeout-ms", o->timeoutMs, "bound on every wait")->capture_default_str();
    cmd->callback([&global, o] {
        const int rc = runProbe(global, *o);
        if (rc != 0) {
            std::fflush(stdout);
            std::exit(rc);
        }
    });
}

}  // namespace zinc::tools
