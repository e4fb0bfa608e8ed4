// The decoder on corrupt streams (each error names the dword offset and the packet), on what it
// prints, and on random dwords (it must stop cleanly, never read past the span).
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <vector>

#include "tests/pm4/pm4_test_support.h"

namespace zinc::pm4 {
namespace {

std::vector<uint32_t> goodPrefix(Gfx gfx) {
    std::array<uint32_t, 64> buf{};
    Stream s(buf, gfx);
    s.nop(2).setShReg(gfx11::COMPUTE_PGM_LO, {0x100, 0});  // dwords 0-1, 2-5
    return {s.dwords().begin(), s.dwords().end()};
}

TEST(Pm4Decode, TruncatedPacketNamesItsOffset) {
    std::vector<uint32_t> dwords = goodPrefix(Gfx::Gfx11);
    std::array<uint32_t, 16> buf{};
    Stream s(buf, Gfx::Gfx11);
    s.releaseMem({.address = 0x100, .value = 1});
    dwords.insert(dwords.end(), s.dwords().begin(), s.dwords().begin() + 5);  // 5 of its 8 dwords
    const Decoded d = decode(dwords, Gfx::Gfx11);
    ASSERT_TRUE(d.error);
    EXPECT_EQ(d.packets.size(), 2u);
    EXPECT_EQ(d.error->offset, 6u);
    EXPECT_EQ(d.error->packet, "RELEASE_MEM");
    EXPECT_EQ(d.error->header, 0xC0064900u);
    EXPECT_NE(d.error->reason.find("only 5 dwords remain"), std::string::npos) << d.error->reason;
    EXPECT_NE(d.error->describe().find("dword 6"), std::string::npos) << d.error->describe();
}

TEST(Pm4Decode, BadPacketType) {
    std::vector<uint32_t> dwords = goodPrefix(Gfx::Gfx12);
    dwords.push_back(0x40001234);  // type 1
    const Decoded d = decode(dwords, Gfx::Gfx12);
    ASSERT_TRUE(d.error);
    EXPECT_EQ(d.error->offset, 6u);
    EXPECT_EQ(d.error->packet, "type-1 packet");
    EXPECT_NE(d.error->reason.find("bad packet type 1"), std::string::npos);
}

TEST(Pm4Decode, Type2FillerIsOneDword) {
    const std::vector<uint32_t> dwords = {kType2Filler, 0x80001234, nopHeaderOnly()};
    const Decoded d = decode(dwords, Gfx::Gfx11);
    ASSERT_FALSE(d.error);
    ASSERT_EQ(d.packets.size(), 3u);
    EXPECT_EQ(d.packets[1].view.type, 2u);
    EXPECT_NE(formatStream(d, Gfx::Gfx11).find("TYPE2 filler"), std::string::npos);
}

TEST(Pm4Decode, UnknownOpcode) {
    std::vector<uint32_t> dwords = goodPrefix(Gfx::Gfx11);
    dwords.push_back(0xC000EE00);  // type 3, opcode 0xEE, COUNT 0
    dwords.push_back(0);
    const Decoded d = decode(dwords, Gfx::Gfx11);
    ASSERT_TRUE(d.error);
    EXPECT_EQ(d.error->offset, 6u);
    EXPECT_EQ(d.error->packet, "opcode 0xEE");
    EXPECT_NE(d.error->reason.find("unknown opcode 0xEE"), std::string::npos);
}

TEST(Pm4Decode, KnownButUnsupportedOpcodeIsNamed) {
    const std::vector<uint32_t> dwords = {0xC0017900, 0x10, 0x1};  // SET_UCONFIG_REG
    const Decoded d = decode(dwords, Gfx::Gfx11);
    ASSERT_TRUE(d.error);
    EXPECT_EQ(d.error->offset, 0u);
    EXPECT_EQ(d.error->packet, "opcode 0x79 (SET_UCONFIG_REG)");
    EXPECT_NE(d.error->reason.find("not supported"), std::string::npos);
}

TEST(Pm4Decode, CountPastTheEnd) {
    std::vector<uint32_t> dwords = goodPrefix(Gfx::Gfx11);
    dwords.push_back(0xC3FF3700);  // WRITE_DATA claiming COUNT 0x3FF
    dwords.push_back(0x500);
    const Decoded d = decode(dwords, Gfx::Gfx11);
    ASSERT_TRUE(d.error);
    EXPECT_EQ(d.error->offset, 6u);
    EXPECT_EQ(d.error->packet, "WRITE_DATA");
    EXPECT_NE(d.error->reason.find("COUNT 1023"), std::string::npos) << d.error->reason;
}

TEST(Pm4Decode, WrongBodyLength) {
    const std::vector<uint32_t> dwords = {0xC0021500, 1, 1, 1};  // DISPATCH_DIRECT with 3 body dwords
    const Decoded d = decode(dwords, Gfx::Gfx11);
    ASSERT_TRUE(d.error);
    EXPECT_NE(d.error->reason.find("DISPATCH_DIRECT takes 4"), std::string::npos) << d.error->reason;
    const std::vector<uint32_t> event = {0xC0014600, 0x407, 0};  // EVENT_WRITE with 2 body dwords
    EXPECT_TRUE(decode(event, Gfx::Gfx12).error);
}

TEST(Pm4Decode, SetShRegOutsideTheShRange) {
    const std::vector<uint32_t> dwords = {nopHeaderOnly(), 0xC0027600, 0x3FF, 1, 2};  // 0x2FFF and 0x3000
    const Decoded d = decode(dwords, Gfx::Gfx11);
    ASSERT_TRUE(d.error);
    EXPECT_EQ(d.error->offset, 1u);
    EXPECT_EQ(d.error->packet, "SET_SH_REG");
    EXPECT_NE(d.error->reason.find("0x2FFF..0x3000"), std::string::npos) << d.error->reason;
}

TEST(Pm4Decode, PrintsFieldsAndRegistersByName) {
    std::array<uint32_t, 64> buf{};
    Stream s(buf, Gfx::Gfx11);
    s.setShReg(gfx11::COMPUTE_PGM_RSRC1, {0x0060'0041, gfx11::COMPUTE_PGM_RSRC2.field("USER_SGPR")(4) |
                                                       gfx11::COMPUTE_PGM_RSRC2.field("TGID_X_EN")(1)})
        .dispatchDirect(8, 1, 1, dispatchInitiator(Gfx::Gfx11, true))
        .releaseMem({.gcrCntl = fieldNamed(gfx11::RELEASE_MEM_GCR_FIELDS, "GL2_INV")(1) |
                                fieldNamed(gfx11::RELEASE_MEM_GCR_FIELDS, "GL2_WB")(1),
                     .address = 0x7F00'0000'1000ull, .value = 3})
        .acquireMem({.gcrCntl = 0xC3B1});
    const std::string text = formatStream(decode(s.dwords(), Gfx::Gfx11), Gfx::Gfx11);
    for (const char* want :
         {"SET_SH_REG", "COMPUTE_PGM_RSRC1", "VGPRS=1", "COMPUTE_PGM_RSRC2", "USER_SGPR=4", "TGID_X_EN=1",
          "DISPATCH_DIRECT", "DIM_X=8", "CS_W32_EN", "FORCE_START_AT_000", "RELEASE_MEM",
          "EVENT_TYPE=0x14 (CACHE_FLUSH_AND_INV_TS_EVENT)", "EVENT_INDEX=5 (END_OF_PIPE)", "GCR_CNTL=0x300 {GL2_INV GL2_WB}",
          "DATA_SEL=1 (SEND_32_BIT_LOW)", "ADDRESS = 0x00007F0000001000", "ACQUIRE_MEM", "GLM_WB", "GL1_INV"})
        EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
}

TEST(Pm4Decode, Gfx12NamesItsOwnFieldsAndFlagsGfx11OnlyBits) {
    std::array<uint32_t, 64> buf{};
    Stream s(buf, Gfx::Gfx12);
    s.releaseMem({.cachePolicy = 1, .address = 0x100}).acquireMem({.gcrCntl = 0xC3B1});
    const Decoded d = decode(s.dwords(), Gfx::Gfx12);
    ASSERT_FALSE(d.error);
    const std::string text = formatStream(d, Gfx::Gfx12);
    EXPECT_NE(text.find("TEMPORAL=1 (NT)"), std::string::npos) << text;
    ASSERT_EQ(d.packets[1].notes.size(), 1u);
    EXPECT_NE(d.packets[1].notes[0].find("0x230 are reserved on gfx12"), std::string::npos) << d.packets[1].notes[0];
}

TEST(Pm4Decode, NotesReservedBitsAndUndefinedValues) {
    // ACQUIRE_MEM as Linux gfx10 emit_mem_sync writes it: COHER_SIZE_HI = 0xFFFFFF in an 8-bit field.
    const std::vector<uint32_t> dwords = {0xC0065800, 0, 0xFFFFFFFF, 0xFFFFFF, 0, 0, 0xA, 0xC3B1,
                                          0xC0013700 | 0, 0x300, 0};  // WRITE_DATA DST_SEL 3 (GDS), no data
    const Decoded d = decode(dwords, Gfx::Gfx12);
    ASSERT_EQ(d.packets.size(), 1u);
    const auto& notes = d.packets[0].notes;
    bool reserved = false;
    for (const auto& n : notes) reserved |= n.find("dword 3: reserved bits 0x00FFFF00 set") != std::string::npos;
    EXPECT_TRUE(reserved);
    ASSERT_TRUE(d.error);  // WRITE_DATA with no data dword
    EXPECT_EQ(d.error->offset, 8u);

    const std::vector<uint32_t> gds = {0xC0033700, 0x300, 0x40, 0, 7};  // WRITE_DATA DST_SEL 3 = GDS
    EXPECT_TRUE(decode(gds, Gfx::Gfx11).packets.at(0).notes.empty());
    const Decoded g12 = decode(gds, Gfx::Gfx12);
    ASSERT_EQ(g12.packets.at(0).notes.size(), 1u);
    EXPECT_NE(g12.packets[0].notes[0].find("DST_SEL=3 is not a value gfx12 defines"), std::string::npos);
}

TEST(Pm4Decode, RandomDwordsNeverCrash) {
    std::mt19937 rng(1234);
    // Bias towards real opcodes and small counts so the walker gets deep into streams.
    const uint32_t opcodes[] = {0x10, 0x15, 0x16, 0x37, 0x3C, 0x3F, 0x40, 0x46, 0x49, 0x58, 0x76, 0x79, 0xEE};
    for (int iter = 0; iter < 20000; ++iter) {
        std::vector<uint32_t> dwords(rng() % 40);
        for (uint32_t& d : dwords) {
            d = rng();
            if (rng() % 2)
                d = (3u << 30) | ((rng() % 9) << 16) | (opcodes[rng() % std::size(opcodes)] << 8) | (d & 0xFF);
        }
        for (Gfx gfx : {Gfx::Gfx11, Gfx::Gfx12}) {
            const Decoded d = decode(dwords, gfx);
            size_t covered = 0;
            for (const auto& p : d.packets) covered += p.view.dwords;
            if (d.error) {
                EXPECT_EQ(d.error->offset, covered);
            } else {
                EXPECT_EQ(covered, dwords.size());
            }
            (void)formatStream(d, gfx);
        }
    }
}

}  // namespace
}  // namespace zinc::pm4
