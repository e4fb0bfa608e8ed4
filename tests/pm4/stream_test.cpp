// The builder: exact dwords for the packets FACTS.md derives, and an encode -> decode round trip
// for every packet on gfx11 and gfx12 (the decoder reads with the same tables, so every field
// set must come back by name), plus patch sites.
#include <gtest/gtest.h>

#include <array>

#include "tests/pm4/pm4_test_support.h"

namespace zinc::pm4 {
namespace {

using test::onlyPacket;

struct Buffer {
    std::array<uint32_t, 256> dwords{};
    Stream stream(Gfx gfx, StreamOptions options = {}) { return Stream(dwords, gfx, options); }
};

TEST(Pm4Header, MatchesTheDerivedExamples) {
    // FACTS.md §1 (shader bit clear), checked here through the builder.
    Buffer b;
    Stream s = b.stream(Gfx::Gfx11, {.computeShaderTypeOnShRegs = false});
    s.setShReg(gfx11::COMPUTE_PGM_LO, 0x1234);
    EXPECT_EQ(s.dwords()[0], 0xC0017600u);
    s.clear();
    s.dispatchDirect(1, 1, 1, 0x8005);
    EXPECT_EQ(s.dwords()[0], 0xC0031500u);
    s.clear();
    s.releaseMem({.address = 0x1000, .value = 1});
    EXPECT_EQ(s.dwords()[0], 0xC0064900u);
    s.clear();
    s.acquireMem({});
    EXPECT_EQ(s.dwords()[0], 0xC0065800u);
    s.clear();
    s.waitRegMem({.address = 0x1000});
    EXPECT_EQ(s.dwords()[0], 0xC0053C00u);
    s.clear();
    s.indirectBuffer(0x10000, 256);
    EXPECT_EQ(s.dwords()[0], 0xC0023F00u);
    s.clear();
    s.eventWrite(gfx11::CS_PARTIAL_FLUSH, 4);
    EXPECT_EQ(s.dwords()[0], 0xC0004600u);
    s.clear();
    s.nop();
    EXPECT_EQ(s.dwords()[0], 0xFFFF1000u);
}

TEST(Pm4Header, SetShRegCarriesTheComputeShaderTypeByDefault) {
    Buffer b;
    Stream s = b.stream(Gfx::Gfx11);
    s.setShReg(gfx11::COMPUTE_PGM_LO, 0x1234);
    EXPECT_EQ(s.dwords()[0], 0xC0017602u);  // as PAL and Linux PACKET3_COMPUTE emit it
    s.clear();
    s.dispatchDirect(1, 1, 1, 0x8005);
    EXPECT_EQ(s.dwords()[0], 0xC0031500u);  // other packets leave it clear
}

TEST(Pm4Body, MatchesTheDerivedExamples) {
    Buffer b;
    Stream s = b.stream(Gfx::Gfx11);
    // Fence write of a 32-bit value with an interrupt after the write is confirmed.
    s.releaseMem({.interrupt = ReleaseInterrupt::InterruptAfterWriteConfirm, .address = 0x1000, .value = 7});
    EXPECT_EQ(s.dwords()[1], 0x00000514u);  // CACHE_FLUSH_AND_INV_TS_EVENT, END_OF_PIPE
    EXPECT_EQ(s.dwords()[2], 0x22000000u);  // DATA_SEL 1, INT_SEL 2
    s.clear();
    s.waitRegMem({.address = 0x1000, .function = CompareFunc::Equal});
    EXPECT_EQ(s.dwords()[1], 0x00000013u);
    s.clear();
    s.waitRegMem({.address = 0x1000, .function = CompareFunc::GreaterEqual});
    EXPECT_EQ(s.dwords()[1], 0x00000015u);
    s.clear();
    s.indirectBuffer(0x10000, 256);
    EXPECT_EQ(s.dwords()[3], 0x00800100u);  // IB_SIZE 256 | VALID
    EXPECT_EQ(dispatchInitiator(Gfx::Gfx11, true), 0x00008005u);
    EXPECT_EQ(dispatchInitiator(Gfx::Gfx12, false), 0x00000005u);
}

TEST(Pm4Body, AcquireMemWholeRange) {
    Buffer b;
    Stream s = b.stream(Gfx::Gfx11);
    s.acquireMem({.gcrCntl = 0xC3B1});  // Linux gfx10 flush-all GCR value
    const std::array<uint32_t, 8> want = {0xC0065800, 0, 0xFFFFFFFF, 0xFF, 0, 0, 10, 0xC3B1};
    EXPECT_TRUE(std::equal(want.begin(), want.end(), s.dwords().begin()));
}

class Pm4RoundTrip : public ::testing::TestWithParam<Gfx> {
protected:
    Buffer buffer;
    Stream stream = buffer.stream(GetParam());
    bool gfx11() const { return GetParam() == Gfx::Gfx11; }
};

TEST_P(Pm4RoundTrip, Nop) {
    stream.nop(1);
    DecodedPacket p = onlyPacket(stream);
    EXPECT_EQ(p.view.name(), "NOP");
    EXPECT_EQ(p.view.dwords, 1u);
    stream.clear();
    stream.nop(5);
    p = onlyPacket(stream);
    EXPECT_EQ(p.view.dwords, 5u);
    EXPECT_EQ(p.data.size(), 4u);
}

TEST_P(Pm4RoundTrip, SetShReg) {
    const Register& lo = gfx11() ? gfx11::COMPUTE_PGM_LO : gfx12::COMPUTE_PGM_LO;
    stream.setShReg(lo, {0x00123456, 0x7F});
    const DecodedPacket p = onlyPacket(stream);
    EXPECT_EQ(p.field("REG_OFFSET"), 0x20Cu);
    EXPECT_EQ(p.field("INDEX"), 0u);
    ASSERT_EQ(p.registers.size(), 2u);
    EXPECT_EQ(p.field("COMPUTE_PGM_LO"), 0x00123456u);
    EXPECT_EQ(p.field("COMPUTE_PGM_HI"), 0x7Fu);
    EXPECT_EQ(p.registers[1].address, 0x2E0Du);
    EXPECT_EQ(gfx11::PM4_HEADER::SHADER_TYPE.get(p.view.header), 1u);
}

TEST_P(Pm4RoundTrip, SetShRegNamesEveryComputeRegister) {
    for (const Register& r : computeRegisters(GetParam())) {
        stream.clear();
        stream.setShReg(r, 0xA5A5A5A5u);
        const DecodedPacket p = onlyPacket(stream);
        ASSERT_EQ(p.registers.size(), 1u);
        ASSERT_NE(p.registers[0].reg, nullptr) << r.name;
        EXPECT_EQ(p.registers[0].reg->name, r.name);
        EXPECT_EQ(p.field(r.name), 0xA5A5A5A5u);
    }
}

TEST_P(Pm4RoundTrip, DispatchDirect) {
    const uint32_t initiator = dispatchInitiator(GetParam(), true);
    stream.dispatchDirect(640, 3, 2, initiator);
    const DecodedPacket p = onlyPacket(stream);
    EXPECT_EQ(p.view.name(), "DISPATCH_DIRECT");
    EXPECT_EQ(p.field("DIM_X"), 640u);
    EXPECT_EQ(p.field("DIM_Y"), 3u);
    EXPECT_EQ(p.field("DIM_Z"), 2u);
    EXPECT_EQ(p.field("DISPATCH_INITIATOR"), 0x8005u);
}

TEST_P(Pm4RoundTrip, DispatchIndirect) {
    stream.dispatchIndirect(0x0000'7F00'1234'5678ull, 0x8001);
    const DecodedPacket p = onlyPacket(stream);
    EXPECT_EQ(p.field("ADDR_LO"), 0x12345678u);
    EXPECT_EQ(p.field("ADDR_HI"), 0x7F00u);
    EXPECT_EQ(p.field("DISPATCH_INITIATOR"), 0x8001u);
}

TEST_P(Pm4RoundTrip, AcquireMem) {
    stream.acquireMem({.base = 0x12'3456'7800ull, .size = 0x10000, .gcrCntl = 0xC181, .pollInterval = 4});
    const DecodedPacket p = onlyPacket(stream);
    EXPECT_EQ(p.field("COHER_BASE_LO"), 0x12345678u);  // 256-byte units
    EXPECT_EQ(p.field("COHER_BASE_HI"), 0u);
    EXPECT_EQ(p.field("COHER_SIZE"), 0x100u);
    EXPECT_EQ(p.field("COHER_SIZE_HI"), 0u);
    EXPECT_EQ(p.field("POLL_INTERVAL"), 4u);
    EXPECT_EQ(p.field("GCR_CNTL"), 0xC181u);  // legal on both (no GLM / GL1 bits)
}

TEST_P(Pm4RoundTrip, ReleaseMemFence) {
    stream.releaseMem({.eventType = gfx11::BOTTOM_OF_PIPE_TS, .eventIndex = 5, .gcrCntl = 0x300, .cachePolicy = 1,
                       .dstSel = 1, .data = ReleaseData::Value64,
                       .interrupt = ReleaseInterrupt::InterruptAfterWriteConfirm, .address = 0x0000'0001'0000'1008ull,
                       .value = 0x1122'3344'5566'7788ull, .intCtxId = 42});
    const DecodedPacket p = onlyPacket(stream);
    EXPECT_EQ(p.field("EVENT_TYPE"), 0x28u);
    EXPECT_EQ(p.field("EVENT_INDEX"), 5u);
    EXPECT_EQ(p.field("GCR_CNTL"), 0x300u);  // GL2_INV | GL2_WB
    EXPECT_EQ(p.field(gfx11() ? "CACHE_POLICY" : "TEMPORAL"), 1u);
    EXPECT_EQ(p.field("DST_SEL"), 1u);
    EXPECT_EQ(p.field("DATA_SEL"), 2u);
    EXPECT_EQ(p.field("INT_SEL"), 2u);
    EXPECT_EQ(p.field("ADDRESS_LO"), 0x1008u);
    EXPECT_EQ(p.field("ADDRESS_HI"), 1u);
    EXPECT_EQ(p.field("DATA_LO"), 0x55667788u);
    EXPECT_EQ(p.field("DATA_HI"), 0x11223344u);
    EXPECT_EQ(p.field("INT_CTXID"), 42u);
}

TEST_P(Pm4RoundTrip, ReleaseMemTimestamp) {
    stream.releaseMem({.data = ReleaseData::GpuClock, .address = 0x2000});
    const DecodedPacket p = onlyPacket(stream);
    EXPECT_EQ(p.field("DATA_SEL"), 3u);
    EXPECT_EQ(p.field("ADDRESS_LO"), 0x2000u);
}

TEST_P(Pm4RoundTrip, WaitRegMemMemory) {
    stream.waitRegMem({.address = 0x0000'0002'0000'0040ull, .function = CompareFunc::NotEqual, .reference = 9,
                       .mask = 0xFF, .pollInterval = 4, .cachePolicy = 2});
    const DecodedPacket p = onlyPacket(stream);
    EXPECT_EQ(p.field("FUNCTION"), 4u);
    EXPECT_EQ(p.field("MEM_SPACE"), 1u);
    EXPECT_EQ(p.field("OPERATION"), 0u);
    EXPECT_EQ(p.field(gfx11() ? "CACHE_POLICY" : "TEMPORAL"), 2u);
    EXPECT_EQ(p.field("POLL_ADDR_LO"), 0x40u);
    EXPECT_EQ(p.field("POLL_ADDR_HI"), 2u);
    EXPECT_EQ(p.field("REFERENCE"), 9u);
    EXPECT_EQ(p.field("MASK"), 0xFFu);
    EXPECT_EQ(p.field("POLL_INTERVAL"), 4u);
}

TEST_P(Pm4RoundTrip, WaitRegMemRegister) {
    stream.waitRegMem({.memory = false, .address = gfx11::COMPUTE_USER_DATA_3.address,
                       .function = CompareFunc::Equal, .reference = 1});
    const DecodedPacket p = onlyPacket(stream);
    EXPECT_EQ(p.field("MEM_SPACE"), 0u);
    EXPECT_EQ(p.field("POLL_ADDR_LO"), 0x2E43u);
}

TEST_P(Pm4RoundTrip, WriteData) {
    stream.writeData({.address = 0x0000'0003'0000'0100ull, .cachePolicy = 3}, {1, 2, 3});
    const DecodedPacket p = onlyPacket(stream);
    EXPECT_EQ(p.field("DST_SEL"), 5u);
    EXPECT_EQ(p.field("WR_CONFIRM"), 1u);
    EXPECT_EQ(p.field("ADDR_INCR"), 0u);
    EXPECT_EQ(p.field(gfx11() ? "CACHE_POLICY" : "TEMPORAL"), 3u);
    EXPECT_EQ(p.field("DST_ADDR_LO"), 0x100u);
    EXPECT_EQ(p.field("DST_ADDR_HI"), 3u);
    ASSERT_EQ(p.data.size(), 3u);
    EXPECT_EQ(p.data[2], 3u);
}

TEST_P(Pm4RoundTrip, CopyDataMemoryToMemory) {
    stream.copyData({.source = 0x1000, .destination = 0x0000'0001'0000'2000ull, .count64 = true, .srcCachePolicy = 1,
                     .dstCachePolicy = 2});
    const DecodedPacket p = onlyPacket(stream);
    EXPECT_EQ(p.field("SRC_SEL"), 2u);
    EXPECT_EQ(p.field("DST_SEL"), 2u);
    EXPECT_EQ(p.field("COUNT_SEL"), 1u);
    EXPECT_EQ(p.field(gfx11() ? "SRC_CACHE_POLICY" : "SRC_TEMPORAL"), 1u);
    EXPECT_EQ(p.field(gfx11() ? "DST_CACHE_POLICY" : "DST_TEMPORAL"), 2u);
    EXPECT_EQ(p.field("SRC_ADDR_LO"), 0x1000u);
    EXPECT_EQ(p.field("DST_ADDR_LO"), 0x2000u);
    EXPECT_EQ(p.field("DST_ADDR_HI"), 1u);
}

TEST_P(Pm4RoundTrip, CopyDataImmediate) {
    stream.copyData({.src = CopySrc::Immediate, .source = 0xCAFEF00D, .destination = 0x3000});
    const DecodedPacket p = onlyPacket(stream);
    EXPECT_EQ(p.field("SRC_SEL"), 5u);
    EXPECT_EQ(p.field("SRC_ADDR_LO"), 0xCAFEF00Du);
    EXPECT_EQ(p.field("COUNT_SEL"), 0u);
}

TEST_P(Pm4RoundTrip, IndirectBuffer) {
    stream.indirectBuffer(0x0000'0004'0000'8000ull, 1000, {.chain = true, .vmid = 3, .cachePolicy = 1});
    const DecodedPacket p = onlyPacket(stream);
    EXPECT_EQ(p.field("IB_BASE_LO"), 0x8000u);
    EXPECT_EQ(p.field("IB_BASE_HI"), 4u);
    EXPECT_EQ(p.field("IB_SIZE"), 1000u);
    EXPECT_EQ(p.field("CHAIN"), 1u);
    EXPECT_EQ(p.field("VALID"), 1u);
    EXPECT_EQ(p.field("VMID"), 3u);
    EXPECT_EQ(p.field(gfx11() ? "CACHE_POLICY" : "TEMPORAL"), 1u);
}

TEST_P(Pm4RoundTrip, EventWrite) {
    stream.eventWrite(gfx11::CS_PARTIAL_FLUSH, 4, true);
    DecodedPacket p = onlyPacket(stream);
    EXPECT_EQ(p.view.dwords, 2u);
    EXPECT_EQ(p.field("EVENT_TYPE"), 7u);
    EXPECT_EQ(p.field("EVENT_INDEX"), 4u);
    EXPECT_EQ(p.field("OFFLOAD_ENABLE"), 1u);
    stream.clear();
    stream.eventWriteSample(0x1E, 0x4000);
    p = onlyPacket(stream);
    EXPECT_EQ(p.view.dwords, 4u);
    EXPECT_EQ(p.field("EVENT_INDEX"), 2u);
    EXPECT_EQ(p.field("ADDRESS_LO"), 0x4000u);
}

TEST_P(Pm4RoundTrip, AChainOfPacketsDecodesInOrder) {
    stream.setShReg(gfx11::COMPUTE_PGM_LO, {1, 0})
        .dispatchDirect(1, 1, 1, 0x8005)
        .eventWrite(gfx11::CS_PARTIAL_FLUSH, 4)
        .releaseMem({.address = 0x100, .value = 5});
    const Decoded d = decode(stream.dwords(), GetParam());
    ASSERT_FALSE(d.error);
    ASSERT_EQ(d.packets.size(), 4u);
    EXPECT_EQ(d.packets[0].view.offset, 0u);
    EXPECT_EQ(d.packets[1].view.offset, 4u);
    EXPECT_EQ(d.packets[2].view.offset, 9u);
    EXPECT_EQ(d.packets[3].view.offset, 11u);
    EXPECT_EQ(d.packets[3].view.name(), "RELEASE_MEM");
}

INSTANTIATE_TEST_SUITE_P(Gfx, Pm4RoundTrip, ::testing::Values(Gfx::Gfx11, Gfx::Gfx12), test::gfxParamName);

TEST(Pm4Patch, SitesPointAtTheFieldsOfTheLastPacket) {
    Buffer b;
    Stream s = b.stream(Gfx::Gfx11);
    s.nop(3).setShReg(gfx11::COMPUTE_USER_DATA_0, {0x10, 0x20, 0x30});
    const PatchSite kernarg = s.shRegSite(gfx11::COMPUTE_USER_DATA_2);
    s.dispatchDirect(4, 1, 1, 0x8005);
    const PatchSite dimX = s.site(gfx11::DISPATCH_DIRECT::DIM_X);
    s.releaseMem({.address = 0x100, .value = 1});
    const PatchSite fence = s.site(gfx11::RELEASE_MEM::DATA_LO);
    const PatchSite dataSel = s.site(gfx11::RELEASE_MEM::DATA_SEL);
    EXPECT_EQ(kernarg.offset, 3u + 2 + 2);
    EXPECT_EQ(dimX.offset, 8u + 1);
    EXPECT_EQ(fence.offset, 13u + 5);

    s.patch(kernarg, 0xABCD);
    s.patch(dimX, 77);
    patch(std::span<uint32_t>(b.dwords).first(s.size()), fence, 2);
    s.patch(dataSel, 2);  // only DATA_SEL's bits change
    const Decoded d = decode(s.dwords(), Gfx::Gfx11);
    ASSERT_FALSE(d.error);
    EXPECT_EQ(d.packets[1].field("COMPUTE_USER_DATA_2"), 0xABCDu);
    EXPECT_EQ(d.packets[1].field("COMPUTE_USER_DATA_1"), 0x20u);
    EXPECT_EQ(d.packets[2].field("DIM_X"), 77u);
    EXPECT_EQ(d.packets[3].field("DATA_LO"), 2u);
    EXPECT_EQ(d.packets[3].field("DATA_SEL"), 2u);
    EXPECT_EQ(d.packets[3].field("INT_SEL"), 0u);
}

TEST(Pm4Stream, ReserveBoundsTheWrites) {
    Buffer b;
    Stream s = b.stream(Gfx::Gfx12);
    s.reserve(8).releaseMem({.address = 0x100});
    EXPECT_EQ(s.size(), 8u);
    EXPECT_EQ(s.capacity(), 256u);
}

#ifndef NDEBUG
TEST(Pm4StreamDeathTest, WritingPastTheReservationAsserts) {
    Buffer b;
    Stream s = b.stream(Gfx::Gfx11);
    s.reserve(4);
    EXPECT_DEATH(s.releaseMem({.address = 0x100}), "reservation");
}
#endif

}  // namespace
}  // namespace zinc::pm4
