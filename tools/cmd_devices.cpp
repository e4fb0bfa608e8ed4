// `zinc-rt devices`: the Vulkan devices the loader reports, with what the vulkan tier needs
// checked on each (pass the index to --device).
#include <fmt/format.h>

#include "tools/cli_common.h"
#include "vulkan/vk_device.h"

namespace zinc::tools {
namespace {

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
        fmt::print("  has: {}\n", fmt::join(d.features, ", "));
        if (d.usable())
            fmt::print("  vulkan tier: usable (--tier=vulkan --device {})\n", d.index);
        else
            fmt::print("  vulkan tier: not usable, lacks {}\n", fmt::join(d.missing, ", "));
    }
}

}  // namespace

void addDevicesCommand(CLI::App& app, const GlobalOptions& /*global*/) {
    auto* cmd = app.add_subcommand("devices", "list the Vulkan devices and whether the vulkan tier can use each");
    cmd->callback([] { listVulkanDevices(); });
}

}  // namespace zinc::tools
