#pragma once
// The simulated GPU's memory: every allocation is host memory whose address is also its GPU
// virtual address (GPU VA == host pointer), so a kernarg segment, a fence address or a ring base
// means the same to the host, to the command processor and to a kernel running on PoCL.
//
// The command processor reaches it only through pm4::MemoryInterface, which checks every access
// against the allocations: an address nothing is allocated at is a GPU page fault, not a host
// crash. Kernels on PoCL need fine-grained SVM, so allocations come from an SvmSource when one
// is given (kernels::SvmAllocator); large areas the simulated CP never touches (context-save)
// come from lazily committed anonymous memory.
#include <cstdint>
#include <map>
#include <memory>
#include <shared_mutex>
#include <span>

#include "kfd/device/device.h"
#include "pm4/memory.h"

namespace zinc::kernels {
class SvmAllocator;
}  // namespace zinc::kernels

namespace zinc::kfd {

// Where SVM comes from: kernels::SvmAllocator, behind this seam so the memory model does not
// depend on OpenCL and tests can run without PoCL.
class SvmSource {
public:
    virtual ~SvmSource() = default;
    virtual void* allocate(uint64_t bytes, uint64_t alignment) = 0;  // zero-filled; null when out of memory
    virtual void release(void* base) = 0;
    virtual const char* name() const = 0;
};

// kernels::SvmAllocator (PoCL fine-grained SVM) as the memory model's SVM source: GPU
// addresses are host pointers the PoCL kernels can dereference.
class PoclSvm final : public SvmSource {
public:
    explicit PoclSvm(kernels::SvmAllocator& svm) : svm_(svm) {}
    void* allocate(uint64_t bytes, uint64_t alignment) override;
    void release(void* base) override;
    const char* name() const override { return "PoCL fine-grained SVM"; }

private:
    kernels::SvmAllocator& svm_;
};

class SimMemory final : public pm4::MemoryInterface {
public:
    enum class Backing : uint8_t { Svm, Anonymous };

    explicit SimMemory(SvmSource* svm) : svm_(svm) {}
    ~SimMemory() override;

    // Zero-filled, 4 KiB aligned, rounded up to 4 KiB. Svm falls back to nothing: without an
    // SvmSource, Svm requests are served Anonymous (kernels will then refuse the pointers).
    Result<Memory> allocate(uint64_t bytes, MemoryKind kind, Backing backing);
    Status release(Memory& memory);

    // pm4::MemoryInterface: dword access with a fault for any address outside an allocation.
    bool read(uint64_t address, std::span<uint32_t> out) override;
    bool write(uint64_t address, std::span<const uint32_t> data) override;
    // Byte reads for kernarg segments (any alignment).
    bool readBytes(uint64_t address, std::span<uint8_t> out) const;
    // True when [address, address + bytes) lies inside one allocation.
    bool mapped(uint64_t address, uint64_t bytes) const;
    // The allocation around `address` as [lo, hi): what the shader interpreter caches per wave.
    bool region(uint64_t address, uint64_t& lo, uint64_t& hi) const;
    // "0x7f.. (GTT, 0x1000 bytes)" for the allocation around an address, or "unmapped".
    std::string describeAddress(uint64_t address) const;

    uint64_t allocatedBytes() const;

private:
    struct Region {
        uint64_t bytes = 0;
        MemoryKind kind = MemoryKind::Gtt;
        Backing backing = Backing::Anonymous;
        uint64_t id = 0;
    };
    // The region holding [address, address + bytes); null when none does. Caller holds mutex_.
    const Region* find(uint64_t address, uint64_t bytes, uint64_t* base = nullptr) const;

    SvmSource* svm_;
    mutable std::shared_mutex mutex_;
    std::map<uint64_t, Region> regions_;  // by base address
    uint64_t nextId_ = 1;
};

}  // namespace zinc::kfd
