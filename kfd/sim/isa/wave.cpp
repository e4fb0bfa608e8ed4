#include <cstdio>

#include "kfd/sim/isa/wave.h"

namespace zinc::kfd::isa {

void Wave::fail(const std::string& why) const {
    const Inst& i = program->insts[current];
    char where[64];
    std::snprintf(where, sizeof where, "at 0x%llx (", static_cast<unsigned long long>(i.address));
    throw IsaError(std::string(where) + program->text[current] + "): " + why);
}

uint8_t* Wave::host(uint64_t address, uint32_t bytes) {
    if (address < regionLo || address + bytes > regionHi) {
        uint64_t lo = 0, hi = 0;
        if (!memory || !memory->region(address, lo, hi) || address + bytes > hi) {
            char text[96];
            std::snprintf(text, sizeof text, "memory access of %u bytes at 0x%llx is not mapped", bytes, static_cast<unsigned long long>(address));
            fail(text);
        }
        regionLo = lo;
        regionHi = hi;
    }
    return reinterpret_cast<uint8_t*>(address);
}

PendingLoad& Wave::issue(Counter counter, bool vector, uint16_t reg, uint8_t count, uint32_t mask) {
    const size_t dwords = size_t(vector ? 32 : 1) * count;
    if (dwords > LoadData().size()) fail(vector ? "a load of more than 4 dwords a lane" : "a scalar load of more than 128 dwords");
    uint32_t slot = kNoSlot;  // an LDS store's count (no data) takes no slot
    if (dwords > 0) {
        if (freeSlots.empty()) {
            slot = uint32_t(loadSlots.size());
            loadSlots.emplace_back();
        } else {
            slot = freeSlots.back();
            freeSlots.pop_back();
        }
        std::fill_n(loadSlots[slot].begin(), dwords, 0u);
    }
    return pending.emplace_back(PendingLoad{counter, vector, reg, count, mask, slot});
}

void Wave::clearPending() {
    pending.clear();
    freeSlots.resize(loadSlots.size());
    for (uint32_t k = 0; k < freeSlots.size(); ++k) freeSlots[k] = k;
}

void Wave::retire(size_t index) {
    const PendingLoad& p = pending[index];
    if (p.slot == kNoSlot) return;
    const uint32_t* data = loadData(p);
    if (!p.vector) {
        for (uint32_t k = 0; k < p.count; ++k) s[p.reg + k] = data[k];
    } else {
        forLanes(p.mask, [&](uint32_t lane) {
            for (uint32_t k = 0; k < p.count; ++k) vgpr[(p.reg + k) * 32 + lane] = data[lane * p.count + k];
        });
    }
    freeSlots.push_back(p.slot);
}

void Wave::waitFor(uint8_t counters, int limit) {
    int count = 0;
    for (const PendingLoad& p : pending) count += (uint8_t(p.counter) & counters) ? 1 : 0;
    for (size_t k = 0; count > limit && k < pending.size();) {
        if (uint8_t(pending[k].counter) & counters) {
            retire(k);
            pending.erase(pending.begin() + ptrdiff_t(k));
            --count;
        } else {
            ++k;
        }
    }
}

}  // namespace zinc::kfd::isa
