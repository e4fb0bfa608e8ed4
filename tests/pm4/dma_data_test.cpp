// DMA_DATA, the CP's own copy engine (the staging path for VRAM the CPU cannot map): its seven
// dwords field by field, decoded by name, and run by the simulated CP (copy, fill, faults).
#include <gtest/gtest.h>

#include <array>

#include "tests/pm4/pm4_test_support.h"

namespace zinc::pm4 {
namespace {

constexpr uint64_t kDmaBase = 0x0000'7F00'0000'0000ull;
constexpr uint64_t kDmaBytes = 64 * 1024;

class Pm4DmaData : public ::testing::TestWithParam<Gfx> {
protected:
    Gfx gfx() const { return GetParam(); }
    Stream stream() { return Stream(host_, gfx()); }
    ExecResult run(const Stream& s) {
        Executor ex(gfx(), memory, clock);
        return ex.execute(s.dwords());
    }

    LinearMemory memory{kDmaBase, kDmaBytes};
    test::SteppingClock clock;

private:
    std::array<uint32_t, 256> host_{};
};

// Mesa's gfx9+ choice, L2 on both sides: DST_SEL 3 (bits 21:20) and SRC_SEL 3 (bits 30:29),
// then the addresses, then BYTE_COUNT | RAW_WAIT (bit 30).
TEST_P(Pm4DmaData, EncodesEveryDword) {
    Stream s = stream();
    s.dmaData({.source = 0x0000'0001'2345'6780ull, .destination = 0x0000'0002'0000'1000ull, .bytes = 0x10000});
    const std::vector<uint32_t> want = {type3Header(Opcode::DMA_DATA, 6), 0x6030'0000, 0x2345'6780, 0x1, 0x1000, 0x2,
                                        0x4001'0000};
    EXPECT_EQ(std::vector<uint32_t>(s.dwords().begin(), s.dwords().end()), want);
}

TEST_P(Pm4DmaData, DecodesByName) {
    Stream s = stream();
    s.dmaData({.destination = kDmaBase, .bytes = 64, .fill = true, .data = 0xCAFE, .wrConfirm = false});
    const Decoded d = decode(s.dwords(), gfx());
    ASSERT_FALSE(d.error) << d.error->reason;
    const std::string text = formatStream(d, gfx());
    for (const char* want : {"DMA_DATA", "SRC_SEL=2 (DATA)", "DST_SEL=3 (DST_ADDR_USING_L2)", "BYTE_COUNT=0x40", "DIS_WC=1",
                             "SRC_ADDR_LO_OR_DATA=0xCAFE", "DST_ADDR = 0x00007F0000000000"})
        EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
}

TEST_P(Pm4DmaData, CopiesAndFills) {
    for (uint32_t i = 0; i < 1024; ++i) memory.store(kDmaBase + 4 * i, 0x1000 + i);
    Stream s = stream();
    s.dmaData({.source = kDmaBase, .destination = kDmaBase + 0x8000, .bytes = 4096})
        .dmaData({.destination = kDmaBase + 0xC000, .bytes = 16, .fill = true, .data = 0xABCD});
    const ExecResult r = run(s);
    ASSERT_TRUE(r.ok()) << r.fault->describe();
    for (uint32_t i = 0; i < 1024; ++i) ASSERT_EQ(memory.load(kDmaBase + 0x8000 + 4 * i), 0x1000 + i) << i;
    EXPECT_EQ(memory.load(kDmaBase + 0xC00C), 0xABCDu);
    EXPECT_EQ(memory.load(kDmaBase + 0xC010), 0u);
}

TEST_P(Pm4DmaData, UnmappedDestinationFaultsWithTheAddress) {
    Stream s = stream();
    s.dmaData({.source = kDmaBase, .destination = 0xDEAD'0000ull, .bytes = 256});
    const ExecResult r = run(s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.fault->kind, FaultKind::BadAddress);
    EXPECT_NE(r.fault->describe().find("DMA_DATA cannot write 0x100 bytes at DST_ADDR 0xDEAD0000: address not mapped"), std::string::npos)
        << r.fault->describe();
}

TEST_P(Pm4DmaData, UnalignedCopyIsRefusedByName) {
    Stream s = stream();
    s.dmaData({.source = kDmaBase + 2, .destination = kDmaBase + 0x100, .bytes = 6});
    const ExecResult r = run(s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.fault->kind, FaultKind::Unsupported);
}

INSTANTIATE_TEST_SUITE_P(Gfx, Pm4DmaData, ::testing::Values(Gfx::Gfx11, Gfx::Gfx12), test::gfxParamName);

}  // namespace
}  // namespace zinc::pm4
