#pragma once
// pm4::Stream: writes PM4 packets for a gfx11/gfx12 compute queue into memory the caller owns.
// One method per packet; each appends its dwords and returns the stream, so a submission reads
// as a chain. No allocation and no system calls: the stream is a view over a dword span, and
// every write is asserted to stay inside the window last reserved (the whole span by default).
//
// Patching: a plan is recorded once and a few dwords change per token. After emitting a packet,
// site(FIELD) gives the dword offset (and bits) of one of its fields, shRegSite(REG) the offset of
// one register value in the last SET_SH_REG; patch() rewrites it later in place.
#include <cstdint>
#include <initializer_list>
#include <span>

#include "pm4/field.h"
#include "pm4/packets.h"
#include "pm4/registers.h"

namespace zinc::pm4 {

// WAIT_REG_MEM FUNCTION (PAL MEC_WAIT_REG_MEM_function_enum).
enum class CompareFunc : uint8_t {
    Always = 0,
    Less = 1,
    LessEqual = 2,
    Equal = 3,
    NotEqual = 4,
    GreaterEqual = 5,
    Greater = 6,
};
// True when (value & mask) <func> reference holds, as the CP evaluates WAIT_REG_MEM.
constexpr bool compareHolds(CompareFunc func, uint32_t value, uint32_t mask, uint32_t reference) {
    const uint32_t v = value & mask;
    switch (func) {
        case CompareFunc::Always: return true;
        case CompareFunc::Less: return v < reference;
        case CompareFunc::LessEqual: return v <= reference;
        case CompareFunc::Equal: return v == reference;
        case CompareFunc::NotEqual: return v != reference;
        case CompareFunc::GreaterEqual: return v >= reference;
        case CompareFunc::Greater: return v > reference;
    }
    return false;
}

// RELEASE_MEM DATA_SEL: what lands at ADDRESS once the event retires.
enum class ReleaseData : uint8_t {
    None = 0,
    Value32 = 1,      // DATA_LO
    Value64 = 2,      // DATA_HI:DATA_LO
    GpuClock = 3,     // 64-bit GPU clock counter (a timestamp)
    SystemClock = 4,  // 64-bit system clock counter
};
// RELEASE_MEM INT_SEL (subset a runtime uses; INT_CTXID travels with the interrupt).
enum class ReleaseInterrupt : uint8_t {
    None = 0,
    Interrupt = 1,                   // interrupt only (DATA_SEL must be None)
    InterruptAfterWriteConfirm = 2,  // the usual fence + interrupt
    DataAndWriteConfirm = 3,
};

struct ReleaseMem {
    uint32_t eventType = gfx11::CACHE_FLUSH_AND_INV_TS_EVENT;
    uint32_t eventIndex = 5;  // END_OF_PIPE
    uint32_t gcrCntl = 0;     // 13-bit release GCR field (packets.h RELEASE_MEM_GCR_FIELDS)
    uint32_t cachePolicy = 0;  // CACHE_POLICY (gfx11) / TEMPORAL (gfx12)
    uint32_t dstSel = 0;       // 0 memory controller, 1 TC/L2
    ReleaseData data = ReleaseData::Value32;
    ReleaseInterrupt interrupt = ReleaseInterrupt::None;
    uint64_t address = 0;  // 4-byte aligned; 8 for 64-bit data and clocks
    uint64_t value = 0;
    uint32_t intCtxId = 0;
};

struct AcquireMem {
    static constexpr uint64_t kWholeRange = ~0ull;
    uint64_t base = 0;             // bytes; sent in 256-byte units
    uint64_t size = kWholeRange;   // bytes; kWholeRange = every address
    uint32_t gcrCntl = 0;          // 19-bit acquire GCR field (packets.h ACQUIRE_MEM_GCR_FIELDS)
    uint32_t pollInterval = 10;    // PAL and Linux use 10
};

struct WaitRegMem {
    bool memory = true;    // MEM_SPACE: poll memory at `address`, or the register at `address`
    uint64_t address = 0;  // memory: byte address (4-aligned); register: absolute dword address
    CompareFunc function = CompareFunc::GreaterEqual;
    uint32_t reference = 0;
    uint32_t mask = 0xFFFFFFFF;
    uint32_t pollInterval = 10;
    uint32_t cachePolicy = 0;
};

// WRITE_DATA DST_SEL values a compute queue uses.
enum class WriteDst : uint8_t { Register = 0, TcL2 = 2, Memory = 5 };
struct WriteData {
    WriteDst dst = WriteDst::Memory;
    uint64_t address = 0;     // memory: byte address (4-aligned); register: absolute dword address
    bool wrConfirm = true;    // wait for the write to land before the next packet
    bool oneAddress = false;  // ADDR_INCR = 1: every data dword to the same address
    uint32_t cachePolicy = 0;
};

// COPY_DATA selectors a compute queue uses (PAL MEC_COPY_DATA_*_sel_enum).
enum class CopySrc : uint8_t { Register = 0, Memory = 2, Immediate = 5, GpuClock = 9, SystemClock = 10 };
enum class CopyDst : uint8_t { Register = 0, Memory = 2 };
struct CopyData {
    CopySrc src = CopySrc::Memory;
    CopyDst dst = CopyDst::Memory;
    uint64_t source = 0;       // byte address, absolute register address, or immediate data
    uint64_t destination = 0;  // byte address or absolute register address
    bool count64 = false;      // COUNT_SEL: 64 bits instead of 32
    bool wrConfirm = true;
    uint32_t srcCachePolicy = 0;
    uint32_t dstCachePolicy = 0;
};

// DMA_DATA: the CP's DMA engine, memory to memory through L2 (Mesa's choice on gfx9+:
// V_411_SRC_ADDR_TC_L2 / V_411_DST_ADDR_TC_L2), or a dword fill.
struct DmaData {
    uint64_t source = 0;       // byte address; with `fill`, ignored
    uint64_t destination = 0;  // byte address
    uint32_t bytes = 0;        // BYTE_COUNT: 1 .. 64 MiB - 1
    bool fill = false;         // SRC_SEL DATA: write `data` over the destination
    uint32_t data = 0;
    bool rawWait = true;       // RAW_WAIT: earlier writes land before the copy reads
    bool wrConfirm = true;     // write confirm (DIS_WC clear)
};

struct IndirectBuffer {
    bool chain = false;  // CHAIN: jump, do not return to this stream
    bool valid = true;   // VALID: required on compute queues (PAL, Linux, tinygrad set it)
    uint32_t vmid = 0;
    uint32_t cachePolicy = 0;
};

// A dword in a recorded stream that the runtime rewrites later (kernarg pointer, a dim, ...).
struct PatchSite {
    uint32_t offset = 0;  // dword offset in the stream
    Field field;          // which bits of that dword
};
// Rewrites the site's bits in `stream` (e.g. a recorded IB mapped for the GPU).
void patch(std::span<uint32_t> stream, const PatchSite& site, uint32_t value);

// COMPUTE_SHADER_EN | FORCE_START_AT_000 (| CS_W32_EN): 0x8005 for wave32 (FACTS.md §2.2).
uint32_t dispatchInitiator(Gfx gfx, bool wave32, bool forceStartAt000 = true);

struct StreamOptions {
    // SHADER_TYPE = compute in SET_SH_REG headers, as PAL and Linux's PACKET3_COMPUTE do. It
    // matters only for SH-register packets (PAL Type3Header comment); tinygrad leaves it clear.
    bool computeShaderTypeOnShRegs = true;
};

class Stream {
public:
    Stream(std::span<uint32_t> storage, Gfx gfx, StreamOptions options = {});

