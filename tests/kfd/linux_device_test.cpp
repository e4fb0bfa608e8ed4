// The Linux /dev/kfd path as far as a machine without an AMD GPU can take it: a clear error when
// there is no KFD, the ioctl layer keeping errno when the node is not KFD at all, and the whole
// ioctl sequence against a fake KFD that checks arguments as the kernel does.
#include <cerrno>
#include <filesystem>

#include <gtest/gtest.h>

#include "kfd/device/device.h"
#include "kfd/device/kfd_uapi.h"
#include "kfd/linux/linux_device.h"
#include "tests/kfd/fake_kfd.h"
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

// A fake topology (gpu_id 45778, renderD128) and a fake KFD answering for it.
class KfdOnFakeKernel : public ::testing::Test {
protected:
    void SetUp() override {
        writeFakeTopology(dir.path() + "/topology");
        writeFile(fs::path(dir.path()) / "kfd", "");  // the node exists; the fake answers for it
        options.kfdPath = dir.path() + "/kfd";
        options.topologyRoot = dir.path() + "/topology";
        options.driPath = dir.path() + "/dri";
        options.syscalls = &kfd;
    }
    std::unique_ptr<Device> open() {
        Result<std::unique_ptr<Device>> d = openLinuxDevice(options);
        EXPECT_TRUE(d.ok()) << d.error().describe();
        return d.ok() ? std::move(*d) : nullptr;
    }

    TempDir dir;
    FakeKfd kfd{dir.path() + "/kfd", dir.path() + "/dri/renderD128", 45778};
    LinuxOptions options;
};

TEST_F(KfdOnFakeKernel, OpensInTheKernelsOrder) {
    std::unique_ptr<Device> device = open();
    ASSERT_TRUE(device);
    EXPECT_EQ(device->name(), "linux /dev/kfd 1.15, node 1 (gpu_id 0xb2d2, gfx1100)");
    // GET_VERSION, ACQUIRE_VM with the render node, RUNTIME_ENABLE (KFD >= 1.14), the apertures,
    // then the event page (alloc + map) before the first CREATE_EVENT, then the memory and
    // HW-exception events.
    const std::vector<std::string> expected = {"GET_VERSION", "ACQUIRE_VM", "RUNTIME_ENABLE", "GET_PROCESS_APERTURES_NEW", "ALLOC_MEMORY_OF_GPU",
                                               "MAP_MEMORY_TO_GPU", "CREATE_EVENT", "CREATE_EVENT"};
    EXPECT_EQ(kfd.log, expected);
}

TEST_F(KfdOnFakeKernel, CreatesAQueueTheKernelAccepts) {
    std::unique_ptr<Device> device = open();
    ASSERT_TRUE(device);
    Result<Queue> queue = device->createQueue({});
    ASSERT_TRUE(queue.ok()) << queue.error().describe();  // the fake applied kfd_queue_acquire_buffers' rules
    ASSERT_EQ(kfd.queues.size(), 1u);
    const uapi::create_queue_args& args = kfd.queues.begin()->second;
    EXPECT_EQ(args.ring_size, QueueOptions{}.ringBytes);
    EXPECT_EQ(args.queue_type, uapi::kQueueTypeCompute);
    EXPECT_EQ(args.read_pointer_address, queue->pointers.gpuAddress(Queue::kRptrOffset));
    EXPECT_EQ(args.write_pointer_address, queue->pointers.gpuAddress(Queue::kWptrOffset));
    EXPECT_EQ(args.ctl_stack_size, FakeKfd::kCtlStackSize);
    EXPECT_EQ(args.ctx_save_restore_size, FakeKfd::kCwsrSize);
    // The doorbell: the low bits of doorbell_offset inside the frame mapped from /dev/kfd.
    const uint64_t inFrame = args.doorbell_offset & (uapi::kDoorbellFrameBytes - 1);
    EXPECT_EQ(inFrame, queue->id * 8u);
    // Ringing writes wptr, then the 64-bit doorbell, both with the same value.
    device->ringDoorbell(*queue, 0x42);
    EXPECT_EQ(*queue->wptr(), 0x42u);
    EXPECT_EQ(*queue->doorbell, 0x42u);
    EXPECT_EQ(device->readQueueState(*queue).doorbell, 0x42u);

    // The ring and pointer pages are uncached GTT; EOP in VRAM.
    for (const auto& [handle, a] : kfd.allocations) {
        if (a.va == queue->ring.gpuVa || a.va == queue->pointers.gpuVa) {
            EXPECT_EQ(a.flags & (uapi::kAllocGtt | uapi::kAllocCoherent | uapi::kAllocUncached),
                      uapi::kAllocGtt | uapi::kAllocCoherent | uapi::kAllocUncached);
        }
        if (a.va == queue->eop.gpuVa) {
            EXPECT_TRUE(a.flags & uapi::kAllocVram);
        }
    }
    const size_t before = kfd.allocations.size();
    ASSERT_TRUE(device->destroyQueue(*queue).ok());
    EXPECT_TRUE(kfd.queues.empty());
    EXPECT_EQ(kfd.allocations.size(), before - 4);  // ring, pointers, EOP, context save
}

TEST_F(KfdOnFakeKernel, WaitTimesOutWithQueueState) {
    std::unique_ptr<Device> device = open();
    ASSERT_TRUE(device);
    Result<Queue> queue = device->createQueue({});
    ASSERT_TRUE(queue.ok()) << queue.error().describe();
    Result<Event> event = device->createEvent(true);
    ASSERT_TRUE(event.ok()) << event.error().describe();
    queue->ringData()[0] = 0xC0053C00;  // a WAIT_REG_MEM header the fake CP never gets past
    device->ringDoorbell(*queue, 7);
    Status s = device->waitEvents({&*event, 1}, 10);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().errnum, ETIME);
    EXPECT_NE(s.error().message.find("packet at rptr: WAIT_REG_MEM"), std::string::npos) << s.error().describe();
    EXPECT_NE(s.error().message.find("wptr 0x7"), std::string::npos) << s.error().describe();
    // SET_EVENT then completes the wait.
    ASSERT_TRUE(device->setEvent(*event).ok());
    EXPECT_TRUE(device->waitEvents({&*event, 1}, 10).ok());
}

TEST_F(KfdOnFakeKernel, FailedIoctlKeepsErrnoAndFreesWhatItTook) {
    std::unique_ptr<Device> device = open();
    ASSERT_TRUE(device);
    const size_t before = kfd.allocations.size();
    kfd.failNext = uapi::kIocCreateQueue;
    kfd.failErrno = ENOMEM;
    Result<Queue> queue = device->createQueue({});
    ASSERT_FALSE(queue.ok());
    EXPECT_EQ(queue.error().operation, "CREATE_QUEUE");
    EXPECT_EQ(queue.error().errnum, ENOMEM);
    EXPECT_NE(queue.error().message.find("ctl stack 0xa000"), std::string::npos) << queue.error().describe();
    // The doorbell frame stays (it is per process); the queue's own buffers are gone.
    EXPECT_EQ(kfd.allocations.size(), before + 1);
    // A ring the kernel would refuse is refused before the ioctl.
    Result<Queue> odd = device->createQueue({.ringBytes = 5000});
    ASSERT_FALSE(odd.ok());
    EXPECT_NE(odd.error().message.find("power of two"), std::string::npos);
}

}  // namespace
}  // namespace zinc::kfd
