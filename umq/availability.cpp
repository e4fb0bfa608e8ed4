#include "umq/availability.h"

#include <sys/utsname.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace zinc::umq {
namespace {

namespace fs = std::filesystem;

// USERQ came with the drm-next pull for Linux 6.16 (FACTS.md §6.2: secondary reports of the pull,
// docs.kernel.org/gpu/amdgpu/userq.html).
constexpr std::array<int, 3> kUserqKernel{6, 16, 0};
constexpr uint32_t kComputeBit = 1u << 1;  // 1 << AMDGPU_HW_IP_COMPUTE

std::string driverOf(const HostPaths& paths, const std::string& node) {
    std::error_code ec;
    const fs::path link = fs::read_symlink(fs::path(paths.sysfsDrm) / node / "device" / "driver", ec);
    return ec ? "" : link.filename().string();
}

}  // namespace

HostFacts readHostFacts(const HostPaths& paths) {
    HostFacts h;
    h.paths = paths;
    utsname u{};
    if (uname(&u) == 0) h.kernelRelease = u.release;
    if (std::ifstream param(paths.userQueueParam); param) {
        int v = 0;
        if (param >> v) h.userQueueParam = v;
    }
    std::error_code ec;
    std::vector<std::string> nodes;
    for (const fs::directory_entry& e : fs::directory_iterator(paths.dri, ec))
        if (e.path().filename().string().rfind("renderD", 0) == 0) nodes.push_back(e.path().filename().string());
    std::sort(nodes.begin(), nodes.end());
    for (const std::string& n : nodes) {
        const std::string driver = driverOf(paths, n);
        if (driver == "amdgpu")
            h.amdgpuRenderNodes.push_back(paths.dri + "/" + n);
        else
            h.otherRenderNodes.push_back(n + " (" + (driver.empty() ? "driver unknown" : driver) + ")");
    }
    return h;
}

kfd::Result<std::array<int, 3>> parseKernelVersion(const std::string& release) {
    std::array<int, 3> v{0, 0, 0};
    size_t i = 0;
    for (int part = 0; part < 3; ++part) {
        if (i >= release.size() || !std::isdigit(static_cast<unsigned char>(release[i]))) {
            if (part >= 2) break;  // "6.16" is 6.16.0
            return kfd::plainError("kernel version", "'" + release + "' does not start with a version number");
        }
        while (i < release.size() && std::isdigit(static_cast<unsigned char>(release[i]))) v[size_t(part)] = v[size_t(part)] * 10 + (release[i++] - '0');
        if (i < release.size() && release[i] == '.') ++i;
        else break;
    }
    return v;
}

std::string noRenderNodeReason(const HostFacts& host) {
    std::string r = "no amdgpu render node: looked for " + host.paths.dri + "/renderD* bound to the amdgpu driver and found none";
    if (!host.otherRenderNodes.empty()) {
        r += " (found";
        for (const std::string& n : host.otherRenderNodes) r += " " + n;
        r += ")";
    }
    return r;
}

DoorReport umqDoor(const HostFacts& host, std::optional<uint32_t> userqIpMask) {
    if (host.amdgpuRenderNodes.empty()) return {false, noRenderNodeReason(host)};
    kfd::Result<std::array<int, 3>> version = parseKernelVersion(host.kernelRelease);
    if (!version) return {false, "cannot tell the kernel version: " + version.error().message};
    if (*version < kUserqKernel) return {false, "Linux " + host.kernelRelease + " has no amdgpu user queues (they came in 6.16)"};
    if (host.userQueueParam && *host.userQueueParam == 0)
        return {false, "amdgpu.user_queue=0 turns user queues off (" + host.paths.userQueueParam + "); 1 or 2 turns them on"};
    const std::string node = host.amdgpuRenderNodes.front();
    if (userqIpMask && !(*userqIpMask & kComputeBit)) {
        char mask[16];
        std::snprintf(mask, sizeof mask, "0x%x", *userqIpMask);
        return {false, node + " reports no compute user queues (userq_ip_mask " + mask +
                           "); amdgpu.user_queue=-1, the default, enables them only on some ASICs: try amdgpu.user_queue=1"};
    }
    const std::string param = host.userQueueParam ? " with amdgpu.user_queue=" + std::to_string(*host.userQueueParam) : "";
    return {true, node + " on Linux " + host.kernelRelease + param + (userqIpMask ? ": compute user queues reported" : "")};
}

DoorReport csDoor(const HostFacts& host) {
    if (host.amdgpuRenderNodes.empty()) return {false, noRenderNodeReason(host)};
    return {true, host.amdgpuRenderNodes.front() + ": the amdgpu CS ioctl"};
}

}  // namespace zinc::umq
