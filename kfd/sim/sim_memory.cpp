#include "kfd/sim/sim_memory.h"

#include "kernels/svm_allocator.h"
#include "kfd/device/hex.h"

#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace zinc::kfd {

void* PoclSvm::allocate(uint64_t bytes, uint64_t alignment) {
    try {
        return svm_.alloc(bytes, alignment);
    } catch (const std::exception&) {
        return nullptr;  // out of SVM: the caller reports the allocation that failed
    }
}

void PoclSvm::release(void* base) { svm_.free(base); }
namespace {

constexpr uint64_t kPage = 4096;

}  // namespace

SimMemory::~SimMemory() {
    std::unique_lock lock(mutex_);
    for (auto& [base, region] : regions_) {
        if (region.backing == Backing::Svm) svm_->release(reinterpret_cast<void*>(base));
        else ::munmap(reinterpret_cast<void*>(base), region.bytes);
    }
}

Result<Memory> SimMemory::allocate(uint64_t bytes, MemoryKind kind, Backing backing) {
    if (bytes == 0) return plainError("allocMemory", "zero-byte allocation");
    bytes = (bytes + kPage - 1) / kPage * kPage;
    if (!svm_) backing = Backing::Anonymous;
    void* p = nullptr;
    if (backing == Backing::Svm) {
        p = svm_->allocate(bytes, kPage);
        if (!p) return Error{"allocMemory", ENOMEM, std::string(svm_->name()) + " could not allocate " + hex(bytes) + " bytes"};
    } else {
        // Anonymous pages are zero and committed only when touched: a 46 MiB context-save area
        // the simulated CP never writes costs address space, not memory.
        p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) return errnoError("allocMemory", "mmap of " + hex(bytes) + " bytes for the simulated GPU");
    }
    std::unique_lock lock(mutex_);
    const uint64_t id = nextId_++;
    regions_[reinterpret_cast<uint64_t>(p)] = Region{bytes, kind, backing, id};
    return Memory{reinterpret_cast<uint64_t>(p), p, bytes, kind, id};
}

Status SimMemory::release(Memory& memory) {
    if (!memory) return {};
    std::unique_lock lock(mutex_);
    const auto it = regions_.find(memory.gpuVa);
    if (it == regions_.end() || it->second.id != memory.handle)
        return plainError("freeMemory", "no simulated allocation " + hex(memory.gpuVa) + " (handle " + std::to_string(memory.handle) + ")");
    if (it->second.backing == Backing::Svm) svm_->release(memory.cpuPtr);
    else ::munmap(memory.cpuPtr, it->second.bytes);
    regions_.erase(it);
    memory = Memory{};
    return {};
}

const SimMemory::Region* SimMemory::find(uint64_t address, uint64_t bytes, uint64_t* base) const {
    auto it = regions_.upper_bound(address);
    if (it == regions_.begin()) return nullptr;
    --it;
    const uint64_t offset = address - it->first;
    if (offset >= it->second.bytes || bytes > it->second.bytes - offset) return nullptr;
    if (base) *base = it->first;
    return &it->second;
}

bool SimMemory::mapped(uint64_t address, uint64_t bytes) const {
    std::shared_lock lock(mutex_);
    return find(address, bytes) != nullptr;
}

bool SimMemory::region(uint64_t address, uint64_t& lo, uint64_t& hi) const {
    std::shared_lock lock(mutex_);
    uint64_t base = 0;
    const Region* r = find(address, 1, &base);
    if (!r) return false;
    lo = base;
    hi = base + r->bytes;
    return true;
}

bool SimMemory::read(uint64_t address, std::span<uint32_t> out) {
    if (address % 4) return false;
    std::shared_lock lock(mutex_);
    if (!find(address, out.size() * 4)) return false;
    // The host may be writing these dwords while the CP polls them (WAIT_REG_MEM on a flag the
    // CPU sets): access each as an atomic, as the hardware sees whole dwords.
    auto* p = reinterpret_cast<uint32_t*>(address);
    for (size_t i = 0; i < out.size(); ++i) out[i] = std::atomic_ref<uint32_t>(p[i]).load(std::memory_order_acquire);
    return true;
}

bool SimMemory::write(uint64_t address, std::span<const uint32_t> data) {
    if (address % 4) return false;
    std::shared_lock lock(mutex_);
    if (!find(address, data.size() * 4)) return false;
    auto* p = reinterpret_cast<uint32_t*>(address);
    for (size_t i = 0; i < data.size(); ++i) std::atomic_ref<uint32_t>(p[i]).store(data[i], std::memory_order_release);
    return true;
}

bool SimMemory::readBytes(uint64_t address, std::span<uint8_t> out) const {
    std::shared_lock lock(mutex_);
    if (!find(address, out.size())) return false;
    std::memcpy(out.data(), reinterpret_cast<const void*>(address), out.size());
    return true;
}

std::string SimMemory::describeAddress(uint64_t address) const {
    std::shared_lock lock(mutex_);
    uint64_t base = 0;
    const Region* r = find(address, 1, &base);
    if (!r) return hex(address) + " (unmapped)";
    return hex(address) + " (" + std::string(memoryKindName(r->kind)) + " allocation " + hex(base) + " + " + hex(address - base) + ")";
}

uint64_t SimMemory::allocatedBytes() const {
    std::shared_lock lock(mutex_);
    uint64_t total = 0;
    for (const auto& [base, r] : regions_) total += r.bytes;
    return total;
}

}  // namespace zinc::kfd
