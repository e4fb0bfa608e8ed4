#include "kfd/device/syscalls.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace zinc::kfd {
namespace {

class HostSyscalls final : public Syscalls {
public:
    int open(const char* path, int flags) override { return ::open(path, flags); }
    int close(int fd) override { return ::close(fd); }
    int ioctl(int fd, unsigned long request, void* arg) override { return ::ioctl(fd, request, arg); }
    void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) override {
        return ::mmap(addr, length, prot, flags, fd, offset);
    }
    int munmap(void* addr, size_t length) override { return ::munmap(addr, length); }
};

}  // namespace

Syscalls& hostSyscalls() {
    static HostSyscalls host;
    return host;
}

}  // namespace zinc::kfd
