#pragma once
// Fine-grained buffer SVM from an OpenCL context (PoCL's CPU device): memory whose pointers
// mean the same to the host and to kernels, so the simulated GPU's "device memory" can be
// handed to kernels by address, exactly as a kernarg segment carries it.
#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

namespace zinc::kernels {

struct SvmRange {
    uint8_t* base = nullptr;
    size_t size = 0;
};

class SvmAllocator {
public:
    explicit SvmAllocator(cl_context context) : context_(context) {}
    ~SvmAllocator();
    SvmAllocator(const SvmAllocator&) = delete;
    SvmAllocator& operator=(const SvmAllocator&) = delete;

    // Zero-filled; alignment a power of two. PoCL aligns SVM to 128 bytes at most, so larger
    // alignments (pages for rings, 256 bytes for code) are carved out of a larger block.
    // Throws PoclError when out of memory.
    void* alloc(size_t bytes, size_t alignment = 4096);
    // Frees an allocation by its base; throws for a pointer that is not one.
    void free(void* base);
    // The allocation holding [p, p + bytes), or nullopt.
    std::optional<SvmRange> find(const void* p, size_t bytes = 1) const;
    size_t allocatedBytes() const;
    size_t allocationCount() const;

private:
    cl_context context_;
    mutable std::mutex mutex_;
    struct Block {
        size_t size;
        void* raw;  // what clSVMAlloc returned
    };
    std::map<uintptr_t, Block> blocks_;  // aligned base -> block
    size_t total_ = 0;
};

}  // namespace zinc::kernels
