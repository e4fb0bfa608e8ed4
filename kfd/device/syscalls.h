#pragma once
// The system calls the Linux KFD path makes, behind one seam. The real ones by default; tests
// put a fake KFD behind it that checks every ioctl the way the kernel does, so the ioctl
// sequence and its arguments are exercised on a machine without an AMD GPU.
#include <sys/types.h>

#include <cstddef>

namespace zinc::kfd {

class Syscalls {
public:
    virtual ~Syscalls() = default;
    // Same contracts as the libc calls: -1 / MAP_FAILED with errno set on failure.
    virtual int open(const char* path, int flags) = 0;
    virtual int close(int fd) = 0;
    virtual int ioctl(int fd, unsigned long request, void* arg) = 0;
    virtual void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) = 0;
    virtual int munmap(void* addr, size_t length) = 0;
};

// The process's real system calls.
Syscalls& hostSyscalls();

}  // namespace zinc::kfd
