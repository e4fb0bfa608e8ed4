// residentWorkgroups (vulkan/residency.h): how many workgroups of a pipeline a GPU runs at once,
// from its compute units and the statistics its driver reports for the pipeline, under the
// names NVIDIA's driver and RADV give them. The figures below are the H200's (132 SMs) and
// the split attention kernel's there (run 173: 123 registers, 20,528 bytes of shared memory:
// 2 workgroups of 256 an SM, 264 in all; 33 splits of 8 head blocks ran in one wave, 34 did not).
#include <gtest/gtest.h>

#include "vulkan/residency.h"

namespace zinc::vk {
namespace {

DeviceCaps nvidia() {
    DeviceCaps c;
    c.computeUnits = 132;
    c.threadsPerUnit = 2048;  // 64 warps an SM
    c.sharedMemoryBytes = 49152;
    c.subgroupSize = 32;
    return c;
}

DeviceCaps amd() {
    DeviceCaps c;
    c.computeUnits = 96;
    c.simdsPerUnit = 2;
    c.sharedMemoryBytes = 65536;
    c.subgroupSize = 64;
    return c;
}

TEST(VulkanResidency, AnSmHoldsTheWorkgroupsItsRegistersAndSharedMemoryAllow) {
    // 123 registers round up to 128: 65,536 / (128 x 256) = 2 an SM (shared memory: 2 too).
    EXPECT_EQ(residentWorkgroups(nvidia(), {{"Register Count", "123", 123}, {"Shared Memory Size", "20528", 20528}}, 256), 264u);
    // 69 -> 72 registers: 3 an SM; shared memory would allow 4.
    EXPECT_EQ(residentWorkgroups(nvidia(), {{"Register Count", "69", 69}, {"Shared Memory Size", "11776", 11776}}, 256), 396u);
    // Shared memory the limit: 16 KiB of 48 -> 3, where registers allow 4.
    EXPECT_EQ(residentWorkgroups(nvidia(), {{"Register Count", "64", 64}, {"Shared Memory Size", "16384", 16384}}, 256), 396u);
    // Small workgroups: the threads allow 32 of 64 threads, the blocks an SM 16.
    EXPECT_EQ(residentWorkgroups(nvidia(), {{"Register Count", "32", 32}}, 64), 16u * 132u);
    // 255 registers: one workgroup of 256 an SM.
    EXPECT_EQ(residentWorkgroups(nvidia(), {{"Register Count", "255", 255}}, 256), 132u);
}

TEST(VulkanResidency, ACuHoldsTheSubgroupsTheCompilerAllowsOnItsSimds) {
    // RDNA (2 SIMDs a CU): RADV's figure counts wave32s. 12 a SIMD (6 wave64s, as the split
    // kernel on gfx1100 in radv_compile_test), 2 SIMDs, a workgroup of 256 threads is 8
    // wave32s: 3 a CU, whatever the wave size the pipeline runs in.
    EXPECT_EQ(residentWorkgroups(amd(), {{"VGPRs", "120", 120}, {"Subgroups per SIMD", "12", 12}}, 256), 3u * 96u);
    EXPECT_EQ(residentWorkgroups(amd(), {{"Subgroups per SIMD", "12", 12}, {"Subgroup Size", "32", 32}}, 256), 3u * 96u);
    // GCN (4 SIMDs a CU): in the pipeline's own waves. 8 wave64s a SIMD, 4 a workgroup: 8 a CU.
    DeviceCaps gcn = amd();
    gcn.computeUnits = 60;
    gcn.simdsPerUnit = 4;
    EXPECT_EQ(residentWorkgroups(gcn, {{"Subgroups per SIMD", "8", 8}}, 256), 8u * 60u);
}

TEST(VulkanResidency, UnknownWhereTheDriverDoesNotSay) {
    DeviceCaps none = nvidia();
    none.computeUnits = 0;  // lavapipe: neither extension
    EXPECT_EQ(residentWorkgroups(none, {{"Register Count", "64", 64}}, 256), 0u);
    EXPECT_EQ(residentWorkgroups(nvidia(), {}, 256), 0u);
    EXPECT_EQ(residentWorkgroups(nvidia(), {{"VGPRs", "64", 64}}, 256), 0u);  // an NVIDIA device, RADV's names
    EXPECT_EQ(residentWorkgroups(amd(), {{"Register Count", "64", 64}}, 256), 0u);
}

}  // namespace
}  // namespace zinc::vk
