#pragma once
// The queue model: a ring of dwords in GPU memory that a host writes packets into and the
// command processor consumes, as on hardware.
//  - size is a power of two, in dwords;
//  - wptr and rptr count dwords since the queue was created. They are 64-bit and never wrap
//    (the KFD/amdgpu 64-bit write-pointer convention; tinygrad's test_amd_ring_64bit_doorbell runs
//    a queue's wptr past 2^32); the ring slot of a pointer is ptr & (size - 1);
//  - empty when rptr == wptr, full when wptr - rptr == size; a packet may straddle the end of
//    the ring (the CP reads modulo the size, so no padding is needed);
//  - the host writes the packet dwords, then publishes wptr (memory, then the doorbell); the CP
//    executes [rptr, wptr) and advances rptr past each packet it has consumed.
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "pm4/memory.h"

namespace zinc::pm4 {

struct RingLayout {
    uint64_t base = 0;        // GPU virtual address of slot 0 (4-byte aligned)
    uint32_t sizeDwords = 0;  // a power of two

    // Why this layout cannot be a ring, or nullopt when it can.
    std::optional<std::string> check() const;
    uint32_t mask() const { return sizeDwords - 1; }
    uint32_t slot(uint64_t ptr) const { return static_cast<uint32_t>(ptr) & mask(); }
    uint64_t addressOf(uint64_t ptr) const { return base + 4ull * slot(ptr); }
};

// The host side of a ring: copies packets in at wptr, wrapping, never overrunning rptr.
class RingWriter {
public:
    RingWriter(const RingLayout& layout, MemoryInterface& memory, uint64_t wptr = 0);

    const RingLayout& layout() const { return layout_; }
    uint64_t wptr() const { return wptr_; }
    // Free dwords given the CP's current rptr.
    uint32_t space(uint64_t rptr) const;
    // Appends `dwords` at wptr (split at the end of the ring). False, with nothing written and
    // wptr unchanged, when they do not fit before rptr or memory refuses the address.
    bool write(std::span<const uint32_t> dwords, uint64_t rptr);

private:
    RingLayout layout_;
    MemoryInterface& memory_;
    uint64_t wptr_;
};

}  // namespace zinc::pm4
