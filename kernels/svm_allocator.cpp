#include "kernels/svm_allocator.h"

#include <cstring>

#include <fmt/format.h>

#include "kernels/pocl_runner.h"

namespace zinc::kernels {

namespace {
// The base alignment PoCL's CPU device guarantees for SVM (CL_DEVICE_MEM_BASE_ADDR_ALIGN).
constexpr size_t kNativeAlignment = 128;
}  // namespace

SvmAllocator::~SvmAllocator() {
    for (const auto& [base, block] : blocks_) clSVMFree(context_, block.raw);
}

void* SvmAllocator::alloc(size_t bytes, size_t alignment) {
    if (bytes == 0) bytes = 1;
    if (alignment < kNativeAlignment) alignment = kNativeAlignment;
    if ((alignment & (alignment - 1)) != 0) throw PoclError(fmt::format("SVM alloc: alignment {} is not a power of two", alignment));
    const size_t extra = alignment - kNativeAlignment;
    if (bytes > SIZE_MAX - extra) throw PoclError(fmt::format("SVM alloc: {} bytes is too large", bytes));
    void* raw = clSVMAlloc(context_, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, bytes + extra, kNativeAlignment);
    if (!raw) throw PoclError(fmt::format("SVM alloc: clSVMAlloc of {} bytes failed", bytes + extra));
    const uintptr_t base = (reinterpret_cast<uintptr_t>(raw) + alignment - 1) & ~(uintptr_t{alignment} - 1);
    void* p = reinterpret_cast<void*>(base);
    std::memset(p, 0, bytes);
    std::lock_guard lock(mutex_);
    blocks_[base] = Block{bytes, raw};
    total_ += bytes;
    return p;
}

void SvmAllocator::free(void* base) {
    if (!base) return;
    void* raw = nullptr;
    {
        std::lock_guard lock(mutex_);
        const auto it = blocks_.find(reinterpret_cast<uintptr_t>(base));
        if (it == blocks_.end()) throw PoclError(fmt::format("SVM free: {} is not the base of an SVM allocation", base));
        total_ -= it->second.size;
        raw = it->second.raw;
        blocks_.erase(it);
    }
    clSVMFree(context_, raw);
}

std::optional<SvmRange> SvmAllocator::find(const void* p, size_t bytes) const {
    const auto addr = reinterpret_cast<uintptr_t>(p);
    std::lock_guard lock(mutex_);
    auto it = blocks_.upper_bound(addr);
    if (it == blocks_.begin()) return std::nullopt;
    --it;
    const uintptr_t offset = addr - it->first;
    if (offset >= it->second.size || bytes > it->second.size - offset) return std::nullopt;
    return SvmRange{reinterpret_cast<uint8_t*>(it->first), it->second.size};
}

size_t SvmAllocator::allocatedBytes() const {
    std::lock_guard lock(mutex_);
    return total_;
}

size_t SvmAllocator::allocationCount() const {
    std::lock_guard lock(mutex_);
    return blocks_.size();
}

}  // namespace zinc::kernels
