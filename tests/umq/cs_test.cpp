// The CS ioctl route (kfd/device/kernel_ring.h over umq/drm_cs.cpp): a context, jobs of IB chunks with
// a BO list and a SYNCOBJ_OUT, waits on the syncobj; the simulated driver runs each job on its
// kernel ring and refuses chunks amdgpu refuses.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>

#include "kfd/device/kernel_ring.h"
#include "pm4/stream.h"
#include "tests/umq/umq_test_support.h"
#include "umq/amdgpu_uapi.h"
#include "umq/drm_ioctl.h"

namespace zinc::umq {
namespace {

using testing::openNode;

uint32_t load(const uint32_t* p) { return std::atomic_ref<uint32_t>(*const_cast<uint32_t*>(p)).load(std::memory_order_acquire); }

TEST(Cs, JobsRetireInOrderAndSignalTheirSyncobjs) {
    auto node = openNode();
    auto ring = node.device->openKernelRing();
    ASSERT_TRUE(ring.ok()) << ring.error().describe();
    EXPECT_EQ((*ring)->name(), "amdgpu CS, context 1, compute ring 0 (/dev/dri/renderD128)");
    auto page = node.device->allocMemory(4096, kfd::MemoryKind::Gtt, {});
    ASSERT_TRUE(page.ok());
    std::vector<uint32_t> storage(64);
    for (uint32_t job = 1; job <= 3; ++job) {
        pm4::Stream s(storage, pm4::Gfx::Gfx11);
        s.writeData({.address = page->gpuAddress(2048 + 4 * job)}, {0xC500 + job});
        std::copy(s.dwords().begin(), s.dwords().end(), page->as<uint32_t>(256 * job));
        const kfd::IbRange ib{page->gpuAddress(256 * job), s.size()};
        auto submitted = (*ring)->submit({&ib, 1});
        ASSERT_TRUE(submitted.ok()) << submitted.error().describe();
        EXPECT_EQ(*submitted, job);
    }
    ASSERT_TRUE((*ring)->wait(3, 10000).ok());
    for (uint32_t job = 1; job <= 3; ++job) EXPECT_EQ(load(page->as<uint32_t>(2048 + 4 * job)), 0xC500 + job);
    EXPECT_EQ((*ring)->describe(), "amdgpu CS, context 1, compute ring 0 (/dev/dri/renderD128): 3 job(s) submitted, 3 known retired");
    const auto log = node.driver->log();
    EXPECT_EQ(std::count(log.begin(), log.end(), "CS"), 3);
    EXPECT_EQ(std::count(log.begin(), log.end(), "SYNCOBJ_CREATE"), 3);
    EXPECT_EQ(std::count(log.begin(), log.end(), "CTX"), 1);
}

TEST(Cs, WaitIsBoundedAndNamesTheJobs) {
    auto node = openNode();
    auto ring = node.device->openKernelRing();
    auto page = node.device->allocMemory(4096, kfd::MemoryKind::Gtt, {});
    ASSERT_TRUE(ring.ok() && page.ok());
    std::vector<uint32_t> storage(64);
    pm4::Stream s(storage, pm4::Gfx::Gfx11);
    s.waitRegMem({.address = page->gpuAddress(2048), .function = pm4::CompareFunc::Equal, .reference = 1});
    std::copy(s.dwords().begin(), s.dwords().end(), page->as<uint32_t>());
    const kfd::IbRange ib{page->gpuVa, s.size()};
    ASSERT_TRUE((*ring)->submit({&ib, 1}).ok());
    kfd::Status w = (*ring)->wait(1, 100);
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.error().errnum, ETIME);
    EXPECT_EQ(w.error().operation, "SYNCOBJ_WAIT");
    EXPECT_NE(w.error().message.find("job 1 after 100 ms; amdgpu CS, context 1, compute ring 0 (/dev/dri/renderD128): 1 job(s) submitted, 0 known retired"),
              std::string::npos)
        << w.error().message;
    std::atomic_ref<uint32_t>(*page->as<uint32_t>(2048)).store(1, std::memory_order_release);  // release the CP
    EXPECT_TRUE((*ring)->wait(1, 10000).ok());
}

// Raw CS ioctls the kernel refuses: an IB outside every BO of the list, an unknown context.
TEST(Cs, DriverRefusesJobsAmdgpuRefuses) {
    auto node = openNode();
    auto ring = node.device->openKernelRing();
    auto page = node.device->allocMemory(4096, kfd::MemoryKind::Gtt, {});
    ASSERT_TRUE(ring.ok() && page.ok());
    drm_amdgpu_cs_chunk_ib ib{};
    ib.va_start = page->gpuVa;
    ib.ib_bytes = 16;
    ib.ip_type = AMDGPU_HW_IP_COMPUTE;
    drm_amdgpu_bo_list_in list{};
    list.bo_info_size = sizeof(drm_amdgpu_bo_list_entry);
    drm_amdgpu_cs_chunk chunks[2] = {{AMDGPU_CHUNK_ID_IB, 8, reinterpret_cast<uint64_t>(&ib)},
                                     {AMDGPU_CHUNK_ID_BO_HANDLES, 6, reinterpret_cast<uint64_t>(&list)}};
    uint64_t pointers[2] = {reinterpret_cast<uint64_t>(&chunks[0]), reinterpret_cast<uint64_t>(&chunks[1])};
    drm_amdgpu_cs cs{};
    cs.in.ctx_id = 1;
    cs.in.num_chunks = 2;
    cs.in.chunks = reinterpret_cast<uint64_t>(pointers);
    EXPECT_EQ(node.driver->ioctl(2000, DRM_IOCTL_AMDGPU_CS, &cs), -1);
    EXPECT_EQ(node.driver->lastRefusal(), "CS: the BO holding IB " + hex(page->gpuVa) + " is not on the job's BO list");
    cs.in.ctx_id = 7;
    EXPECT_EQ(node.driver->ioctl(2000, DRM_IOCTL_AMDGPU_CS, &cs), -1);
    EXPECT_EQ(node.driver->lastRefusal(), "CS: no context 7");
    cs.in.ctx_id = 1;
    ib.ring = 1;
    EXPECT_EQ(node.driver->ioctl(2000, DRM_IOCTL_AMDGPU_CS, &cs), -1);
    EXPECT_EQ(node.driver->lastRefusal(), "CS: IB for ip 1 ring 1 (the simulator has compute ring 0)");
}

}  // namespace
}  // namespace zinc::umq

