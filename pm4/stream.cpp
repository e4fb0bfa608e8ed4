#include "pm4/stream.h"

#include <cassert>

namespace zinc::pm4 {
namespace {

// The encoder writes through the gfx11 field constants. Every field it sets sits at the same
// bits on gfx12 (the gfx12 tables `using` them, or rename them only); this proves it.
constexpr bool sameBits(const Field& a, const Field& b) {
    return a.dword == b.dword && a.shift == b.shift && a.width == b.width;
}
static_assert(sameBits(gfx11::RELEASE_MEM::CACHE_POLICY, gfx12::RELEASE_MEM::TEMPORAL));
static_assert(sameBits(gfx11::RELEASE_MEM::GCR_CNTL, gfx12::RELEASE_MEM::GCR_CNTL));
static_assert(sameBits(gfx11::RELEASE_MEM::DATA_SEL, gfx12::RELEASE_MEM::DATA_SEL));
static_assert(sameBits(gfx11::ACQUIRE_MEM::GCR_CNTL, gfx12::ACQUIRE_MEM::GCR_CNTL));
static_assert(sameBits(gfx11::WAIT_REG_MEM::CACHE_POLICY, gfx12::WAIT_REG_MEM::TEMPORAL));
static_assert(sameBits(gfx11::WRITE_DATA::DST_SEL, gfx12::WRITE_DATA::DST_SEL));
static_assert(sameBits(gfx11::WRITE_DATA::CACHE_POLICY, gfx12::WRITE_DATA::TEMPORAL));
static_assert(sameBits(gfx11::COPY_DATA::SRC_SEL, gfx12::COPY_DATA::SRC_SEL));
static_assert(sameBits(gfx11::COPY_DATA::DST_SEL, gfx12::COPY_DATA::DST_SEL));
static_assert(sameBits(gfx11::COPY_DATA::SRC_CACHE_POLICY, gfx12::COPY_DATA::SRC_TEMPORAL));
static_assert(sameBits(gfx11::COPY_DATA::DST_CACHE_POLICY, gfx12::COPY_DATA::DST_TEMPORAL));
static_assert(sameBits(gfx11::DMA_DATA::SRC_SEL, gfx12::DMA_DATA::SRC_SEL));
static_assert(sameBits(gfx11::DMA_DATA::DST_SEL, gfx12::DMA_DATA::DST_SEL));
static_assert(sameBits(gfx11::INDIRECT_BUFFER::CACHE_POLICY, gfx12::INDIRECT_BUFFER::TEMPORAL));
static_assert(sameBits(gfx11::DISPATCH_DIRECT::DISPATCH_INITIATOR, gfx12::DISPATCH_DIRECT::DISPATCH_INITIATOR));

namespace RM = gfx11::RELEASE_MEM;
namespace AM = gfx11::ACQUIRE_MEM;
namespace WRM = gfx11::WAIT_REG_MEM;
namespace WD = gfx11::WRITE_DATA;
namespace CD = gfx11::COPY_DATA;
namespace DMA = gfx11::DMA_DATA;  // same bits on gfx12 (TEMPORAL named CACHE_POLICY there)
namespace IB = gfx11::INDIRECT_BUFFER;
namespace EW = gfx11::EVENT_WRITE;
namespace SH = gfx11::SET_SH_REG;
namespace DI = gfx11::DISPATCH_INDIRECT;

constexpr uint32_t lo32(uint64_t v) { return static_cast<uint32_t>(v); }
constexpr uint32_t hi32(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

}  // namespace

void patch(std::span<uint32_t> stream, const PatchSite& site, uint32_t value) {
    assert(site.offset < stream.size());
    stream[site.offset] = site.field.set(stream[site.offset], value);
}

uint32_t dispatchInitiator(Gfx gfx, bool wave32, bool forceStartAt000) {
    // The three bits used here sit at the same place on both generations.
    constexpr Register reg = gfx11::COMPUTE_DISPATCH_INITIATOR;
    static_assert(gfx12::COMPUTE_DISPATCH_INITIATOR.field("CS_W32_EN").shift == reg.field("CS_W32_EN").shift);
    (void)gfx;
    return reg.field("COMPUTE_SHADER_EN")(1) | reg.field("FORCE_START_AT_000")(forceStartAt000 ? 1 : 0) |
           reg.field("CS_W32_EN")(wave32 ? 1 : 0);
}

Stream::Stream(std::span<uint32_t> storage, Gfx gfx, StreamOptions options)
    : storage_(storage), gfx_(gfx), options_(options), windowEnd_(static_cast<uint32_t>(storage.size())) {}

void Stream::clear() {
    size_ = 0;
    lastPacket_ = 0;
    windowEnd_ = capacity();
}

Stream& Stream::reserve(uint32_t dwords) {
    assert(size_ + static_cast<uint64_t>(dwords) <= storage_.size() && "pm4: reserve past the end of the stream");
    windowEnd_ = size_ + dwords;
    return *this;
}

void Stream::put(uint32_t dword) {
    assert(size_ < windowEnd_ && "pm4: write outside the reserved window");
    storage_[size_++] = dword;
}

void Stream::begin(Opcode op, uint32_t bodyDwords, bool computeShaderType) {
    assert(size_ + 1 + static_cast<uint64_t>(bodyDwords) <= windowEnd_ && "pm4: packet does not fit the reservation");
    lastPacket_ = size_;
    put(type3Header(op, bodyDwords, computeShaderType));
}

uint32_t Stream::cachePolicy(uint32_t value) const {
    assert(value <= 3);
    return value;
}

PatchSite Stream::site(const Field& field) const {
    assert(field.dword > 0 && lastPacket_ + field.dword < size_);
    return {lastPacket_ + field.dword, field};
}

PatchSite Stream::shRegSite(const Register& reg) const {
    const uint32_t header = storage_[lastPacket_];
    assert(gfx11::PM4_HEADER::IT_OPCODE.get(header) == static_cast<uint32_t>(Opcode::SET_SH_REG));
    const uint32_t first = kShRegStart + SH::REG_OFFSET.get(storage_[lastPacket_ + 1]);
    [[maybe_unused]] const uint32_t count = gfx11::PM4_HEADER::COUNT.get(header);  // = number of values
    assert(reg.address >= first && reg.address < first + count && "pm4: register not in the last SET_SH_REG");
    return {lastPacket_ + 2 + (reg.address - first), Field(reg.name, 0, 31, 0)};
}

void Stream::patch(const PatchSite& site, uint32_t value) {
    assert(site.offset < size_);
    storage_[site.offset] = site.field.set(storage_[site.offset], value);
}

Stream& Stream::nop(uint32_t dwords) {
    assert(dwords >= 1 && dwords <= kMaxBodyDwords + 1);
    if (dwords == 1) {
        assert(size_ < windowEnd_);
        lastPacket_ = size_;
        put(nopHeaderOnly());  // COUNT 0x3FFF: the header is the whole packet
        return *this;
    }
    begin(Opcode::NOP, dwords - 1);
    for (uint32_t i = 1; i < dwords; ++i) put(0);  // payload, ignored by the CP
    return *this;
}

void Stream::overwriteWithNop(uint32_t offset, uint32_t dwords) {
    assert(offset + uint64_t(dwords) <= size_ && "pm4: overwriting past the end of the stream");
    const uint32_t size = size_, last = lastPacket_, window = windowEnd_;
    size_ = offset;
    windowEnd_ = offset + dwords;
    nop(dwords);
    size_ = size;
    lastPacket_ = last;
    windowEnd_ = window;
}

Stream& Stream::setShReg(const Register& first, std::span<const uint32_t> values) {
    assert(!values.empty() && first.inShRange() && "pm4: SET_SH_REG outside the SH range");
    assert(first.address + values.size() <= kShRegEnd && "pm4: SET_SH_REG runs past the SH range");
    begin(Opcode::SET_SH_REG, 1 + static_cast<uint32_t>(values.size()), options_.computeShaderTypeOnShRegs);
    put(SH::REG_OFFSET(first.shOffset()));  // dword 1: REG_OFFSET, VMID_SHIFT 0, INDEX 0 (default)
    for (uint32_t v : values) put(v);       // dwords 2..: one value per consecutive register
    return *this;
}

Stream& Stream::setShReg(const Register& first, std::initializer_list<uint32_t> values) {
    return setShReg(first, std::span<const uint32_t>(values.begin(), values.size()));
}

Stream& Stream::setShReg(const Register& reg, uint32_t value) { return setShReg(reg, {value}); }

Stream& Stream::dispatchDirect(uint32_t dimX, uint32_t dimY, uint32_t dimZ, uint32_t initiator) {
    begin(Opcode::DISPATCH_DIRECT, 4);
    put(dimX);       // dword 1: DIM_X
    put(dimY);       // dword 2: DIM_Y
    put(dimZ);       // dword 3: DIM_Z
    put(initiator);  // dword 4: DISPATCH_INITIATOR
    return *this;
}

Stream& Stream::dispatchIndirect(uint64_t address, uint32_t initiator) {
    assert(address % 4 == 0);
    begin(Opcode::DISPATCH_INDIRECT, 3);
    put(DI::ADDR_LO(lo32(address)));  // dword 1: ADDR_LO
    put(DI::ADDR_HI(hi32(address)));  // dword 2: ADDR_HI
    put(initiator);                   // dword 3: DISPATCH_INITIATOR
    return *this;
}

Stream& Stream::acquireMem(const AcquireMem& a) {
    const bool whole = a.size == AcquireMem::kWholeRange;
    const uint64_t base = a.base >> 8;  // 256-byte units (PAL BuildAcquireMemGeneric)
    const uint64_t size = whole ? (uint64_t{AM::COHER_SIZE_HI.maxValue()} << 32 | 0xFFFFFFFFu) : (a.size + 255) >> 8;
    assert(a.base % 256 == 0 && size <= 0xFF'FFFF'FFFFull && base <= 0xFF'FFFF'FFFF'FFFFull);
    begin(Opcode::ACQUIRE_MEM, 7);
    put(0);                                          // dword 1: reserved on MEC
    put(AM::COHER_SIZE(lo32(size)));                 // dword 2: COHER_SIZE
    put(AM::COHER_SIZE_HI(hi32(size)));              // dword 3: COHER_SIZE_HI [7:0]
    put(AM::COHER_BASE_LO(lo32(base)));              // dword 4: COHER_BASE_LO
    put(AM::COHER_BASE_HI(hi32(base)));              // dword 5: COHER_BASE_HI [23:0]
    put(AM::POLL_INTERVAL(a.pollInterval));          // dword 6: POLL_INTERVAL
    put(AM::GCR_CNTL(a.gcrCntl));                    // dword 7: GCR_CNTL
    return *this;
}

Stream& Stream::releaseMem(const ReleaseMem& r) {
    const auto data = static_cast<uint32_t>(r.data);
    [[maybe_unused]] const bool eight = r.data == ReleaseData::Value64 || r.data == ReleaseData::GpuClock ||
                       r.data == ReleaseData::SystemClock;
    assert(r.address % (eight ? 8 : 4) == 0 && "pm4: RELEASE_MEM address misaligned");
    assert((r.eventIndex == 5 || r.eventIndex == 6) && "pm4: RELEASE_MEM takes END_OF_PIPE or SHADER_DONE");
    assert(r.dstSel <= 1);
    begin(Opcode::RELEASE_MEM, 7);
    // dword 1: EVENT_TYPE, EVENT_INDEX, GCR_CNTL, CACHE_POLICY/TEMPORAL
    put(RM::EVENT_TYPE(r.eventType) | RM::EVENT_INDEX(r.eventIndex) | RM::GCR_CNTL(r.gcrCntl) |
        RM::CACHE_POLICY(cachePolicy(r.cachePolicy)));
    // dword 2: DST_SEL, INT_SEL, DATA_SEL
    put(RM::DST_SEL(r.dstSel) | RM::INT_SEL(static_cast<uint32_t>(r.interrupt)) | RM::DATA_SEL(data));
    put(RM::ADDRESS_LO(lo32(r.address)));  // dword 3: ADDRESS_LO
    put(RM::ADDRESS_HI(hi32(r.address)));  // dword 4: ADDRESS_HI
    put(RM::DATA_LO(lo32(r.value)));       // dword 5: DATA_LO
    put(RM::DATA_HI(hi32(r.value)));       // dword 6: DATA_HI
    put(RM::INT_CTXID(r.intCtxId));        // dword 7: INT_CTXID
    return *this;
}

Stream& Stream::waitRegMem(const WaitRegMem& w) {
    assert(!w.memory || w.address % 4 == 0);
    assert(w.memory || w.address <= 0x3FFFF);  // REG_POLL_ADDR [17:0]
    begin(Opcode::WAIT_REG_MEM, 6);
    // dword 1: FUNCTION, MEM_SPACE, OPERATION (wait_reg_mem), CACHE_POLICY/TEMPORAL
    put(WRM::FUNCTION(static_cast<uint32_t>(w.function)) | WRM::MEM_SPACE(w.memory ? 1 : 0) |
        WRM::OPERATION(0) | WRM::CACHE_POLICY(cachePolicy(w.cachePolicy)));
    put(WRM::POLL_ADDR_LO(lo32(w.address)));          // dword 2: POLL_ADDR_LO (or REG_POLL_ADDR)
    put(WRM::POLL_ADDR_HI(hi32(w.address)));          // dword 3: POLL_ADDR_HI
    put(WRM::REFERENCE(w.reference));                 // dword 4: REFERENCE
    put(WRM::MASK(w.mask));                           // dword 5: MASK
    put(WRM::POLL_INTERVAL(w.pollInterval));          // dword 6: POLL_INTERVAL
    return *this;
}

Stream& Stream::writeData(const WriteData& w, std::span<const uint32_t> data) {
    assert(!data.empty());
    assert(w.dst == WriteDst::Register || w.address % 4 == 0);
    begin(Opcode::WRITE_DATA, 3 + static_cast<uint32_t>(data.size()));
    // dword 1: DST_SEL, ADDR_INCR, WR_CONFIRM, CACHE_POLICY/TEMPORAL
    put(WD::DST_SEL(static_cast<uint32_t>(w.dst)) | WD::ADDR_INCR(w.oneAddress ? 1 : 0) |
        WD::WR_CONFIRM(w.wrConfirm ? 1 : 0) | WD::CACHE_POLICY(cachePolicy(w.cachePolicy)));
    put(WD::DST_ADDR_LO(lo32(w.address)));  // dword 2: DST_ADDR_LO (or DST_MMREG_ADDR)
    put(WD::DST_ADDR_HI(hi32(w.address)));  // dword 3: DST_ADDR_HI
    for (uint32_t d : data) put(d);         // dwords 4..: data
    return *this;
}

Stream& Stream::writeData(const WriteData& write, std::initializer_list<uint32_t> data) {
    return writeData(write, std::span<const uint32_t>(data.begin(), data.size()));
}

Stream& Stream::copyData(const CopyData& c) {
    [[maybe_unused]] const bool srcMemory = c.src == CopySrc::Memory;
    [[maybe_unused]] const bool dstMemory = c.dst == CopyDst::Memory;
    assert(!srcMemory || c.source % (c.count64 ? 8 : 4) == 0);
    assert(!dstMemory || c.destination % (c.count64 ? 8 : 4) == 0);
    assert(c.src == CopySrc::Immediate || srcMemory || hi32(c.source) == 0);
    begin(Opcode::COPY_DATA, 5);
    // dword 1: SRC_SEL, DST_SEL, SRC_CACHE_POLICY, COUNT_SEL, WR_CONFIRM, DST_CACHE_POLICY
    put(CD::SRC_SEL(static_cast<uint32_t>(c.src)) | CD::DST_SEL(static_cast<uint32_t>(c.dst)) |
        CD::SRC_CACHE_POLICY(cachePolicy(c.srcCachePolicy)) | CD::COUNT_SEL(c.count64 ? 1 : 0) |
        CD::WR_CONFIRM(c.wrConfirm ? 1 : 0) | CD::DST_CACHE_POLICY(cachePolicy(c.dstCachePolicy)));
    put(CD::SRC_ADDR_LO(lo32(c.source)));       // dword 2: SRC_ADDR_LO / SRC_REG_OFFSET / IMM_DATA
    put(CD::SRC_ADDR_HI(hi32(c.source)));       // dword 3: SRC_ADDR_HI / IMM_DATA_HI
    put(CD::DST_ADDR_LO(lo32(c.destination)));  // dword 4: DST_ADDR_LO / DST_REG_OFFSET
    put(CD::DST_ADDR_HI(hi32(c.destination)));  // dword 5: DST_ADDR_HI
    return *this;
}

Stream& Stream::dmaData(const DmaData& d) {
    assert(d.bytes > 0 && DMA::BYTE_COUNT.fits(d.bytes));
    constexpr uint32_t kUsingL2 = 3, kData = 2;
    begin(Opcode::DMA_DATA, 6);
    put(DMA::DST_SEL(kUsingL2) | DMA::SRC_SEL(d.fill ? kData : kUsingL2));  // dword 1: DST_SEL, SRC_SEL, cache policies LRU
    put(DMA::SRC_ADDR_LO_OR_DATA(d.fill ? d.data : lo32(d.source)));        // dword 2: SRC_ADDR_LO or DATA
    put(DMA::SRC_ADDR_HI(d.fill ? 0 : hi32(d.source)));                     // dword 3: SRC_ADDR_HI
    put(DMA::DST_ADDR_LO(lo32(d.destination)));                             // dword 4: DST_ADDR_LO
    put(DMA::DST_ADDR_HI(hi32(d.destination)));                             // dword 5: DST_ADDR_HI
    // dword 6: BYTE_COUNT, SAS/DAS memory, SAIC/DAIC increment, RAW_WAIT, DIS_WC
    put(DMA::BYTE_COUNT(d.bytes) | DMA::RAW_WAIT(d.rawWait ? 1 : 0) | DMA::DIS_WC(d.wrConfirm ? 0 : 1));
    return *this;
}

Stream& Stream::indirectBuffer(uint64_t address, uint32_t sizeDwords, const IndirectBuffer& o) {
    assert(address % 4 == 0 && IB::IB_SIZE.fits(sizeDwords) && o.vmid <= 15);
    begin(Opcode::INDIRECT_BUFFER, 3);
    put(IB::IB_BASE_LO(lo32(address)));  // dword 1: IB_BASE_LO
    put(IB::IB_BASE_HI(hi32(address)));  // dword 2: IB_BASE_HI
    // dword 3: IB_SIZE, CHAIN, VALID, VMID, CACHE_POLICY/TEMPORAL
    put(IB::IB_SIZE(sizeDwords) | IB::CHAIN(o.chain ? 1 : 0) | IB::VALID(o.valid ? 1 : 0) | IB::VMID(o.vmid) |
        IB::CACHE_POLICY(cachePolicy(o.cachePolicy)));
    return *this;
}

Stream& Stream::condExec(uint64_t address, uint32_t execDwords) {
    namespace CE = gfx11::COND_EXEC;
    assert(address % 4 == 0 && CE::EXEC_COUNT.fits(execDwords));
    begin(Opcode::COND_EXEC, 4);
    put(CE::ADDR_LO(lo32(address)));       // dword 1: ADDR_LO
    put(CE::ADDR_HI(hi32(address)));       // dword 2: ADDR_HI
    put(0);                                // dword 3: CACHE_POLICY (LRU)
    put(CE::EXEC_COUNT(execDwords));       // dword 4: EXEC_COUNT
    return *this;
}

Stream& Stream::eventWrite(uint32_t eventType, uint32_t eventIndex, bool offload) {
    // PAL asserts these indices on compute, and warns that TS events here may hang the GPU.
    assert((eventIndex == 0 || eventIndex == 4) && "pm4: EVENT_WRITE index not allowed on compute");
    begin(Opcode::EVENT_WRITE, 1);
    // dword 1: EVENT_TYPE, EVENT_INDEX, OFFLOAD_ENABLE
    put(EW::EVENT_TYPE(eventType) | EW::EVENT_INDEX(eventIndex) | EW::OFFLOAD_ENABLE(offload ? 1 : 0));
    return *this;
}

Stream& Stream::eventWriteSample(uint32_t eventType, uint64_t address) {
    assert(address % 8 == 0);
    begin(Opcode::EVENT_WRITE, 3);
    put(EW::EVENT_TYPE(eventType) | EW::EVENT_INDEX(2));  // dword 1: EVENT_TYPE, EVENT_INDEX (sample)
    put(EW::ADDRESS_LO(lo32(address)));                   // dword 2: ADDRESS_LO
    put(EW::ADDRESS_HI(hi32(address)));                   // dword 3: ADDRESS_HI
    return *this;
}

}  // namespace zinc::pm4
