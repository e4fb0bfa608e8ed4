// The queue model: a power-of-two ring with 64-bit dword rptr/wptr; packets straddle the end of
// the ring and the CP reads them modulo its size, as on hardware.
#include <gtest/gtest.h>

#include <array>

#include "tests/pm4/pm4_test_support.h"

namespace zinc::pm4 {
namespace {

constexpr uint64_t kRingBase = 0x10'0000;
constexpr uint64_t kRing = kRingBase + 0x1000;

class Pm4Ring : public ::testing::Test {
protected:
    // One WRITE_DATA of a single dword: 5 dwords, so 16-dword rings wrap inside packets.
    std::span<const uint32_t> writeOne(uint64_t address, uint32_t value) {
        stream_.clear();
        stream_.writeData({.address = address}, {value});
        return stream_.dwords();
    }

    LinearMemory memory{kRingBase, 0x4000};
    test::SteppingClock clock;
    test::RecordingObserver observer;
    Executor cp{Gfx::Gfx11, memory, clock, nullptr, &observer};

private:
    std::array<uint32_t, 64> buf_{};
    Stream stream_{buf_, Gfx::Gfx11};
};

TEST_F(Pm4Ring, LayoutIsChecked) {
    EXPECT_FALSE((RingLayout{kRing, 1024}.check()));
    EXPECT_TRUE((RingLayout{kRing, 1000}.check()));
    EXPECT_TRUE((RingLayout{kRing, 0}.check()));
    EXPECT_TRUE((RingLayout{kRing + 2, 16}.check()));
    EXPECT_EQ((RingLayout{kRing, 16}.addressOf(17)), kRing + 4);
}

TEST_F(Pm4Ring, PacketsWrapAroundTheEnd) {
    const RingLayout layout{kRing, 16};
    RingWriter writer(layout, memory);
    uint64_t rptr = 0;
    for (uint32_t i = 0; i < 7; ++i) {  // 35 dwords through a 16-dword ring
        ASSERT_TRUE(writer.write(writeOne(kRingBase + 4 * i, 100 + i), rptr)) << i;
        const ExecResult r = cp.executeRing(layout, rptr, writer.wptr());
        ASSERT_TRUE(r.ok()) << r.fault->describe();
        EXPECT_EQ(r.position, writer.wptr());
        rptr = r.position;
    }
    for (uint32_t i = 0; i < 7; ++i) EXPECT_EQ(memory.load(kRingBase + 4 * i), 100 + i);
    EXPECT_EQ(rptr, 35u);
    EXPECT_EQ(observer.rptrs.back(), 35u);
}

TEST_F(Pm4Ring, SeveralSubmissionsThenOneDoorbell) {
    const RingLayout layout{kRing, 16};
    RingWriter writer(layout, memory, 13);  // start near the end: the first packet straddles it
    ASSERT_TRUE(writer.write(writeOne(kRingBase, 1), 13));
    ASSERT_TRUE(writer.write(writeOne(kRingBase + 4, 2), 13));
    ASSERT_TRUE(writer.write(writeOne(kRingBase + 8, 3), 13));
    EXPECT_EQ(writer.space(13), 1u);
    EXPECT_FALSE(writer.write(writeOne(kRingBase + 12, 4), 13));  // would overrun rptr
    EXPECT_EQ(writer.wptr(), 28u);
    const ExecResult r = cp.executeRing(layout, 13, writer.wptr());
    ASSERT_TRUE(r.ok()) << r.fault->describe();
    EXPECT_EQ(observer.rptrs, (std::vector<uint64_t>{18, 23, 28}));
    EXPECT_EQ(memory.load(kRingBase + 8), 3u);
}

TEST_F(Pm4Ring, PointersAre64BitAndCrossTwoToThe32) {
    const RingLayout layout{kRing, 16};
    const uint64_t start = (1ull << 32) - 7;
    RingWriter writer(layout, memory, start);
    ASSERT_TRUE(writer.write(writeOne(kRingBase, 9), start));
    ASSERT_TRUE(writer.write(writeOne(kRingBase + 4, 10), start));
    const ExecResult r = cp.executeRing(layout, start, writer.wptr());
    ASSERT_TRUE(r.ok()) << r.fault->describe();
    EXPECT_EQ(r.position, start + 10);
    EXPECT_EQ(memory.load(kRingBase + 4), 10u);
}

TEST_F(Pm4Ring, FaultReportsTheRingPointer) {
    const RingLayout layout{kRing, 16};
    RingWriter writer(layout, memory, 14);
    ASSERT_TRUE(writer.write(writeOne(kRingBase, 1), 14));
    ASSERT_TRUE(writer.write(writeOne(0xDEAD0000, 2), 14));
    const ExecResult r = cp.executeRing(layout, 14, writer.wptr());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.fault->offset, 19u);
    EXPECT_EQ(r.position, 19u);
    EXPECT_EQ(r.fault->packetAddress, kRing + 4 * 3);
    EXPECT_EQ(r.fault->streamAddress, kRing);
}

TEST_F(Pm4Ring, OverrunAndPartialPacketsAreFaults) {
    const RingLayout layout{kRing, 16};
    EXPECT_FALSE(cp.executeRing(layout, 0, 17).ok());  // more than a ring between rptr and wptr
    EXPECT_FALSE(cp.executeRing(RingLayout{kRing, 12}, 0, 4).ok());
    RingWriter writer(layout, memory);
    ASSERT_TRUE(writer.write(writeOne(kRingBase, 1), 0));
    const ExecResult r = cp.executeRing(layout, 0, 3);  // wptr published mid-packet
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.fault->reason.find("remain in the ring"), std::string::npos) << r.fault->reason;
}

}  // namespace
}  // namespace zinc::pm4
