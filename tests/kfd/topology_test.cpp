// KFD topology parsing against a sysfs tree the test writes itself: a CPU node and a gfx1100-like
// GPU node laid out as kfd_topology.c publishes them.
#include <gtest/gtest.h>

#include "kfd/linux/topology.h"
#include "tests/kfd/fake_sysfs.h"

namespace zinc::kfd {
namespace {
using namespace zinc::kfd::testing;

TEST(Kfd, TopologyFromSysfs) {
    TempDir dir;
    ASSERT_FALSE(dir.path().empty());
    writeFakeTopology(dir.path());

    Result<Topology> topo = readTopology(dir.path());
    ASSERT_TRUE(topo.ok()) << topo.error().describe();
    ASSERT_EQ(topo->nodes.size(), 2u);
    EXPECT_FALSE(topo->nodes[0].isGpu());
    ASSERT_EQ(topo->gpus().size(), 1u);
    const TopologyNode& gpu = *topo->gpus()[0];
    EXPECT_EQ(gpu.index, 1u);
    EXPECT_EQ(gpu.gpuId, 45778u);
    EXPECT_EQ(gpu.name, "gfx1100");
    EXPECT_EQ(gpu.localMemoryBytes, 25753026560ull);

    Result<GpuCaps> caps = capsFromTopologyNode(gpu);
    ASSERT_TRUE(caps.ok()) << caps.error().describe();
    EXPECT_EQ(caps->gfxName, "gfx1100");
    EXPECT_EQ(caps->gfxMajor, 11u);
    EXPECT_EQ(caps->gfxMinor, 0u);
    EXPECT_EQ(caps->computeUnits, 96u);
    EXPECT_EQ(caps->waveSize, 32u);
    EXPECT_EQ(caps->ldsBytes, 64u * 1024);
    EXPECT_EQ(caps->vramBytes, 25753026560ull);
    EXPECT_EQ(caps->drmRenderMinor, 128u);
    EXPECT_EQ(caps->gpuId, 45778u);
    EXPECT_TRUE(caps->hasWmma);
    EXPECT_TRUE(caps->hasDot4);
    // No cwsr_size / ctl_stack_size exported: KFD's formula (FACTS.md §5.5 example).
    EXPECT_EQ(caps->queueBuffers.ctlStackBytes, 0xA000u);
    EXPECT_EQ(caps->queueBuffers.ctxSaveBytes, 0x2BEA000u);
}

TEST(Kfd, TopologyPrefersExportedQueueSizes) {
    TempDir dir;
    writeFakeTopology(dir.path());
    writeFile(fs::path(dir.path()) / "nodes/1/properties", std::string(kGpuProperties) + "cwsr_size 46047232\nctl_stack_size 40960\n");
    Result<Topology> topo = readTopology(dir.path());
    ASSERT_TRUE(topo.ok()) << topo.error().describe();
    Result<GpuCaps> caps = capsFromTopologyNode(*topo->gpus()[0]);
    ASSERT_TRUE(caps.ok());
    EXPECT_EQ(caps->queueBuffers.ctxSaveBytes, 46047232u);
    EXPECT_EQ(caps->queueBuffers.ctlStackBytes, 40960u);
    EXPECT_EQ(caps->queueBuffers.ctxSaveMappingBytes % 4096, 0u);
}

TEST(Kfd, TopologyErrorsNameTheFile) {
    TempDir dir;
    writeFakeTopology(dir.path());
    writeFile(fs::path(dir.path()) / "nodes/1/properties", "simd_count 192\ngfx_target_version eleven\n");
    Result<Topology> topo = readTopology(dir.path());
    ASSERT_FALSE(topo.ok());
    EXPECT_NE(topo.error().message.find("nodes/1/properties:2"), std::string::npos) << topo.error().describe();
    EXPECT_NE(topo.error().message.find("gfx_target_version"), std::string::npos);

    Result<Topology> missing = readTopology(dir.path() + "/nowhere");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().errnum, ENOENT);
}

TEST(Kfd, CapsRefuseOtherGenerations) {
    TopologyNode node;
    node.index = 2;
    node.gpuId = 7;
    node.properties = {{"gfx_target_version", 90010}, {"simd_count", 416}, {"simd_per_cu", 4}};
    Result<GpuCaps> caps = capsFromTopologyNode(node);
    ASSERT_FALSE(caps.ok());
    EXPECT_NE(caps.error().message.find("gfx90a"), std::string::npos) << caps.error().describe();
}

TEST(Kfd, SimulatedCapsFromGfxName) {
    Result<GpuCaps> rdna3 = capsFromGfxName("gfx1100");
    ASSERT_TRUE(rdna3.ok());
    EXPECT_EQ(rdna3->computeUnits, 96u);
    EXPECT_EQ(rdna3->gpuId, 0u);
    Result<GpuCaps> rdna4 = capsFromGfxName("gfx1201");
    ASSERT_TRUE(rdna4.ok());
    EXPECT_EQ(rdna4->gfxMajor, 12u);
    EXPECT_EQ(rdna4->gfxTargetVersion, 120001u);
    Result<GpuCaps> unknown = capsFromGfxName("gfx906");
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.error().message.find("gfx1100"), std::string::npos);  // lists what is known
}

}  // namespace
}  // namespace zinc::kfd
