// The compute MQD on a kernel with the user-queue CWSR series: the context-save area passed in
// the 24-byte MQD (sized as KFD sizes it for the chip), taken at the first try; too small an
// area is refused as the kernel's validation would.
#include <gtest/gtest.h>

#include <cerrno>

#include "tests/umq/umq_test_support.h"
#include "umq/amdgpu_uapi.h"

namespace zinc::umq {
namespace {

using testing::openNode;
using testing::since;

TEST(UmqCwsr, QueuePassesItsContextSaveArea) {
    auto node = openNode("gfx1100", false, true, true);
    const size_t before = node.driver->log().size();
    auto q = node.device->createQueue({});
    ASSERT_TRUE(q.ok()) << q.error().describe();
    const auto log = since(node.driver->log(), before);
    EXPECT_EQ(std::count(log.begin(), log.end(), "USERQ CREATE"), 1) << "no retry";
    EXPECT_EQ(node.driver->lastRefusal(), "");
    EXPECT_EQ(node.device->facts().mqdBytes, 24u);
    EXPECT_EQ(q->ctxSave.size, node.device->caps().queueBuffers.ctxSaveMappingBytes);
    EXPECT_EQ(describeMqd(node.device->facts(), q->ctxSave.size), "24-byte compute MQD (EOP + a 0x2c02000-byte context-save area)");
    ASSERT_TRUE(node.device->destroyQueue(*q).ok());
}

TEST(UmqCwsr, TooSmallAnAreaIsRefused) {
    auto node = openNode("gfx1100", false, true, true);
    auto ring = node.device->allocMemory(4096, kfd::MemoryKind::Gtt, {});
    auto eop = node.device->allocMemory(4096, kfd::MemoryKind::Vram, {});
    auto ctx = node.device->allocMemory(1 << 20, kfd::MemoryKind::Gtt, {});
    auto doorbell = node.device->allocMemory(4096, kfd::MemoryKind::Doorbell, {});
    ASSERT_TRUE(ring.ok() && eop.ok() && ctx.ok() && doorbell.ok());
    uapi::drm_amdgpu_userq_mqd_compute_gfx11_cwsr mqd{eop->gpuVa, ctx->gpuVa, uint32_t(ctx->size), 0};
    uapi::drm_amdgpu_userq a{};
    a.in = {uapi::kUserqOpCreate, 0, AMDGPU_HW_IP_COMPUTE, uint32_t(doorbell->handle), 0, 0, ring->gpuVa, 2048,
            ring->gpuVa + 2048, ring->gpuVa + 2056, reinterpret_cast<uint64_t>(&mqd), sizeof mqd};
    errno = 0;
    EXPECT_EQ(node.driver->ioctl(2000, uapi::kIoctlUserq, &a), -1);
    EXPECT_EQ(errno, EINVAL);
    const std::string refusal = node.driver->lastRefusal();
    EXPECT_EQ(refusal.rfind("USERQ: ctx_save_area_va 0x", 0), 0u) << refusal;
    EXPECT_NE(refusal.find(" is not mapped over ctx_save_area_size 0x100000 (at least 0x2bea000)"), std::string::npos) << refusal;
}

}  // namespace
}  // namespace zinc::umq
