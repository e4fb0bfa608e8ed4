#pragma once
// A fake /dev/kfd behind the Syscalls seam: it answers the ioctls the Linux path makes and checks
// their arguments the way the kernel does (kfd_chardev.c, kfd_queue.c kfd_queue_acquire_buffers;
// FACTS.md §5), so the ioctl sequence runs end to end on a machine without an AMD GPU. Memory
// "mapped" through the render node or /dev/kfd is plain anonymous memory at the fixed address.
#include <cerrno>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kfd/device/kfd_uapi.h"
#include "kfd/device/syscalls.h"

namespace zinc::kfd::testing {

class FakeKfd final : public Syscalls {
public:
    // Paths the fake answers for; gpuId as the fake topology's gpu_id.
    FakeKfd(std::string kfdPath, std::string renderPath, uint32_t gpuId)
        : kfdPath_(std::move(kfdPath)), renderPath_(std::move(renderPath)), gpuId_(gpuId) {}

    int open(const char* path, int flags) override;
    int close(int fd) override;
    int ioctl(int fd, unsigned long request, void* arg) override;
    void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) override;
    int munmap(void* addr, size_t length) override;

    struct Allocation {
        uint64_t va = 0, size = 0, mmapOffset = 0;
        uint32_t flags = 0;
        bool mapped = false;
    };
    std::vector<std::string> log;            // ioctl names in call order
    std::map<uint64_t, Allocation> allocations;  // by handle
    std::map<uint32_t, uapi::create_queue_args> queues;  // by queue id
    std::set<uint32_t> signalled;           // events SET_EVENT has signalled
    uint32_t failNext = 0;                  // this ioctl request fails once ...
    int failErrno = 0;                      // ... with this errno
    int closedFds = 0;

    // What the kernel's topology gives for the fake node (96-CU gfx1100, FACTS.md §5.5 example):
    // the fake checks against these numbers, not against our formula.
    static constexpr uint32_t kCtlStackSize = 0xA000;
    static constexpr uint32_t kCwsrSize = 0x2BEA000;
    static constexpr uint64_t kCtxSaveMapping = 0x2C02000;
    static constexpr uint32_t kEopSize = 4096;

private:
    int fail(int err) {
        errno = err;
        return -1;
    }
    // The allocation whose VA range starts exactly at `va` (KFD's buffer lookups are by start).
    const Allocation* at(uint64_t va) const;
    // The allocation containing `va`.
    const Allocation* containing(uint64_t va) const;
    int createQueue(uapi::create_queue_args& a);
    int createEvent(uapi::create_event_args& a);

    std::string kfdPath_, renderPath_;
    uint32_t gpuId_;
    static constexpr int kKfdFd = 1000, kRenderFd = 1001;
    uint64_t nextHandle_ = 0x100;
    uint32_t nextQueue_ = 1, nextEvent_ = 1, nextSlot_ = 0;
    bool eventPageSet_ = false;
};

}  // namespace zinc::kfd::testing
