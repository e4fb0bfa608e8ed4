#pragma once
// One wave32 in flight: its registers, the loads it has issued and not yet waited for, and the
// helpers every handler uses to read operands (with the float input modifiers) and write lanes.
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kfd/sim/isa/inst.h"
#include "kfd/sim/isa/program.h"
#include "kfd/sim/isa/stale_memory.h"

namespace zinc::kfd::isa {

// Global memory as the interpreter reaches it: host bytes for a GPU range, or null when the range
// is not mapped (the simulated GPU's memory has GPU VA == host address).
class IsaMemory {
public:
    virtual ~IsaMemory() = default;
    // Sets [lo, hi) to the mapped range around `address` and returns true, or false when unmapped.
    virtual bool region(uint64_t address, uint64_t& lo, uint64_t& hi) = 0;
};

// What a register holds between a load's issue and the s_waitcnt that covers it: a quiet NaN
// with a recognisable payload, so a missing wait gives wrong numbers, not right ones by luck.
inline constexpr uint32_t kPoison = 0xffc0dead;

enum class Counter : uint8_t { Load = 1, Ds = 2, Km = 4 };  // gfx11 vmcnt / lgkmcnt(LDS) / lgkmcnt(SMEM); gfx12 loadcnt / dscnt / kmcnt

struct PendingLoad {
    Counter counter = Counter::Load;
    bool vector = true;
    uint16_t reg = 0;
    uint8_t count = 0;  // dwords per lane (vector, at most 4) or in all (scalar, at most 16)
    uint32_t mask = 0;  // lanes written
    uint32_t slot = 0;  // its data: Wave::loadData(*this); kNoSlot for a load of no data
};

// A pending load's data, lane-major: data[lane * count + k]; scalar: data[k]. In a pool of slots
// the wave reuses, apart from the PendingLoad records: a heap block for every load of every wave
// was a third of kfd_tier's time under ASan (its allocator), and 512 inline bytes a record made
// retiring one (an erase from the middle of `pending`) a memmove of every later record (perf:
// 85 % of the IQ4_XS golden's time).
using LoadData = std::array<uint32_t, 32 * 4>;
inline constexpr uint32_t kNoSlot = ~0u;

struct Wave {
    enum class State : uint8_t { Running, Barrier, Done };
    uint32_t s[kSgprFile]{};
    std::vector<uint32_t> vgpr;  // vgpr[reg * 32 + lane]
    bool scc = false;
    uint32_t pc = 0;       // next instruction index
    uint32_t current = 0;  // index of the instruction executing (errors)
    State state = State::Running;
    const Program* program = nullptr;
    uint64_t loadBase = 0;     // GPU address of image offset 0
    uint8_t* lds = nullptr;
    uint32_t ldsBytes = 0;
    IsaMemory* memory = nullptr;
    uint64_t regionLo = 1, regionHi = 0;  // last mapped range found
    const StaleMemory* stale = nullptr;   // what the caches may hold old copies of (null: coherent)
    WrittenRanges* written = nullptr;     // where this dispatch's stores go (null: not recorded)
    uint32_t vgprLimit = 256;
    std::vector<PendingLoad> pending;   // in issue order
    std::vector<LoadData> loadSlots;    // their data; a slot is free when no pending load names it
    std::vector<uint32_t> freeSlots;
    uint64_t bytesRead = 0, bytesWritten = 0;
    uint64_t* executed = nullptr;  // per Program::opcodes entry

    Wave() : vgpr(256 * 32, 0) {}

    uint32_t exec() const { return s[kExecLo]; }
    uint32_t& v(uint32_t reg, uint32_t lane) { return vgpr[reg * 32 + lane]; }
    uint32_t v(uint32_t reg, uint32_t lane) const { return vgpr[reg * 32 + lane]; }