    Gfx gfx() const { return gfx_; }
    uint32_t size() const { return size_; }
    uint32_t capacity() const { return static_cast<uint32_t>(storage_.size()); }
    std::span<const uint32_t> dwords() const { return storage_.first(size_); }
    void clear();

    // The next `dwords` must fit: asserted now against the span, and on every write against the
    // window [size, size + dwords).
    Stream& reserve(uint32_t dwords);

    // Patch sites of the last packet written.
    uint32_t lastPacket() const { return lastPacket_; }
    PatchSite site(const Field& field) const;
    PatchSite shRegSite(const Register& reg) const;
    void patch(const PatchSite& site, uint32_t value);

    // NOP filling exactly `dwords` (1 = the header-only form).
    Stream& nop(uint32_t dwords = 1);
    // Overwrites the `dwords`-dword packet at `offset` with a NOP of that length: the stream with
    // that packet taken out (what the simulated GPU catches when a barrier is missing).
    void overwriteWithNop(uint32_t offset, uint32_t dwords);
    // SET_SH_REG: values for `first` and the registers after it.
    Stream& setShReg(const Register& first, std::span<const uint32_t> values);
    Stream& setShReg(const Register& first, std::initializer_list<uint32_t> values);
    Stream& setShReg(const Register& reg, uint32_t value);
    // DISPATCH_DIRECT: DIM_X/Y/Z workgroup end positions (counts when starting at 0).
    Stream& dispatchDirect(uint32_t dimX, uint32_t dimY, uint32_t dimZ, uint32_t initiator);
    // DISPATCH_INDIRECT: group counts read from 3 dwords at `address` (4-aligned).
    Stream& dispatchIndirect(uint64_t address, uint32_t initiator);
    Stream& acquireMem(const AcquireMem& acquire);
    Stream& releaseMem(const ReleaseMem& release);
    Stream& waitRegMem(const WaitRegMem& wait);
    Stream& writeData(const WriteData& write, std::span<const uint32_t> data);
    Stream& writeData(const WriteData& write, std::initializer_list<uint32_t> data);
    Stream& copyData(const CopyData& copy);
    Stream& dmaData(const DmaData& dma);
    Stream& indirectBuffer(uint64_t address, uint32_t sizeDwords, const IndirectBuffer& options = {});
    // COND_EXEC (5 dwords): the next `execDwords` dwords run only if the dword at `address` is not 0.
    Stream& condExec(uint64_t address, uint32_t execDwords);
    // EVENT_WRITE (2 dwords). Compute allows EVENT_INDEX 0 (other) and 4 (CS_PARTIAL_FLUSH).
    Stream& eventWrite(uint32_t eventType, uint32_t eventIndex, bool offload = false);
    // EVENT_WRITE (4 dwords) for SAMPLE_PIPELINESTAT (EVENT_INDEX 2) into `address` (8-aligned).
    Stream& eventWriteSample(uint32_t eventType, uint64_t address);

private:
    void begin(Opcode op, uint32_t bodyDwords, bool computeShaderType = false);
    void put(uint32_t dword);
    uint32_t cachePolicy(uint32_t value) const;

    std::span<uint32_t> storage_;
    Gfx gfx_;
    StreamOptions options_;
    uint32_t size_ = 0;
    uint32_t windowEnd_ = 0;
    uint32_t lastPacket_ = 0;
};

}  // namespace zinc::pm4
