// `zinc-rt devices`: the amdgpu render nodes (libdrm_amdgpu: GPU, CUs, memory, MEC/MES firmware,
// user queues) with the doors each opens, then the Vulkan devices the loader reports, with what
// the vulkan tier needs checked on each (pass the index to --device), and between them the
// --device mapping of the kfd/umq tiers. `--sim` adds the simulated amdgpu node and lists the
// --sim-nodes simulated GPUs instead of this machine's.
#include <fmt/format.h>

#include "kfd/device/gpu_list.h"
#include "tools/cli_common.h"
#include "tools/pm4_tiers.h"
#include "umq/amdgpu_info.h"
#include "umq/availability.h"
#include "vulkan/vk_device.h"

namespace zinc::tools {
namespace {

void listAmdgpuNodes(const GlobalOptions& global) {
    const umq::HostFacts host = umq::readHostFacts();
    if (host.amdgpuRenderNodes.empty()) fmt::print("amdgpu: {}\n", umq::noRenderNodeReason(host));
    for (const std::string& node : host.amdgpuRenderNodes) {
        kfd::Result<umq::AmdgpuInfo> info = umq::queryAmdgpuInfo(node);
        if (info)
            fmt::print("amdgpu {}\n", umq::describe(*info));
        else
            fmt::print("amdgpu {}: libdrm_amdgpu could not query it: {}\n", node, info.error().describe());
    }
    if (global.sim) {
        kfd::Result<umq::AmdgpuInfo> sim = umq::simulatedAmdgpuInfo(global.gfx);
        if (sim) fmt::print("amdgpu {}\n", umq::describe(*sim));
    }
    const Doors doors = doorsFor(global, host);
    auto state = [](const umq::DoorReport& d) { return d.open ? "open" : "shut"; };
    fmt::print("doors: umq {}: {}\n       cs  {}: {}\n       kfd {}: {}\n", state(doors.umq), doors.umq.reason, state(doors.cs),
               doors.cs.reason, state(doors.kfd), doors.kfd.reason);
}

// The --device mapping of the PM4 tiers: index -> KFD node / render node / gfx / VRAM / BAR.
void listPm4Gpus(const GlobalOptions& global) {
    std::vector<kfd::GpuEntry> gpus;
    try {
        gpus = listGpus(global);
    } catch (const std::exception& e) {
        fmt::print("kfd/umq --device: {}\n", e.what());
        return;
    }
    if (gpus.empty()) {
        fmt::print("kfd/umq --device: no GPU (no KFD GPU node, no amdgpu render node)\n");
        return;
    }
    fmt::print("kfd/umq --device (integrated GPUs numbered last, used only when --device names them):\n");
    for (const kfd::GpuEntry& g : gpus) fmt::print("  {}{}\n", g.describe(), g.index == uint32_t(global.device) ? "  <- --device" : "");
}

void listVulkanDevices() {
    const auto devices = vk::listDevices();
    if (devices.empty()) {
        fmt::print("no Vulkan devices (install mesa-vulkan-drivers for lavapipe, or a GPU driver)\n");
        return;
    }
    for (const auto& d : devices) {
        fmt::print("device {}: {}\n", d.index, d.name);
        fmt::print("  type {}, driver {} ({}), Vulkan {}\n", d.type, d.driverName, d.driverInfo, d.apiString());
        fmt::print("  subgroup {}, shared memory {} KiB, device-local memory {:.1f} GiB, max allocation {:.1f} GiB\n",
                   d.subgroupSize, d.sharedMemoryBytes / 1024, static_cast<double>(d.deviceLocalBytes) / (1 << 30),
                   static_cast<double>(d.maxAllocationBytes) / (1 << 30));
        if (d.computeUnits > 0)
            fmt::print("  {} compute units ({})\n", d.computeUnits,
                       d.threadsPerUnit > 0 ? fmt::format("SMs of {} threads", d.threadsPerUnit) : fmt::format("CUs of {} SIMDs", d.simdsPerUnit));
        fmt::print("  has: {}\n", fmt::join(d.features, ", "));
        if (d.usable())
            fmt::print("  vulkan tier: usable (--tier=vulkan --device {})\n", d.index);
        else
            fmt::print("  vulkan tier: not usable, lacks {}\n", fmt::join(d.missing, ", "));
    }
}

}  // namespace

void addDevicesCommand(CLI::App& app, const GlobalOptions& global) {
    auto* cmd = app.add_subcommand("devices", "list the amdgpu render nodes (and the doors they open) and the Vulkan devices");
    cmd->callback([&global] {
        listAmdgpuNodes(global);
        listPm4Gpus(global);
        listVulkanDevices();
    });
}

}  // namespace zinc::tools