    [[noreturn]] void fail(const std::string& why) const;
    // Host pointer for `bytes` at GPU address `address`; throws naming the address when unmapped.
    uint8_t* host(uint64_t address, uint32_t bytes);
    // A new pending load, its data zeroed: count dwords a lane (vector, at most 4) or in all (scalar).
    PendingLoad& issue(Counter counter, bool vector, uint16_t reg, uint8_t count, uint32_t mask);
    uint32_t* loadData(const PendingLoad& p) { return loadSlots[p.slot].data(); }
    void clearPending();                // a new workgroup: no load in flight, every slot free
    void retire(size_t index);          // writes a pending load's data into its registers
    // Retires the oldest loads counted by `counters` (Counter bits) until at most `limit` remain.
    void waitFor(uint8_t counters, int limit);
};

template <class F> inline void forLanes(uint32_t mask, F&& f) {
    while (mask) {
        const uint32_t lane = uint32_t(std::countr_zero(mask));
        f(lane);
        mask &= mask - 1;
    }
}

inline float asF(uint32_t b) { return std::bit_cast<float>(b); }
inline uint32_t asU(float f) { return std::bit_cast<uint32_t>(f); }
inline double asD(uint64_t b) { return std::bit_cast<double>(b); }
inline uint64_t asU64(double d) { return std::bit_cast<uint64_t>(d); }

uint16_t f32ToF16(float f);  // round to nearest even, IEEE half
uint16_t f64ToF16(double d);  // round to nearest even, IEEE half, from f64 directly
float f16ToF32(uint16_t h);

// How v_fma_mixlo/hi_f16 round (kernels/README.md): TwoSteps, as the ISA guides' pseudo-code
// (the fused result to f32, then to f16; the default, and what the cpu tier computes), or Once
// (the exact result straight to f16, as hardware might). Process-wide; tests run both.
enum class MixRounding : uint8_t { TwoSteps, Once };
void setMixRounding(MixRounding rounding);
MixRounding mixRounding();

// Scalar 32-bit read of a non-VGPR operand.
inline uint32_t readScalar(const Wave& w, const Operand& o) {
    switch (o.kind) {
        case OpKind::Sgpr: return w.s[o.reg];
        case OpKind::Scc: return w.scc ? 1u : 0u;
        case OpKind::IntConst:
        case OpKind::Literal: return uint32_t(o.value);
        case OpKind::FloatConst: return asU(float(o.fvalue));
        default: return 0;
    }
}
inline uint32_t read32(const Wave& w, const Operand& o, uint32_t lane) {
    return o.kind == OpKind::Vgpr ? w.vgpr[o.reg * 32 + lane] : readScalar(w, o);
}
// 64-bit read; `fp` says the operand is an f64 (a literal is then its high half, FloatConst a double).
inline uint64_t read64(const Wave& w, const Operand& o, uint32_t lane, bool fp) {
    switch (o.kind) {
        case OpKind::Vgpr: return uint64_t(w.vgpr[o.reg * 32 + lane]) | uint64_t(w.vgpr[(o.reg + 1) * 32 + lane]) << 32;
        case OpKind::Sgpr: return uint64_t(w.s[o.reg]) | uint64_t(w.s[o.reg + 1]) << 32;
        case OpKind::IntConst: return uint64_t(o.value);
        case OpKind::Literal: return fp ? uint64_t(uint32_t(o.value)) << 32 : uint64_t(uint32_t(o.value));
        case OpKind::FloatConst: return fp ? asU64(o.fvalue) : uint64_t(asU(float(o.fvalue)));
        case OpKind::Scc: return w.scc ? 1u : 0u;
        default: return 0;
    }
}
// 16-bit read (low half, or high half when `hi`); FloatConst is a half.
inline uint16_t read16(const Wave& w, const Operand& o, uint32_t lane, bool hi) {
    if (o.kind == OpKind::FloatConst) return f32ToF16(float(o.fvalue));
    const uint32_t v = read32(w, o, lane);
    return uint16_t(hi ? v >> 16 : v);
}
inline float modF(float x, const Operand& o) {
    if (o.abs) x = std::fabs(x);
    return o.neg ? -x : x;
}
inline double modD(double x, const Operand& o) {
    if (o.abs) x = std::fabs(x);
    return o.neg ? -x : x;
}
inline float srcF(const Wave& w, const Inst& i, int k, uint32_t lane) { return modF(asF(read32(w, i.op[k], lane)), i.op[k]); }
inline double srcD(const Wave& w, const Inst& i, int k, uint32_t lane) { return modD(asD(read64(w, i.op[k], lane, true)), i.op[k]); }
// The VOP3 output modifiers: omod (x2, x4, /2), then clamp to [0, 1].
template <class F> F outMod(const Inst& i, F x) {
    if (i.omod == 1) x *= F(2);
    else if (i.omod == 2) x *= F(4);
    else if (i.omod == 3) x *= F(0.5);
    if (i.clamp) x = std::isnan(x) ? F(0) : std::fmin(std::fmax(x, F(0)), F(1));
    return x;
}
inline float outF(const Inst& i, float x) { return outMod(i, x); }
inline double outD(const Inst& i, double x) { return outMod(i, x); }
inline void write64(Wave& w, uint32_t reg, uint32_t lane, uint64_t v) {
    w.v(reg, lane) = uint32_t(v);
    w.v(reg + 1, lane) = uint32_t(v >> 32);
}
// A scalar destination (VOPC/VOP3 carry-out, v_readfirstlane): wave32 writes one SGPR; NULL is dropped.
inline void writeSdst(Wave& w, const Operand& o, uint32_t value) {
    if (o.kind == OpKind::Sgpr && o.reg != kNull) w.s[o.reg] = value;
}

struct OpEntry {
    const char* name;
    Handler run;
};
// The handler tables of ops_scalar.cpp, ops_vector.cpp, ops_memory.cpp.
std::vector<OpEntry> scalarOps();
std::vector<OpEntry> vectorOps();
std::vector<OpEntry> memoryOps();

}  // namespace zinc::kfd::isa
