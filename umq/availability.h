#pragma once
// Which of the amdgpu render node's doors to the GPU this machine opens, and why the others are
// shut (one line each):
//   umq  amdgpu user-mode queues: an amdgpu render node, Linux >= 6.16, the amdgpu.user_queue
//        module parameter not 0, and the node reporting COMPUTE in userq_ip_mask (FACTS.md §6.2);
//   cs   the amdgpu CS ioctl: an amdgpu render node (every amdgpu kernel has it).
// The KFD door (/dev/kfd) is kfd/linux's (kfd::LinuxOptions::kfdPath), never looked at here.
// The facts are read once into HostFacts, so tests can hand in any machine.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "kfd/device/result.h"

namespace zinc::umq {

struct HostPaths {
    std::string dri = "/dev/dri";
    std::string sysfsDrm = "/sys/class/drm";
    std::string userQueueParam = "/sys/module/amdgpu/parameters/user_queue";
};

struct HostFacts {
    std::string kernelRelease;                 // uname -r
    std::optional<int> userQueueParam;         // amdgpu.user_queue when the module is loaded
    std::vector<std::string> amdgpuRenderNodes;  // /dev/dri/renderD* bound to the amdgpu driver
    std::vector<std::string> otherRenderNodes;   // render nodes of other drivers ("renderD129 (i915)")
    HostPaths paths;
};
HostFacts readHostFacts(const HostPaths& paths = {});

// "6.16.0-rc1" -> {6, 16, 0}; an error for a release string without a version.
kfd::Result<std::array<int, 3>> parseKernelVersion(const std::string& release);

struct DoorReport {
    bool open = false;
    std::string reason;  // why it is open, or why it is shut
};
// Before opening a node: what the host says. With `userqIpMask` (from an opened node) the
// kernel's own answer is the last word.
DoorReport umqDoor(const HostFacts& host, std::optional<uint32_t> userqIpMask = std::nullopt);
DoorReport csDoor(const HostFacts& host);

// "no amdgpu render node: looked for /dev/dri/renderD* (amdgpu's) and found none" (+ others seen).
std::string noRenderNodeReason(const HostFacts& host);

}  // namespace zinc::umq
