#include "pm4/ring.h"

#include <algorithm>
#include <cassert>

namespace zinc::pm4 {

std::optional<std::string> RingLayout::check() const {
    if (sizeDwords == 0 || (sizeDwords & (sizeDwords - 1)) != 0)
        return "ring size " + std::to_string(sizeDwords) + " dwords is not a power of two";
    if (sizeDwords < 4) return "ring size " + std::to_string(sizeDwords) + " dwords is below the 4-dword minimum";
    if (base % 4 != 0) return "ring base " + std::to_string(base) + " is not 4-byte aligned";
    if (base + 4ull * sizeDwords < base) return "ring wraps the address space";
    return std::nullopt;
}

RingWriter::RingWriter(const RingLayout& layout, MemoryInterface& memory, uint64_t wptr)
    : layout_(layout), memory_(memory), wptr_(wptr) {
    assert(!layout.check());
}

uint32_t RingWriter::space(uint64_t rptr) const {
    assert(wptr_ >= rptr && wptr_ - rptr <= layout_.sizeDwords);
    return layout_.sizeDwords - static_cast<uint32_t>(wptr_ - rptr);
}

bool RingWriter::write(std::span<const uint32_t> dwords, uint64_t rptr) {
    if (dwords.size() > space(rptr)) return false;
    const uint32_t slot = layout_.slot(wptr_);
    const size_t first = std::min<size_t>(dwords.size(), layout_.sizeDwords - slot);
    if (!memory_.write(layout_.addressOf(wptr_), dwords.first(first))) return false;
    if (first < dwords.size() && !memory_.write(layout_.base, dwords.subspan(first))) return false;
    wptr_ += dwords.size();
    return true;
}

}  // namespace zinc::pm4
