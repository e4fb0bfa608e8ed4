#include <fmt/format.h>

#include <filesystem>

#include "kfd/sim_device.h"
#include "kfd/tier/kfd_tier.h"

namespace zinc::kfd {

std::shared_ptr<Device> openDevice(const DeviceChoice& choice) {
    if (choice.simulated) {
        Result<std::unique_ptr<Device>> sim = openSimulatedDevice(choice.gfx);
        if (!sim) throw runtime::TierError(fmt::format("kfd tier: simulated GPU {}: {}", choice.gfx, sim.error().describe()));
        return std::shared_ptr<Device>(std::move(*sim));
    }
    if (!std::filesystem::exists(choice.kfdPath))
        throw runtime::TierError(fmt::format(
            "kfd tier: no KFD device: looked for {} (the amdgpu kernel driver's compute interface) and found nothing; "
            "pass --sim to run on the simulated GPU (no fallback is made)",
            choice.kfdPath));
    LinuxOptions options;
    options.kfdPath = choice.kfdPath;
    Result<std::unique_ptr<Device>> opened = openLinuxDevice(options);
    if (!opened)
        throw runtime::TierError(fmt::format("kfd tier: opening {}: {} (pass --sim to run on the simulated GPU; no fallback is made)",
                                             choice.kfdPath, opened.error().describe()));
    return std::shared_ptr<Device>(std::move(*opened));
}

}  // namespace zinc::kfd
