// The render-node device (umq/drm_device.cpp) over the simulated amdgpu driver: the ioctls it
// makes and their arguments, the driver refusing what amdgpu refuses, and the bring-up ladder of
// kfd/device/ladder.h climbed on an amdgpu user queue (ring, rptr/wptr, EOP and doorbell BOs, USERQ).
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>

#include "kfd/device/ladder.h"
#include "tests/umq/umq_test_support.h"
#include "umq/amdgpu_uapi.h"

namespace zinc::umq {
namespace {

using testing::openNode;
using testing::since;


TEST(Umq, OpensTheSimulatedRenderNode) {
    auto node = openNode("gfx1201");
    EXPECT_EQ(node.device->caps().gfxName, "gfx1201");
    EXPECT_EQ(node.device->caps().computeUnits, 64u);
    EXPECT_EQ(node.device->facts().family, 152u);
    EXPECT_EQ(node.device->facts().userqIpMask, 1u << AMDGPU_HW_IP_COMPUTE);
    EXPECT_EQ(node.device->userQueueRefusal(), "");
    EXPECT_EQ(node.device->name(), "simulated amdgpu /dev/dri/renderD128 (gfx1201)");
    const auto log = node.driver->log();
    EXPECT_EQ(std::count(log.begin(), log.end(), "INFO"), 4) << "DEV_INFO, HW_IP_INFO, VRAM_GTT, UQ_FW_AREAS";
}

// GEM_CREATE -> GEM_MMAP (+ mmap) -> GEM_VA at the CPU address; freeing unmaps and closes.
TEST(Umq, MemoryIsGemMappedAtItsCpuAddress) {
    auto node = openNode();
    const size_t before = node.driver->log().size();
    auto m = node.device->allocMemory(5000, kfd::MemoryKind::Vram, {});
    ASSERT_TRUE(m.ok()) << m.error().describe();
    EXPECT_EQ(m->size, 8192u);
    EXPECT_EQ(m->gpuVa, reinterpret_cast<uint64_t>(m->cpuPtr));
    EXPECT_EQ(since(node.driver->log(), before), (std::vector<std::string>{"GEM_CREATE", "GEM_MMAP", "GEM_VA"}));
    ASSERT_TRUE(node.device->freeMemory(*m).ok());
    EXPECT_EQ(since(node.driver->log(), before).size(), 5u);  // + GEM_VA unmap, GEM_CLOSE
}

// On a kernel whose MQD is eop_va only (Linux 6.16), the first queue probes: the 24-byte MQD
// with a context-save area is refused, its BO goes, the 8-byte MQD is taken; later queues go
// straight to 8 bytes.
TEST(Umq, QueueIsFourBosAndOneUserqCreate) {
    auto node = openNode();
    size_t before = node.driver->log().size();
    auto q = node.device->createQueue({});
    ASSERT_TRUE(q.ok()) << q.error().describe();
    const std::vector<std::string> bos = {"GEM_CREATE", "GEM_MMAP", "GEM_VA",   "GEM_CREATE", "GEM_MMAP", "GEM_VA", "GEM_CREATE",
                                          "GEM_MMAP",   "GEM_VA",   "GEM_CREATE", "GEM_MMAP"};
    std::vector<std::string> want = bos;
    for (const char* call : {"GEM_CREATE", "GEM_MMAP", "GEM_VA", "USERQ CREATE", "GEM_VA", "GEM_CLOSE", "USERQ CREATE"}) want.push_back(call);
    EXPECT_EQ(since(node.driver->log(), before), want) << "ring, rptr/wptr, EOP, the doorbell BO (no GPU mapping), then the MQD probe";
    EXPECT_EQ(node.device->facts().mqdBytes, 8u);
    EXPECT_EQ(describeMqd(node.device->facts(), 0), "8-byte compute MQD (EOP only: this kernel takes no context-save area and refused the 24-byte one)");
    before = node.driver->log().size();
    auto second = node.device->createQueue({});
    ASSERT_TRUE(second.ok()) << second.error().describe();
    want = bos;
    want.push_back("USERQ CREATE");
    EXPECT_EQ(since(node.driver->log(), before), want);
    ASSERT_TRUE(node.device->destroyQueue(*second).ok());
    EXPECT_EQ(q->id, 1u);
    EXPECT_EQ(q->ring.size, 64u * 1024);
    EXPECT_NE(q->doorbell, nullptr);
    ASSERT_TRUE(node.device->destroyQueue(*q).ok());
    EXPECT_EQ(node.driver->log().back(), "GEM_CLOSE");
}

// USERQ create arguments the kernel would refuse, straight at the driver.
TEST(Umq, DriverRefusesWhatAmdgpuRefuses) {
    auto node = openNode();
    auto ring = node.device->allocMemory(4096, kfd::MemoryKind::Gtt, {});
    auto eop = node.device->allocMemory(4096, kfd::MemoryKind::Vram, {});
    auto doorbell = node.device->allocMemory(4096, kfd::MemoryKind::Doorbell, {});
    ASSERT_TRUE(ring.ok() && eop.ok() && doorbell.ok());
    uapi::drm_amdgpu_userq_mqd_compute_gfx11 mqd{eop->gpuVa};
    auto create = [&](auto edit) {
        uapi::drm_amdgpu_userq a{};
        a.in = {uapi::kUserqOpCreate, 0, AMDGPU_HW_IP_COMPUTE, uint32_t(doorbell->handle), 0, 0, ring->gpuVa, 2048,
                ring->gpuVa + 2048, ring->gpuVa + 2056, reinterpret_cast<uint64_t>(&mqd), sizeof mqd};
        edit(a.in);
        errno = 0;
        const int rc = node.driver->ioctl(2000, uapi::kIoctlUserq, &a);
        return std::pair{rc == 0 ? 0 : errno, node.driver->lastRefusal()};
    };
    EXPECT_EQ(create([](auto&) {}).first, 0);
    EXPECT_EQ(create([](auto& in) { in.doorbell_offset = 1; }).first, 0) << "a second doorbell of the same BO";
    EXPECT_EQ(create([](auto& in) { in.queue_size = 1000; }),
              (std::pair<int, std::string>{EINVAL, "USERQ: queue_size 0x3e8 is not a multiple of 256"}));
    EXPECT_EQ(create([](auto& in) { in.mqd_size = 16; }).second, "USERQ: mqd_size 16 is not sizeof(drm_amdgpu_userq_mqd_compute_gfx11), 8 on this kernel");
    EXPECT_EQ(create([](auto& in) { in.ip_type = AMDGPU_HW_IP_GFX; }).first, EINVAL);
    EXPECT_EQ(create([](auto& in) { in.flags = 3; }).first, EACCES);
    EXPECT_EQ(create([&](auto& in) { in.doorbell_handle = uint32_t(ring->handle); }).second, "USERQ: doorbell_handle is not a DOORBELL BO");
    EXPECT_EQ(create([](auto& in) { in.rptr_va += 4; in.wptr_va += 4; }).first, EINVAL);
    EXPECT_EQ(create([](auto& in) { in.doorbell_offset = 0; }).second, "USERQ: that doorbell belongs to queue 1");
    mqd.eop_va = 0x1000;
    EXPECT_EQ(create([](auto& in) { in.doorbell_offset = 2; }).second, "USERQ: eop_va 0x1000 is not mapped over 2048 bytes");
}

TEST(Umq, GemVaElsewhereThanTheCpuMappingIsRefused) {
    auto node = openNode();
    drm_amdgpu_gem_create c{};
    c.in.bo_size = 4096;
    c.in.domains = AMDGPU_GEM_DOMAIN_GTT;
    ASSERT_EQ(node.driver->ioctl(2000, DRM_IOCTL_AMDGPU_GEM_CREATE, &c), 0);
    drm_amdgpu_gem_va va{};
    va.handle = c.out.handle;
    va.operation = AMDGPU_VA_OP_MAP;
    va.flags = AMDGPU_VM_PAGE_READABLE;
    va.va_address = 0x10000000;
    va.map_size = 4096;
    EXPECT_EQ(node.driver->ioctl(2000, DRM_IOCTL_AMDGPU_GEM_VA, &va), -1);
    EXPECT_EQ(node.driver->lastRefusal().rfind("GEM_VA: the simulated GPU maps a BO only at its CPU address", 0), 0u) << node.driver->lastRefusal();
    va.va_address = 0x10000100;
    EXPECT_EQ(node.driver->ioctl(2000, DRM_IOCTL_AMDGPU_GEM_VA, &va), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_NE(node.driver->lastRefusal().find("not page aligned"), std::string::npos);
}

TEST(Umq, WithoutUserQueuesCreateQueueSaysWhy) {
    auto node = openNode("gfx1100", false, false);
    const std::string want =
        "/dev/dri/renderD128 reports no compute user queues (AMDGPU_INFO userq_ip_mask 0x0): they need Linux >= 6.16 with "
        "amdgpu.user_queue=1 or 2 (-1, the default, enables them only on some ASICs)";
    EXPECT_EQ(node.device->userQueueRefusal(), want);
    auto q = node.device->createQueue({});
    ASSERT_FALSE(q.ok());
    EXPECT_EQ(q.error().message, want);
    EXPECT_EQ(q.error().errnum, EOPNOTSUPP);
}

// kfd/device/ladder.h on a user queue: the same rungs as on a KFD queue, through the USERQ door.
class UmqLadder : public ::testing::TestWithParam<const char*> {};

TEST_P(UmqLadder, EveryRungPassesOnAUserQueue) {
    auto node = openNode(GetParam(), true);
    const auto rungs = kfd::climbLadder(*node.device, {.timeoutMs = 10000});
    ASSERT_EQ(rungs.size(), 9u);
    for (const kfd::Rung& r : rungs) EXPECT_TRUE(r.ok) << r.name << ": " << r.detail;
    EXPECT_EQ(rungs.back().name, "trivial dispatch");
}

INSTANTIATE_TEST_SUITE_P(Umq, UmqLadder, ::testing::Values("gfx1100", "gfx1201"));

// A wait nobody releases: bounded, and the error names the user queue's state.
TEST(Umq, EventWaitTimesOutWithTheQueueState) {
    auto node = openNode();
    auto q = node.device->createQueue({});
    auto e = node.device->createEvent(true);
    ASSERT_TRUE(q.ok() && e.ok());
    kfd::Status s = node.device->waitEvents({&*e, 1}, 50);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().errnum, ETIME);
    EXPECT_NE(s.error().message.find("mailbox event(s) 1 not signalled after 50 ms"), std::string::npos) << s.error().message;
    EXPECT_NE(s.error().message.find("queue 1: rptr 0x0, wptr 0x0"), std::string::npos) << s.error().message;
    ASSERT_TRUE(node.device->setEvent(*e).ok());
    EXPECT_TRUE(node.device->waitEvents({&*e, 1}, 50).ok());
    EXPECT_FALSE(node.device->waitEvents({&*e, 1}, 10).ok()) << "auto-reset";
}

}  // namespace
}  // namespace zinc::umq

