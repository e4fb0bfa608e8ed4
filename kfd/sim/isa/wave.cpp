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

void Wave::retire(size_t index) {
    const PendingLoad& p = pending[index];
    if (!p.vector) {
        for (uint32_t k = 0; k < p.count; ++k) s[p.reg + k] = p.data[k];
        return;
    }
    forLanes(p.mask, [&](uint32_t lane) {
        for (uint32_t k = 0; k < p.count; ++k) vgpr[(p.reg + k) * 32 + lane] = p.data[lane * p.count + k];
    });
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
