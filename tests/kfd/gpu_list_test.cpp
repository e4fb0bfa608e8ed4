// `--device N` on this machine's GPUs: the KFD topology joined to the render nodes and amdgpu's
// sysfs memory files, on a fake sysfs tree with two discrete GPUs, an APU and a render node KFD
// does not list; then `--device 1` opening the second KFD node through a fake KFD.
#include <gtest/gtest.h>

#include "kfd/device/gpu_list.h"
#include "kfd/linux/host_gpus.h"
#include "kfd/linux/linux_device.h"
#include "tests/kfd/fake_kfd.h"
#include "tests/kfd/fake_sysfs.h"

namespace zinc::kfd {
namespace {
using namespace testing;

// Node 1: the RX 7900 XTX of fake_sysfs.h (renderD128) with a 256 MiB BAR; node 2: an APU
// (cpu cores on its GPU node, renderD129); node 3: a second discrete gfx1201 (renderD130) with
// all of its VRAM visible. renderD131 is an amdgpu node KFD does not list.
void writeMachine(const fs::path& root) {
    writeFakeTopology(root / "topology");
    std::string apu = kGpuProperties;
    apu.replace(apu.find("cpu_cores_count 0"), 17, "cpu_cores_count 8");
    apu.replace(apu.find("drm_render_minor 128"), 20, "drm_render_minor 129");
    apu.replace(apu.find("gfx_target_version 110000"), 25, "gfx_target_version 110003");
    writeFile(root / "topology/nodes/2/gpu_id", "45779\n");
    writeFile(root / "topology/nodes/2/properties", apu);
    writeFile(root / "topology/nodes/2/mem_banks/0/properties", "heap_type 1\nsize_in_bytes 536870912\n");
    std::string second = kGpuProperties;
    second.replace(second.find("drm_render_minor 128"), 20, "drm_render_minor 130");
    second.replace(second.find("gfx_target_version 110000"), 25, "gfx_target_version 120001");
    writeFile(root / "topology/nodes/3/gpu_id", "45780\n");
    writeFile(root / "topology/nodes/3/properties", second);
    writeFile(root / "topology/nodes/3/mem_banks/0/properties", "heap_type 1\nsize_in_bytes 17179869184\n");
    writeFile(root / "drm/renderD128/device/mem_info_vram_total", "25753026560\n");
    writeFile(root / "drm/renderD128/device/mem_info_vis_vram_total", "268435456\n");
    writeFile(root / "drm/renderD130/device/mem_info_vram_total", "17179869184\n");
    writeFile(root / "drm/renderD130/device/mem_info_vis_vram_total", "17179869184\n");
}

HostGpuPaths pathsIn(const fs::path& root) { return {(root / "topology").string(), (root / "drm").string(), "/dev/dri"}; }

TEST(GpuList, DiscreteFirstThenIntegratedThenRenderOnly) {
    TempDir dir;
    writeMachine(dir.path());
    const std::vector<GpuEntry> gpus =
        listHostGpus({"/dev/dri/renderD128", "/dev/dri/renderD129", "/dev/dri/renderD130", "/dev/dri/renderD131"}, pathsIn(dir.path()));
    ASSERT_EQ(gpus.size(), 4u);
    EXPECT_EQ(gpus[0].describe(),
              "device 0: KFD node 1 (gpu_id 0xb2d2), /dev/dri/renderD128, gfx1100, VRAM 24.0 GiB, BAR 256 MiB "
              "(smaller than VRAM: weights and KV go through a GTT staging copy)");
    EXPECT_EQ(gpus[1].describe(), "device 1: KFD node 3 (gpu_id 0xb2d4), /dev/dri/renderD130, gfx1201, VRAM 16.0 GiB, BAR 16.0 GiB (all VRAM)");
    EXPECT_EQ(gpus[2].describe(), "device 2: no KFD node, /dev/dri/renderD131, gfx unknown, VRAM unknown, BAR unknown");
    EXPECT_EQ(gpus[3].describe(),
              "device 3: KFD node 2 (gpu_id 0xb2d3), /dev/dri/renderD129, gfx1103, VRAM 512 MiB, BAR unknown, "
              "integrated (skipped unless --device 3 is given)");
}

TEST(GpuList, IntegratedOnlyWhenNamed) {
    std::vector<GpuEntry> gpus(1);
    gpus[0].integrated = true;
    gpus[0].kfdNode = 1;
    numberGpus(gpus);
    Result<GpuEntry> byDefault = pickGpu(gpus, 0, false);
    ASSERT_FALSE(byDefault.ok());
    EXPECT_EQ(byDefault.error().message,
              "device 0 is an integrated GPU, skipped by default; pass --device 0 to use it anyway:\n"
              "  device 0: KFD node 1, no render node, gfx unknown, VRAM unknown, BAR unknown, integrated (skipped unless --device 0 is given)");
    EXPECT_TRUE(pickGpu(gpus, 0, true).ok());
    Result<GpuEntry> none = pickGpu(gpus, 1, true);
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().message.substr(0, 33), "--device 1: there are 1 GPU(s):\n ");
}

TEST(GpuList, NoTopologyLeavesTheRenderNodes) {
    TempDir dir;
    const std::vector<GpuEntry> gpus = listHostGpus({"/dev/dri/renderD128"}, pathsIn(dir.path()));
    ASSERT_EQ(gpus.size(), 1u);
    EXPECT_FALSE(gpus[0].kfdNode);
    EXPECT_EQ(gpus[0].renderNode, "/dev/dri/renderD128");
}

// `--device 1` with two discrete KFD nodes opens the second (node 3, renderD130), and its caps
// carry the BAR the sysfs reports (all of VRAM here: nothing to stage).
TEST(GpuList, DeviceOneOpensTheSecondKfdNode) {
    TempDir dir;
    writeMachine(dir.path());
    writeFile(fs::path(dir.path()) / "kfd", "");
    const HostGpuPaths paths = pathsIn(dir.path());
    const std::vector<GpuEntry> gpus = listHostGpus({}, {paths.topologyRoot, paths.sysfsDrm, dir.path() + "/dri"});
    Result<GpuEntry> second = pickGpu(gpus, 1, true);
    ASSERT_TRUE(second.ok()) << second.error().describe();
    FakeKfd kfd{dir.path() + "/kfd", second->renderNode, second->gpuId};
    LinuxOptions options;
    options.kfdPath = dir.path() + "/kfd";
    options.topologyRoot = paths.topologyRoot;
    options.sysfsDrm = paths.sysfsDrm;
    options.driPath = dir.path() + "/dri";
    options.node = second->kfdNode;
    options.syscalls = &kfd;
    Result<std::unique_ptr<Device>> device = openLinuxDevice(options);
    ASSERT_TRUE(device.ok()) << device.error().describe();
    EXPECT_EQ((*device)->name(), "linux /dev/kfd 1.15, node 3 (gpu_id 0xb2d4, gfx1201)");
    EXPECT_EQ((*device)->caps().cpuVisibleVramBytes, 0u);
}

// The first node's 256 MiB BAR reaches its caps: the tier will stage its uploads.
TEST(GpuList, SmallBarReachesTheCaps) {
    TempDir dir;
    writeMachine(dir.path());
    writeFile(fs::path(dir.path()) / "kfd", "");
    FakeKfd kfd{dir.path() + "/kfd", dir.path() + "/dri/renderD128", 45778};
    LinuxOptions options;
    options.kfdPath = dir.path() + "/kfd";
    options.topologyRoot = dir.path() + "/topology";
    options.sysfsDrm = dir.path() + "/drm";
    options.driPath = dir.path() + "/dri";
    options.syscalls = &kfd;
    Result<std::unique_ptr<Device>> device = openLinuxDevice(options);
    ASSERT_TRUE(device.ok()) << device.error().describe();
    EXPECT_EQ((*device)->caps().cpuVisibleVramBytes, 268435456u);
}

}  // namespace
}  // namespace zinc::kfd
