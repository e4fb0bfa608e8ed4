// Vector memory (global_load/store, FLAT-global addressing) and LDS (DS_*) for wave32.
// Semantics: AMD "RDNA3 Instruction Set Architecture Reference Guide" (2023) and "AMD RDNA4
// Instruction Set Architecture Reference Guide" (2025), chapters "Flat, Scratch and Global
// Instructions" and "Data Share Operations". Loads read memory at issue and write their
// registers only when an s_waitcnt covers them (wave.h); stores are performed at issue.
// Reads of bytes an earlier dispatch or the CP wrote, with no cache invalidate since, return
// kPoison (stale_memory.h); stores are recorded for that model. buffer_gl0_inv / global_inv
// inside a kernel have no effect: no kernel reads another dispatch's writes mid-flight.
#include <algorithm>

#include "kfd/sim/isa/wave.h"

namespace zinc::kfd::isa {
namespace {

// global_*: address = VGPR pair (saddr "off"), or SGPR pair + zero-extended VGPR; + offset.
inline uint64_t globalAddress(const Wave& w, const Inst& i, const Operand& vaddr, const Operand& saddr, uint32_t lane) {
    if (saddr.kind == OpKind::Sgpr && saddr.reg != kNull)
        return (uint64_t(w.s[saddr.reg]) | uint64_t(w.s[saddr.reg + 1]) << 32) + w.v(vaddr.reg, lane) + int64_t(i.offset);
    return (uint64_t(w.v(vaddr.reg, lane)) | uint64_t(w.v(vaddr.reg + 1, lane)) << 32) + int64_t(i.offset);
}

void poison(Wave& w, uint16_t reg, uint8_t count, uint32_t mask) {
    forLanes(mask, [&](uint32_t l) {
        for (uint32_t k = 0; k < count; ++k) w.v(reg + k, l) = kPoison;
    });
}

// Lanes whose bytes a cache may hold an old copy of read kPoison.
void staleLanes(const Wave& w, const Inst& i, uint32_t mask, uint32_t* data, uint32_t bytes, uint32_t dwords) {
    uint64_t lo = ~uint64_t(0), hi = 0;
    forLanes(mask, [&](uint32_t l) {
        const uint64_t a = globalAddress(w, i, i.op[1], i.op[2], l);
        lo = std::min(lo, a);
        hi = std::max(hi, a + bytes);
    });
    if (!w.stale->vectorStale(lo, hi)) return;
    forLanes(mask, [&](uint32_t l) {
        const uint64_t a = globalAddress(w, i, i.op[1], i.op[2], l);
        if (w.stale->vectorStale(a, a + bytes))
            for (uint32_t k = 0; k < dwords; ++k) data[l * dwords + k] = kPoison;
    });
}

// A store's lanes as byte ranges, neighbouring lanes merged.
void recordStore(Wave& w, const Inst& i, uint32_t mask, uint32_t bytes) {
    uint64_t lo = 0, hi = 0;
    forLanes(mask, [&](uint32_t l) {
        const uint64_t a = globalAddress(w, i, i.op[0], i.op[2], l);
        if (hi > lo && a == hi) {
            hi += bytes;
            return;
        }
        if (hi > lo) w.written->emplace_back(lo, hi);
        lo = a;
        hi = a + bytes;
    });
    if (hi > lo) w.written->emplace_back(lo, hi);
}

// Bytes per element, dwords written per lane, and how sub-dword values extend.
template <int Bytes, bool Signed> void global_load(Wave& w, const Inst& i) {
    constexpr uint8_t dwords = Bytes < 4 ? 1 : Bytes / 4;
    const uint32_t mask = w.exec();
    if (!mask) return;
    uint32_t* data = w.loadData(w.issue(Counter::Load, true, i.op[0].reg, dwords, mask));
    forLanes(mask, [&](uint32_t l) {
        const uint8_t* src = w.host(globalAddress(w, i, i.op[1], i.op[2], l), Bytes);
        uint32_t* out = &data[l * dwords];
        if constexpr (Bytes == 1) out[0] = Signed ? uint32_t(int32_t(int8_t(src[0]))) : src[0];
        else if constexpr (Bytes == 2) {
            uint16_t v;
            std::memcpy(&v, src, 2);
            out[0] = Signed ? uint32_t(int32_t(int16_t(v))) : v;
        } else std::memcpy(out, src, Bytes);
    });
    w.bytesRead += uint64_t(std::popcount(mask)) * Bytes;
    if (w.stale && w.stale->anyVector()) staleLanes(w, i, mask, data, Bytes, dwords);
    poison(w, i.op[0].reg, dwords, mask);
}
template <int Bytes> void global_store(Wave& w, const Inst& i) {
    const uint32_t mask = w.exec();
    forLanes(mask, [&](uint32_t l) {
        uint8_t* dst = w.host(globalAddress(w, i, i.op[0], i.op[2], l), Bytes);
        if constexpr (Bytes <= 4) {
            const uint32_t v = w.v(i.op[1].reg, l);
            std::memcpy(dst, &v, Bytes);
        } else {
            for (int k = 0; k < Bytes / 4; ++k) {
                const uint32_t v = w.v(i.op[1].reg + k, l);
                std::memcpy(dst + 4 * k, &v, 4);
            }
        }
    });
    w.bytesWritten += uint64_t(std::popcount(mask)) * Bytes;
    if (w.written) recordStore(w, i, mask, Bytes);
}

uint8_t* ldsAt(Wave& w, uint32_t address, uint32_t bytes) {
    if (uint64_t(address) + bytes > w.ldsBytes)
        w.fail("LDS access of " + std::to_string(bytes) + " bytes at " + std::to_string(address) + " is past the " +
               std::to_string(w.ldsBytes) + " bytes of LDS the dispatch allocated");
    return w.lds + address;
}
// ds_load_bN vdst, addr [offset:N]
template <int Dwords> void ds_load(Wave& w, const Inst& i) {
    const uint32_t mask = w.exec();
    if (!mask) return;
    uint32_t* data = w.loadData(w.issue(Counter::Ds, true, i.op[0].reg, Dwords, mask));
    forLanes(mask, [&](uint32_t l) { std::memcpy(&data[l * Dwords], ldsAt(w, w.v(i.op[1].reg, l) + uint32_t(i.offset), Dwords * 4), Dwords * 4); });
    poison(w, i.op[0].reg, Dwords, mask);
}
// ds_load_2addr[_stride64]_bN vdst, addr offset0:a offset1:b — two elements at addr + a*unit, addr + b*unit.
template <int Dwords, int Unit> void ds_load_2addr(Wave& w, const Inst& i) {
    const uint32_t mask = w.exec();
    if (!mask) return;
    uint32_t* data = w.loadData(w.issue(Counter::Ds, true, i.op[0].reg, 2 * Dwords, mask));
    forLanes(mask, [&](uint32_t l) {
        const uint32_t base = w.v(i.op[1].reg, l);
        std::memcpy(&data[l * 2 * Dwords], ldsAt(w, base + uint32_t(i.offset0) * Unit, Dwords * 4), Dwords * 4);
        std::memcpy(&data[l * 2 * Dwords + Dwords], ldsAt(w, base + uint32_t(i.offset1) * Unit, Dwords * 4), Dwords * 4);
    });
    poison(w, i.op[0].reg, 2 * Dwords, mask);
}
// ds_load_u16 / ds_load_i16 vdst, addr [offset:N]: one 16-bit value, zero- or sign-extended
// (the matvecs read staged activation blocks with 16-bit loads).
template <bool Signed> void ds_load_16(Wave& w, const Inst& i) {
    const uint32_t mask = w.exec();
    if (!mask) return;
    uint32_t* data = w.loadData(w.issue(Counter::Ds, true, i.op[0].reg, 1, mask));
    forLanes(mask, [&](uint32_t l) {
        uint16_t v;
        std::memcpy(&v, ldsAt(w, w.v(i.op[1].reg, l) + uint32_t(i.offset), 2), 2);
        data[l] = Signed ? uint32_t(int32_t(int16_t(v))) : v;
    });
    poison(w, i.op[0].reg, 1, mask);
}
// LDS stores count in lgkmcnt (gfx11) / dscnt (gfx12) like loads: a wait for "at most n
// outstanding" counts them, so they take a slot that writes no register.
void countStore(Wave& w) {
    w.issue(Counter::Ds, true, 0, 0, 0);
}
// ds_store_bN addr, data [offset:N]
template <int Dwords> void ds_store(Wave& w, const Inst& i) {
    countStore(w);
    forLanes(w.exec(), [&](uint32_t l) {
        uint8_t* dst = ldsAt(w, w.v(i.op[0].reg, l) + uint32_t(i.offset), Dwords * 4);
        for (int k = 0; k < Dwords; ++k) std::memcpy(dst + 4 * k, &w.v(i.op[1].reg + k, l), 4);
    });
}
// ds_store_b16 addr, data [offset:N]: the low 16 bits of data.
void ds_store_b16(Wave& w, const Inst& i) {
    countStore(w);
    forLanes(w.exec(), [&](uint32_t l) { std::memcpy(ldsAt(w, w.v(i.op[0].reg, l) + uint32_t(i.offset), 2), &w.v(i.op[1].reg, l), 2); });
}
// ds_store_2addr[_stride64]_bN addr, data0, data1 offset0:a offset1:b
template <int Dwords, int Unit> void ds_store_2addr(Wave& w, const Inst& i) {
    countStore(w);
    forLanes(w.exec(), [&](uint32_t l) {
        const uint32_t base = w.v(i.op[0].reg, l);
        uint8_t* d0 = ldsAt(w, base + uint32_t(i.offset0) * Unit, Dwords * 4);
        uint8_t* d1 = ldsAt(w, base + uint32_t(i.offset1) * Unit, Dwords * 4);
        for (int k = 0; k < Dwords; ++k) {
            std::memcpy(d0 + 4 * k, &w.v(i.op[1].reg + k, l), 4);
            std::memcpy(d1 + 4 * k, &w.v(i.op[2].reg + k, l), 4);
        }
    });
}

// ds_add_u32 addr, data [offset:N]: LDS += data, lane after lane (no value returned).
void ds_add_u32(Wave& w, const Inst& i) {
    countStore(w);
    forLanes(w.exec(), [&](uint32_t l) {
        uint8_t* p = ldsAt(w, w.v(i.op[0].reg, l) + uint32_t(i.offset), 4);
        uint32_t v;
        std::memcpy(&v, p, 4);
        v += w.v(i.op[1].reg, l);
        std::memcpy(p, &v, 4);
    });
}

void noEffect(Wave&, const Inst&) {}

}  // namespace

std::vector<OpEntry> memoryOps() {
    return {
        {"global_load_b32", global_load<4, false>}, {"global_load_b64", global_load<8, false>},
        {"global_load_b96", global_load<12, false>}, {"global_load_b128", global_load<16, false>},
        {"global_load_u8", global_load<1, false>}, {"global_load_i8", global_load<1, true>},
        {"global_load_u16", global_load<2, false>}, {"global_load_i16", global_load<2, true>},
        {"global_store_b8", global_store<1>}, {"global_store_b16", global_store<2>}, {"global_store_b32", global_store<4>},
        {"global_store_b64", global_store<8>}, {"global_store_b96", global_store<12>}, {"global_store_b128", global_store<16>},
        {"ds_load_b32", ds_load<1>}, {"ds_load_b64", ds_load<2>}, {"ds_load_b128", ds_load<4>},
        {"ds_load_2addr_b32", ds_load_2addr<1, 4>}, {"ds_load_2addr_b64", ds_load_2addr<2, 8>},
        {"ds_load_2addr_stride64_b32", ds_load_2addr<1, 256>}, {"ds_load_2addr_stride64_b64", ds_load_2addr<2, 512>},
        {"ds_load_u16", ds_load_16<false>}, {"ds_load_i16", ds_load_16<true>}, {"ds_store_b16", ds_store_b16},
        {"ds_store_b32", ds_store<1>}, {"ds_store_b64", ds_store<2>}, {"ds_store_b128", ds_store<4>},
        {"ds_store_2addr_b32", ds_store_2addr<1, 4>}, {"ds_store_2addr_b64", ds_store_2addr<2, 8>},
        {"ds_store_2addr_stride64_b32", ds_store_2addr<1, 256>}, {"ds_store_2addr_stride64_b64", ds_store_2addr<2, 512>},
        {"ds_add_u32", ds_add_u32},
        {"buffer_gl0_inv", noEffect}, {"buffer_gl1_inv", noEffect}, {"global_inv", noEffect}, {"global_wb", noEffect},
    };
}

}  // namespace zinc::kfd::isa
