#pragma once
// The /dev/kfd door: kfd::Device over the Linux KFD driver (ioctls through kfd/device/syscalls.h,
// GPU nodes from the KFD topology in sysfs).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kfd/device/device.h"

namespace zinc::kfd {

// Linux: /dev/kfd and the topology under `topologyRoot`. `node` picks a GPU node by index;
// by default the first GPU node.
class Syscalls;
struct LinuxOptions {
    std::string kfdPath = "/dev/kfd";
    std::string topologyRoot = "/sys/class/kfd/kfd/topology";
    std::string driPath = "/dev/dri";
    std::string sysfsDrm = "/sys/class/drm";  // mem_info_vis_vram_total: the BAR window
    std::optional<uint32_t> node;
    Syscalls* syscalls = nullptr;  // null: the real ones (kfd/device/syscalls.h); tests pass a fake KFD
};
Result<std::unique_ptr<Device>> openLinuxDevice(const LinuxOptions& options = {});

}  // namespace zinc::kfd
