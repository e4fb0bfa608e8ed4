#include "pm4/memory.h"

#include <cassert>

namespace zinc::pm4 {

LinearMemory::LinearMemory(uint64_t base, uint64_t bytes)
    : base_(base), dwords_(bytes / 4), data_(new std::atomic<uint32_t>[bytes / 4]) {
    assert(base % 4 == 0 && bytes % 4 == 0);
    for (uint64_t i = 0; i < dwords_; ++i) data_[i].store(0, std::memory_order_relaxed);
}

bool LinearMemory::contains(uint64_t address, uint64_t dwords) const {
    if (address % 4 != 0 || address < base_) return false;
    const uint64_t first = (address - base_) / 4;
    return first <= dwords_ && dwords <= dwords_ - first;
}

bool LinearMemory::read(uint64_t address, std::span<uint32_t> out) {
    if (!contains(address, out.size())) return false;
    const uint64_t first = (address - base_) / 4;
    for (size_t i = 0; i < out.size(); ++i) out[i] = data_[first + i].load(std::memory_order_acquire);
    return true;
}

bool LinearMemory::write(uint64_t address, std::span<const uint32_t> data) {
    if (!contains(address, data.size())) return false;
    const uint64_t first = (address - base_) / 4;
    for (size_t i = 0; i < data.size(); ++i) data_[first + i].store(data[i], std::memory_order_release);
    return true;
}

uint32_t LinearMemory::load(uint64_t address) const {
    assert(contains(address, 1));
    return data_[(address - base_) / 4].load(std::memory_order_acquire);
}

void LinearMemory::store(uint64_t address, uint32_t value) {
    assert(contains(address, 1));
    data_[(address - base_) / 4].store(value, std::memory_order_release);
}

uint64_t LinearMemory::load64(uint64_t address) const {
    return uint64_t{load(address + 4)} << 32 | load(address);
}

}  // namespace zinc::pm4
