#include "tools/pm4_tiers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "kfd/linux/host_gpus.h"
#include "kfd/linux/linux_device.h"
#include "kfd/sim/sim_device.h"
#include "kfd/tier/pm4_tier.h"
#include "kfd/tier/sampler_block.h"
#include "umq/availability.h"
#include "umq/drm_device.h"
#include "umq/sim_amdgpu.h"
#include "vulkan/vk_device.h"

namespace zinc::tools {
namespace {

using runtime::TierError;
constexpr const char* kNoFallback = "; pass --sim to run on the simulated GPU (no fallback is made)";

kfd::SubmitRoute routeOf(const GlobalOptions& g) {
    if (g.submit == "cs") return kfd::SubmitRoute::Cs;
    if (g.submit == "doorbell") return kfd::SubmitRoute::Doorbell;
    throw TierError(fmt::format("unknown --submit '{}' (doorbell or cs)", g.submit));
}

}  // namespace

std::vector<kfd::GpuEntry> listGpus(const GlobalOptions& g) {
    if (!g.sim) return kfd::listHostGpus(umq::readHostFacts().amdgpuRenderNodes);
    kfd::Result<kfd::GpuCaps> caps = kfd::capsFromGfxName(g.gfx);
    if (!caps) throw TierError(fmt::format("simulated GPU {}: {}", g.gfx, caps.error().describe()));
    std::vector<kfd::GpuEntry> gpus;
    for (uint32_t i = 0; i < g.simNodes; ++i) {
        kfd::GpuEntry e;
        e.kfdNode = i + 1;  // node 0 is the CPU, as KFD numbers them
        e.renderNode = fmt::format("/dev/dri/renderD{}", 128 + i);
        e.gfxName = caps->gfxName;
        e.vramBytes = caps->vramBytes;
        e.cpuVisibleVramBytes = g.simBarMiB ? std::min(g.simBarMiB << 20, caps->vramBytes) : caps->vramBytes;
        e.simulated = true;
        gpus.push_back(std::move(e));
    }
    kfd::numberGpus(gpus);
    return gpus;
}

kfd::GpuEntry chosenGpu(const GlobalOptions& g, const std::string& tierLabel) {
    kfd::Result<kfd::GpuEntry> gpu = kfd::pickGpu(listGpus(g), uint32_t(g.device), g.deviceChosen);
    if (!gpu) throw TierError(fmt::format("{}: {}", tierLabel, gpu.error().message));
    return *gpu;
}

std::shared_ptr<kfd::Device> openKfdNode(const GlobalOptions& g) {
    if (g.sim) {
        const kfd::GpuEntry gpu = chosenGpu(g, "kfd tier");
        kfd::SimOptions options;
        options.nodeIndex = g.simNodes > 1 ? *gpu.kfdNode : 0;
        options.cpuVisibleVramBytes = gpu.smallBar() ? gpu.cpuVisibleVramBytes : 0;
        kfd::Result<std::unique_ptr<kfd::Device>> sim = kfd::openSimulatedDevice(g.gfx, options);
        if (!sim) throw TierError(fmt::format("kfd tier: simulated GPU {}: {}", g.gfx, sim.error().describe()));
        return std::shared_ptr<kfd::Device>(std::move(*sim));
    }
    const std::string kfdPath = kfd::LinuxOptions{}.kfdPath;
    if (!std::filesystem::exists(kfdPath))
        throw TierError(fmt::format(
            "kfd tier: no KFD device: looked for {} (the amdgpu kernel driver's compute interface) and found nothing; "
            "pass --sim to run on the simulated GPU (no fallback is made)",
            kfdPath));
    const kfd::GpuEntry gpu = chosenGpu(g, "kfd tier");
    if (!gpu.kfdNode)
        throw TierError(fmt::format("kfd tier: {} has no KFD node (KFD does not list {}); use --tier=umq or --submit=cs on it",
                                    gpu.describe(), gpu.renderNode));
    kfd::LinuxOptions options;
    options.kfdPath = kfdPath;
    options.node = gpu.kfdNode;
    kfd::Result<std::unique_ptr<kfd::Device>> opened = kfd::openLinuxDevice(options);
    if (!opened)
        throw TierError(fmt::format("kfd tier: opening {} node {}: {} (pass --sim to run on the simulated GPU; no fallback is made)",
                                    kfdPath, *gpu.kfdNode, opened.error().describe()));
    return std::shared_ptr<kfd::Device>(std::move(*opened));
}

std::shared_ptr<kfd::Device> openAmdgpuNode(const GlobalOptions& g, const std::string& tierLabel, bool userQueues) {
    if (g.sim) {
        umq::SimAmdgpuOptions options;
        options.renderPath = chosenGpu(g, tierLabel).renderNode;
        kfd::Result<std::shared_ptr<umq::DrmDevice>> sim = umq::openSimulatedDrmDevice(g.gfx, options);
        if (!sim) throw TierError(fmt::format("{}: simulated amdgpu {}: {}", tierLabel, g.gfx, sim.error().describe()));
        return *sim;
    }
    const umq::HostFacts host = umq::readHostFacts();
    const umq::DoorReport door = userQueues ? umq::umqDoor(host) : umq::csDoor(host);
    if (!door.open) throw TierError(fmt::format("{}: {}{}", tierLabel, door.reason, kNoFallback));
    const kfd::GpuEntry gpu = chosenGpu(g, tierLabel);
    if (gpu.renderNode.empty()) throw TierError(fmt::format("{}: {} has no render node", tierLabel, gpu.describe()));
    umq::DrmOptions options;
    options.renderPath = gpu.renderNode;
    kfd::Result<std::unique_ptr<umq::DrmDevice>> opened = umq::openDrmDevice(options);
    if (!opened) throw TierError(fmt::format("{}: opening {}: {}{}", tierLabel, options.renderPath, opened.error().describe(), kNoFallback));
    if (userQueues)
        if (const std::string refusal = (*opened)->userQueueRefusal(); !refusal.empty())
            throw TierError(fmt::format("{}: {}{}", tierLabel, refusal, kNoFallback));
    return std::shared_ptr<kfd::Device>(std::move(*opened));
}

kfd::Pm4TierOptions pm4TierOptions(const std::string& name, const runtime::TierOptions& options, const GlobalOptions& g) {
    kfd::Pm4TierOptions o;
    o.dumpPm4Dir = g.dumpPm4;
    o.timeoutMs = options.waitTimeoutMs;
    o.route = routeOf(g);
    o.tierName = name;
    o.loop = g.loop;
    // The GPU sampler keeps the first kMaxStopIds; the host still stops on every one of them.
    o.stopTokens.assign(g.stopTokens.begin(), g.stopTokens.begin() + std::min<ptrdiff_t>(ptrdiff_t(g.stopTokens.size()), kfd::SamplerChain::kMaxStopIds));
    // Tests: a fault the simulated GPU makes once (kfd/tier/fault_spec.h); never on hardware.
    if (const char* fault = std::getenv("ZINC_SIM_FAULT"); fault && *fault) {
        if (!g.sim) throw TierError(fmt::format("{} tier: ZINC_SIM_FAULT is for the simulated GPU (--sim) only", name));
        o.injectFault = kfd::parseFaultSpec(fault);
    }
    return o;
}

std::unique_ptr<runtime::Tier> makePm4Tier(const std::string& name, const graph::Graph& graph, const runtime::TierOptions& options,
                                           const GlobalOptions& g) {
    kfd::Pm4TierOptions o = pm4TierOptions(name, options, g);
    if (name == "umq") {
        if (o.route == kfd::SubmitRoute::Cs)
            throw TierError("umq tier: --submit=cs is the kfd tier's second route; the umq tier submits through its user queue's doorbell "
                            "(use --tier=kfd --submit=cs)");
        return kfd::makePm4Tier(graph, options, openAmdgpuNode(g, "umq tier", true), o);
    }
    if (o.route == kfd::SubmitRoute::Cs) return kfd::makePm4Tier(graph, options, openAmdgpuNode(g, "kfd tier (--submit=cs)", false), o);
    return kfd::makePm4Tier(graph, options, openKfdNode(g), o);
}

namespace {

// The umq door as far as this machine goes: the host's facts, then the node's own answer.
std::string umqRefusal(const GlobalOptions& g, AutoChoice& c) {
    const umq::HostFacts host = umq::readHostFacts();
    if (const umq::DoorReport door = umq::umqDoor(host); !door.open) return door.reason;
    umq::DrmOptions options;
    options.renderPath = chosenGpu(g, "umq").renderNode;
    if (options.renderPath.empty()) return "the GPU --device picks has no render node";
    kfd::Result<std::unique_ptr<umq::DrmDevice>> opened = umq::openDrmDevice(options);
    if (!opened) return "opening " + options.renderPath + ": " + opened.error().describe();
    if (std::string refusal = (*opened)->userQueueRefusal(); !refusal.empty()) return refusal;
    c.why = umq::umqDoor(host, (*opened)->facts().userqIpMask).reason;
    c.device = std::shared_ptr<kfd::Device>(std::move(*opened));
    return "";
}

std::string kfdRefusal(const GlobalOptions& g, AutoChoice& c) {
    if (const std::string kfdPath = kfd::LinuxOptions{}.kfdPath; !std::filesystem::exists(kfdPath)) return "no " + kfdPath;
    try {
        GlobalOptions real = g;
        real.sim = false;
        c.device = openKfdNode(real);
    } catch (const std::exception& e) {
        return e.what();
    }
    c.why = c.device->name();
    return "";
}

std::string vulkanRefusal(const GlobalOptions&, AutoChoice& c) {
    std::vector<std::string> cpuOnly;
    for (const auto& d : vk::listDevices()) {
        if (!d.usable()) continue;
        if (d.type == "cpu") {
            cpuOnly.push_back(d.name);
            continue;
        }
        c.vulkanDevice = int32_t(d.index);
        c.why = fmt::format("Vulkan device {}: {}", d.index, d.name);
        return "";
    }
    if (!cpuOnly.empty()) return fmt::format("only a CPU Vulkan driver ({}), slower than the cpu tier", fmt::join(cpuOnly, ", "));
    return "no usable Vulkan GPU";
}

}  // namespace

AutoChoice chooseAutoTier(const GlobalOptions& g) {
    AutoChoice c;
    if (g.sim) {
        c.tier = "kfd";
        c.why = fmt::format("--sim: the kfd tier on the simulated {}, the simulator's reference path; --tier=umq --sim runs its user queues", g.gfx);
        return c;
    }
    const std::pair<const char*, std::string (*)(const GlobalOptions&, AutoChoice&)> doors[] = {
        {"umq", umqRefusal}, {"kfd", kfdRefusal}, {"vulkan", vulkanRefusal}};
    for (const auto& [tier, refusal] : doors) {
        std::string why;
        try {
            why = refusal(g, c);
        } catch (const std::exception& e) {
            why = e.what();
        }
        if (why.empty()) {
            c.tier = tier;
            return c;
        }
        c.device.reset();
        c.unavailable.push_back(fmt::format("{} unavailable: {}", tier, why));
    }
    c.tier = "cpu";
    c.why = "every core of this machine";
    return c;
}

std::string describe(const AutoChoice& c) {
    std::string line = fmt::format("tier auto: chose {} ({}", c.tier, c.why);
    for (const std::string& u : c.unavailable) line += "; " + u;
    return line + ")";
}

Doors doorsFor(const GlobalOptions& global, const umq::HostFacts& host) {
    if (global.sim)
        return {{true, fmt::format("simulated amdgpu driver ({}): USERQ answered (chosen by --sim)", global.gfx)},
                {true, fmt::format("simulated amdgpu driver ({}): CS answered on its kernel ring (chosen by --sim)", global.gfx)},
                {true, fmt::format("simulated KFD ({}) (chosen by --sim)", global.gfx)}};
    const std::string kfdPath = kfd::LinuxOptions{}.kfdPath;  // the KFD door is kfd/linux's, not umq's
    const bool kfdPresent = std::filesystem::exists(kfdPath);
    return {umq::umqDoor(host), umq::csDoor(host), {kfdPresent, kfdPresent ? kfdPath + " present" : "no " + kfdPath}};
}

}  // namespace zinc::tools
