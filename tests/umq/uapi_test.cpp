// Rung 0 of the amdgpu doors: the structs we define are the kernel's. umq/amdgpu_uapi.h pins them
// with static_asserts; here the numbers FACTS.md §6 lists are checked once more at run time, and
// the fields of the USERQ union against the offsets Mesa's and tinygrad's copies give.
#include <gtest/gtest.h>

#include <cstddef>

#include "umq/amdgpu_uapi.h"

namespace zinc::umq {
namespace {

TEST(UmqUapi, UserqIoctlAndStructsMatchTheUapi) {
    EXPECT_EQ(uapi::kIoctlUserq, 0xC0486456u);
    EXPECT_EQ(sizeof(uapi::drm_amdgpu_userq), 72u);
    EXPECT_EQ(offsetof(uapi::drm_amdgpu_userq_in, ip_type), 8u);
    EXPECT_EQ(offsetof(uapi::drm_amdgpu_userq_in, doorbell_handle), 12u);
    EXPECT_EQ(offsetof(uapi::drm_amdgpu_userq_in, flags), 20u);
    EXPECT_EQ(offsetof(uapi::drm_amdgpu_userq_in, queue_size), 32u);
    EXPECT_EQ(offsetof(uapi::drm_amdgpu_userq_in, mqd), 56u);
    EXPECT_EQ(offsetof(uapi::drm_amdgpu_userq_out, queue_id), 0u);
    EXPECT_EQ(sizeof(uapi::drm_amdgpu_userq_mqd_compute_gfx11), 8u);
    EXPECT_EQ(uapi::kGemDomainDoorbell, 0x40u);
}

TEST(UmqUapi, CsIoctlNumbersMatchFacts) {
    EXPECT_EQ(uint32_t(DRM_IOCTL_AMDGPU_CS), 0xC0186444u);
    EXPECT_EQ(uint32_t(DRM_IOCTL_AMDGPU_CTX), 0xC0106442u);
    EXPECT_EQ(uint32_t(DRM_IOCTL_AMDGPU_GEM_CREATE), 0xC0206440u);
    EXPECT_EQ(uint32_t(DRM_IOCTL_AMDGPU_GEM_MMAP), 0xC0086441u);
    EXPECT_EQ(uint32_t(DRM_IOCTL_AMDGPU_GEM_VA), 0x40286448u);
    EXPECT_EQ(sizeof(drm_amdgpu_cs_chunk_ib), 32u);
    EXPECT_EQ(offsetof(drm_amdgpu_cs_chunk_ib, va_start), 8u);
    EXPECT_EQ(offsetof(drm_amdgpu_cs_chunk_ib, ip_type), 20u);
    EXPECT_EQ(AMDGPU_HW_IP_COMPUTE, 1);
}

TEST(UmqUapi, DevInfoTailPutsUserqMaskAtByte436) {
    EXPECT_EQ(offsetof(uapi::info_device, tail.userq_ip_mask), 436u);
    EXPECT_EQ(sizeof(drm_amdgpu_info_device), 368u);  // libdrm 2.4.114: the tail is ours
}

}  // namespace
}  // namespace zinc::umq
