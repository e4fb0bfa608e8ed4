#pragma once
// How the simulated command processor reaches GPU memory: dwords at GPU virtual addresses, with
// failure for an address nothing is mapped at (the executor turns that into a fault, as a GPU
// page fault stops a queue).
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>

namespace zinc::pm4 {

class MemoryInterface {
public:
    virtual ~MemoryInterface() = default;
    // Reads out.size() dwords from `address` (4-byte aligned). False when any of them is unmapped.
    virtual bool read(uint64_t address, std::span<uint32_t> out) = 0;
    // Writes data at `address` (4-byte aligned). False, and nothing written, when any is unmapped.
    virtual bool write(uint64_t address, std::span<const uint32_t> data) = 0;
};

// One mapped window [base, base + bytes) of zero-filled memory. Its dwords are atomics, so a
// host thread may write a fence word while the command processor polls it.
class LinearMemory final : public MemoryInterface {
public:
    LinearMemory(uint64_t base, uint64_t bytes);

    uint64_t base() const { return base_; }
    uint64_t bytes() const { return dwords_ * 4; }
    bool contains(uint64_t address, uint64_t dwords) const;

    bool read(uint64_t address, std::span<uint32_t> out) override;
    bool write(uint64_t address, std::span<const uint32_t> data) override;

    // Host-side access to one dword (asserts the address is inside).
    uint32_t load(uint64_t address) const;
    void store(uint64_t address, uint32_t value);
    uint64_t load64(uint64_t address) const;

private:
    uint64_t base_;
    uint64_t dwords_;
    std::unique_ptr<std::atomic<uint32_t>[]> data_;
};

}  // namespace zinc::pm4