namespace zinc::umq {
namespace {

// The USERQ create the drm path makes, field by field (FACTS.md §6.2).
TEST(Umq, UserqCreateArgumentsAreTheQueuesBuffers) {
    auto node = testing::openRecordedNode();
    auto q = node.device->createQueue({.ringBytes = 8192});
    ASSERT_TRUE(q.ok()) << q.error().describe();
    ASSERT_EQ(node.recorder->userqs.size(), 2u);
    const uapi::drm_amdgpu_userq_in& in = node.recorder->userqs[0];
    EXPECT_EQ(in.op, uapi::kUserqOpCreate);
    EXPECT_EQ(in.ip_type, uint32_t(AMDGPU_HW_IP_COMPUTE));
    EXPECT_EQ(in.queue_va, q->ring.gpuVa);
    EXPECT_EQ(in.queue_size, 8192u);
    EXPECT_EQ(in.rptr_va, q->pointers.gpuVa);
    EXPECT_EQ(in.wptr_va, q->pointers.gpuVa + 8);
    EXPECT_EQ(in.doorbell_offset, 0u);
    EXPECT_EQ(in.flags, 0u) << "NORMAL_LOW priority, not secure";
    EXPECT_EQ(in.mqd_size, 24u) << "first the MQD with a context-save area";
    EXPECT_EQ(node.recorder->userqs[1].mqd_size, 8u) << "then, refused, the one this kernel takes";
    EXPECT_EQ(node.recorder->requests.back(), uapi::kIoctlUserq);
    ASSERT_TRUE(node.device->destroyQueue(*q).ok());
    EXPECT_EQ(node.recorder->userqs.back().op, uapi::kUserqOpFree);
    EXPECT_EQ(node.recorder->userqs.back().queue_id, 1u);
}

}  // namespace
}  // namespace zinc::umq
