// The Linux /dev/kfd path as far as a machine without an AMD GPU can take it: a clear error when
// there is no KFD, and the ioctl layer keeping errno when the node is not KFD at all.
#include <cerrno>
#include <filesystem>

#include <gtest/gtest.h>

#include "kfd/device.h"
#include "tests/kfd/fake_sysfs.h"

namespace zinc::kfd {
namespace {
using namespace zinc::kfd::testing;

TEST(Kfd, NoDeviceIsAClearError) {
    TempDir dir;
    LinuxOptions options;
    options.kfdPath = dir.path() + "/dev/kfd";
    options.topologyRoot = dir.path() + "/sys/class/kfd/kfd/topology";
    Result<std::unique_ptr<Device>> device = openLinuxDevice(options);
    ASSERT_FALSE(device.ok());
    const Error& e = device.error();
    EXPECT_EQ(e.errnum, ENOENT);
    const std::string expected = "no " + options.kfdPath + " (looked for " + options.kfdPath + " and " +
                                 options.topologyRoot + "/nodes/*): ";
    EXPECT_EQ(e.message.substr(0, expected.size()), expected) << e.describe();
    EXPECT_NE(e.message.find("does not exist"), std::string::npos) << e.describe();
    EXPECT_NE(e.describe().find("errno 2"), std::string::npos) << e.describe();
}

TEST(Kfd, NoDeviceOnThisMachine) {
    // The default paths, as `--tier=kfd` without `--sim` would use them.
    if (std::filesystem::exists("/dev/kfd")) GTEST_SKIP() << "this machine has /dev/kfd";
    Result<std::unique_ptr<Device>> device = openLinuxDevice();
    ASSERT_FALSE(device.ok());
    EXPECT_EQ(device.error().message.rfind("no /dev/kfd (looked for /dev/kfd and /sys/class/kfd/kfd/topology/nodes/*): ", 0), 0u)
        << device.error().describe();
}

TEST(Kfd, TopologyWithoutGpuIsAClearError) {
    TempDir dir;
    const std::string root = dir.path() + "/topology";
    writeFile(fs::path(root) / "nodes/0/gpu_id", "0\n");
    writeFile(fs::path(root) / "nodes/0/properties", "cpu_cores_count 16\n");
    LinuxOptions options;
    options.kfdPath = "/dev/null";
    options.topologyRoot = root;
    Result<std::unique_ptr<Device>> device = openLinuxDevice(options);
    ASSERT_FALSE(device.ok());
    EXPECT_EQ(device.error().errnum, ENODEV);
    EXPECT_NE(device.error().message.find("no GPU node"), std::string::npos) << device.error().describe();
}

TEST(Kfd, IoctlErrorsKeepErrno) {
    // A real topology, but the "KFD" node is /dev/null: GET_VERSION reaches ioctl(2), which
    // answers ENOTTY. The error must name the ioctl and keep that errno.
    TempDir dir;
    writeFakeTopology(dir.path());
    LinuxOptions options;
    options.kfdPath = "/dev/null";
    options.topologyRoot = dir.path();
    Result<std::unique_ptr<Device>> device = openLinuxDevice(options);
    ASSERT_FALSE(device.ok());
    EXPECT_EQ(device.error().operation, "GET_VERSION");
    EXPECT_EQ(device.error().errnum, ENOTTY) << device.error().describe();
}

}  // namespace
}  // namespace zinc::kfd
