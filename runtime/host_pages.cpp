#include "runtime/host_pages.h"

#include <sys/mman.h>
#include <unistd.h>

namespace zinc::runtime {

void giveBackPages(const uint8_t* data, size_t bytes) {
    const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;  // whole pages only:
    const auto end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;       // neighbours may be in use
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace zinc::runtime
