#pragma once
// What the fuzz targets share: where ../shared is (ZINC_SHARED, else the folder beside the
// source tree), and a file in memory for loaders that take a path (GgufFile::open maps it, as
// it maps a model on disk), rewritten for every input without touching the disk.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace zinc::fuzz {

inline std::string sharedPath(const std::string& relative) {
    const char* root = std::getenv("ZINC_SHARED");
    return std::string(root ? root : ZINC_FUZZ_SHARED) + "/" + relative;
}

class MemoryFile {
public:
    explicit MemoryFile(const char* name) : fd_(::memfd_create(name, MFD_CLOEXEC)) {
        if (fd_ < 0) {
            std::perror("memfd_create");
            std::abort();
        }
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    // Replaces the contents with `size` bytes.
    const std::string& write(const uint8_t* data, size_t size) {
        if (::ftruncate(fd_, 0) != 0 || (size && ::pwrite(fd_, data, size, 0) != static_cast<ssize_t>(size))) {
            std::perror("memory file");
            std::abort();
        }
        return path_;
    }

private:
    int fd_;
    std::string path_;
};

}  // namespace zinc::fuzz