namespace zinc::umq {
namespace {

// One CS job as the drm path builds it: an IB chunk per IB (compute, ring 0), an inline BO list
// of every BO of the device, a SYNCOBJ_OUT (FACTS.md §6.1; Mesa's amdgpu winsys layout).
TEST(Cs, JobChunksAreIbsBoListAndSyncobj) {
    auto node = testing::openRecordedNode();
    auto ring = node.device->openKernelRing();
    auto page = node.device->allocMemory(4096, kfd::MemoryKind::Gtt, {});
    ASSERT_TRUE(ring.ok() && page.ok());
    std::vector<uint32_t> storage(64);
    pm4::Stream s(storage, pm4::Gfx::Gfx11);
    s.nop(4).nop(2);
    std::copy(s.dwords().begin(), s.dwords().end(), page->as<uint32_t>());
    const kfd::IbRange ibs[2] = {{page->gpuVa, 4}, {page->gpuVa + 16, 2}};
    ASSERT_TRUE((*ring)->submit(ibs).ok());
    ASSERT_TRUE((*ring)->wait(1, 10000).ok());
    ASSERT_EQ(node.recorder->jobs.size(), 1u);
    const auto& job = node.recorder->jobs[0];
    EXPECT_EQ(job.ctx, 1u);
    EXPECT_EQ(job.boListHandle, 0u);
    EXPECT_EQ(job.chunkIds, (std::vector<uint32_t>{AMDGPU_CHUNK_ID_IB, AMDGPU_CHUNK_ID_IB, AMDGPU_CHUNK_ID_BO_HANDLES, AMDGPU_CHUNK_ID_SYNCOBJ_OUT}));
    EXPECT_EQ(job.ibs[0].va_start, page->gpuVa);
    EXPECT_EQ(job.ibs[0].ib_bytes, 16u);
    EXPECT_EQ(job.ibs[1].ib_bytes, 8u);
    EXPECT_EQ(job.ibs[0].ip_type, uint32_t(AMDGPU_HW_IP_COMPUTE));
    EXPECT_EQ(job.ibs[0].ring, 0u);
    EXPECT_EQ(job.ibs[0].flags, 0u);
    EXPECT_EQ(job.list.operation, ~0u);
    EXPECT_EQ(job.list.bo_info_size, sizeof(drm_amdgpu_bo_list_entry));
    EXPECT_EQ(job.list.bo_number, 2u) << "the event page and this page";
    EXPECT_NE(job.syncobj.handle, 0u);
}

// amdgpu's lockup_timeout as the kernel parses it (Linux 71cc9ef, ec8fbb4): one value sets the
// non-compute rings only, the second of several is compute's, 0 keeps the default (10 s),
// a negative value is no timeout (0 here).
TEST(Cs, ComputeJobTimeoutFollowsAmdgpusLockupTimeout) {
    EXPECT_EQ(computeJobTimeoutMs(""), 10000u);
    EXPECT_EQ(computeJobTimeoutMs("0\n"), 10000u);
    EXPECT_EQ(computeJobTimeoutMs("5000"), 10000u) << "one value: the non-compute rings";
    EXPECT_EQ(computeJobTimeoutMs("10000,60000,10000,10000"), 60000u);
    EXPECT_EQ(computeJobTimeoutMs("10000,0,10000,10000"), 10000u);
    EXPECT_EQ(computeJobTimeoutMs("10000,-1"), 0u) << "negative: no timeout";
    EXPECT_EQ(computeJobTimeoutMs(" 2000 , 3000 "), 3000u);
}

// The CS ring reports the simulated driver's job timeout (the host's: lockup_timeout).
TEST(Cs, TheRingReportsTheKernelsJobTimeout) {
    auto node = openNode();
    auto ring = node.device->openKernelRing();
    ASSERT_TRUE(ring.ok()) << ring.error().describe();
    EXPECT_EQ((*ring)->jobTimeoutMs(), SimAmdgpuOptions{}.jobTimeoutMs);
}

}  // namespace
}  // namespace zinc::umq
