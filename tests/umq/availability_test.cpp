// Which doors a machine opens, and the one-line reason for each shut one, from the facts the
// host gives (kernel release, amdgpu.user_queue, render nodes and their drivers).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/test_paths.h"
#include "umq/availability.h"

namespace zinc::umq {
namespace {

HostFacts machine(std::string release, std::optional<int> param, bool node) {
    HostFacts h;
    h.kernelRelease = std::move(release);
    h.userQueueParam = param;
    if (node) h.amdgpuRenderNodes = {"/dev/dri/renderD128"};
    return h;
}

TEST(UmqDoors, ParsesKernelReleases) {
    EXPECT_EQ(parseKernelVersion("6.16.0-rc1-amd64").value(), (std::array<int, 3>{6, 16, 0}));
    EXPECT_EQ(parseKernelVersion("6.1.0-28-amd64").value(), (std::array<int, 3>{6, 1, 0}));
    EXPECT_EQ(parseKernelVersion("6.18").value(), (std::array<int, 3>{6, 18, 0}));
    EXPECT_FALSE(parseKernelVersion("linux").ok());
}

TEST(UmqDoors, EachShutDoorSaysWhy) {
    EXPECT_EQ(umqDoor(machine("6.18.2", 1, false)).reason,
              "no amdgpu render node: looked for /dev/dri/renderD* bound to the amdgpu driver and found none");
    EXPECT_EQ(umqDoor(machine("6.1.0-28-amd64", 1, true)).reason, "Linux 6.1.0-28-amd64 has no amdgpu user queues (they came in 6.16)");
    EXPECT_EQ(umqDoor(machine("6.16.0", 0, true)).reason,
              "amdgpu.user_queue=0 turns user queues off (/sys/module/amdgpu/parameters/user_queue); 1 or 2 turns them on");
    EXPECT_EQ(umqDoor(machine("6.16.0", -1, true), 0x1).reason,
              "/dev/dri/renderD128 reports no compute user queues (userq_ip_mask 0x1); amdgpu.user_queue=-1, the default, enables them "
              "only on some ASICs: try amdgpu.user_queue=1");
    EXPECT_FALSE(csDoor(machine("6.1.0", std::nullopt, false)).open);
    HostFacts other = machine("6.1.0", std::nullopt, false);
    other.otherRenderNodes = {"renderD128 (i915)"};
    EXPECT_EQ(csDoor(other).reason, "no amdgpu render node: looked for /dev/dri/renderD* bound to the amdgpu driver and found none (found renderD128 (i915))");
}

TEST(UmqDoors, OpenDoorsSayWhichNode) {
    const DoorReport u = umqDoor(machine("6.16.0", 1, true), 0x2);
    EXPECT_TRUE(u.open);
    EXPECT_EQ(u.reason, "/dev/dri/renderD128 on Linux 6.16.0 with amdgpu.user_queue=1: compute user queues reported");
    EXPECT_TRUE(csDoor(machine("5.15.0", std::nullopt, true)).open);
}

// readHostFacts over a fake /dev/dri and /sys/class/drm: a node counts as amdgpu by its driver link.
TEST(UmqDoors, ReadsRenderNodesByTheirDriver) {
    namespace fs = std::filesystem;
    const fs::path root = test::scratchDir() / "host";
    fs::remove_all(root);
    fs::create_directories(root / "dri");
    fs::create_directories(root / "drivers/amdgpu");
    fs::create_directories(root / "drivers/i915");
    for (const char* n : {"renderD128", "renderD129", "card0"}) std::ofstream(root / "dri" / n).put('\n');
    for (auto [n, driver] : {std::pair{"renderD128", "i915"}, std::pair{"renderD129", "amdgpu"}}) {
        fs::create_directories(root / "sys" / n / "device");
        fs::create_directory_symlink(root / "drivers" / driver, root / "sys" / n / "device" / "driver");
    }
    std::ofstream(root / "user_queue") << "2\n";
    const HostFacts h = readHostFacts({(root / "dri").string(), (root / "sys").string(), (root / "user_queue").string()});
    EXPECT_EQ(h.amdgpuRenderNodes, std::vector<std::string>{(root / "dri/renderD129").string()});
    EXPECT_EQ(h.otherRenderNodes, std::vector<std::string>{"renderD128 (i915)"});
    EXPECT_EQ(h.userQueueParam, 2);
    EXPECT_FALSE(h.kernelRelease.empty());
}

}  // namespace
}  // namespace zinc::umq
