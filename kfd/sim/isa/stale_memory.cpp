#include "kfd/sim/isa/stale_memory.h"

#include <algorithm>

namespace zinc::kfd::isa {

void StaleMemory::add(Ranges& ranges, uint64_t lo, uint64_t hi) {
    if (lo >= hi) return;
    // Merge with every range that overlaps or touches [lo, hi).
    auto it = ranges.upper_bound(lo);
    if (it != ranges.begin()) {
        auto before = std::prev(it);
        if (before->second >= lo) it = before;
    }
    while (it != ranges.end() && it->first <= hi) {
        lo = std::min(lo, it->first);
        hi = std::max(hi, it->second);
        it = ranges.erase(it);
    }
    ranges.emplace(lo, hi);
}

bool StaleMemory::overlaps(const Ranges& ranges, uint64_t lo, uint64_t hi) {
    if (ranges.empty() || lo >= hi) return false;
    auto it = ranges.upper_bound(lo);  // first range starting after lo
    if (it != ranges.end() && it->first < hi) return true;
    if (it == ranges.begin()) return false;
    return std::prev(it)->second > lo;
}

void StaleMemory::wrote(uint64_t lo, uint64_t hi) {
    add(vector_, lo, hi);
    add(scalar_, lo, hi);
}

void StaleMemory::wrote(WrittenRanges ranges) {
    std::sort(ranges.begin(), ranges.end());
    uint64_t lo = 0, hi = 0;
    for (const auto& [a, b] : ranges) {
        if (hi > lo && a <= hi) {
            hi = std::max(hi, b);
            continue;
        }
        if (hi > lo) wrote(lo, hi);
        lo = a;
        hi = b;
    }
    if (hi > lo) wrote(lo, hi);
}

void StaleMemory::invalidate(bool vector, bool scalar) {
    if (vector) vector_.clear();
    if (scalar) scalar_.clear();
}

}  // namespace zinc::kfd::isa
