// `zinc-rt pm4 decode` as a user meets it: a stream written by the builder printed by name, and
// a corrupt file failing with the dword offset and the packet.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>

#include "pm4/stream.h"
#include "tests/run_zinc.h"
#include "tests/test_paths.h"

namespace zinc::pm4 {
namespace {

using zinc::test::RunResult;
using zinc::test::runZinc;

std::string writeDwords(const std::string& name, std::span<const uint32_t> dwords) {
    const auto path = (zinc::test::scratchDir() / name).string();
    std::ofstream out(path, std::ios::binary);
    for (uint32_t d : dwords) {
        const char bytes[4] = {static_cast<char>(d), static_cast<char>(d >> 8), static_cast<char>(d >> 16),
                               static_cast<char>(d >> 24)};
        out.write(bytes, 4);
    }
    return path;
}

std::string builtStream(Gfx gfx) {
    std::array<uint32_t, 128> buf{};
    Stream s(buf, gfx);
    s.setShReg(gfx11::COMPUTE_PGM_LO, {0x12345678, 0x7F})
        .setShReg(gfx11::COMPUTE_USER_DATA_0, {0x1000, 0})
        .dispatchDirect(16, 1, 1, dispatchInitiator(gfx, true))
        .eventWrite(gfx11::CS_PARTIAL_FLUSH, 4)
        .releaseMem({.cachePolicy = 1, .address = 0x7F0000001000, .value = 1})
        .indirectBuffer(0x7F0000002000, 64);
    return writeDwords(gfx == Gfx::Gfx11 ? "stream11.pm4" : "stream12.pm4", s.dwords());
}

TEST(Pm4Cli, DecodesAStreamWrittenByTheBuilder) {
    const RunResult r = runZinc("pm4 decode " + builtStream(Gfx::Gfx11));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    for (const char* want : {"gfx11", "0x0000  SET_SH_REG", "COMPUTE_PGM_LO", "= 0x12345678", "COMPUTE_USER_DATA_0",
                             "DISPATCH_DIRECT", "DIM_X=0x10", "CS_W32_EN", "EVENT_WRITE", "CS_PARTIAL_FLUSH",
                             "RELEASE_MEM", "CACHE_POLICY=1", "ADDRESS = 0x00007F0000001000", "INDIRECT_BUFFER",
                             "IB_SIZE=0x40", "VALID=1"})
        EXPECT_NE(r.output.find(want), std::string::npos) << want << "\n" << r.output;
}

TEST(Pm4Cli, Gfx12UsesItsOwnTables) {
    const RunResult r = runZinc("pm4 decode --gfx 12 " + builtStream(Gfx::Gfx12));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("TEMPORAL=1 (NT)"), std::string::npos) << r.output;
    EXPECT_EQ(runZinc("pm4 decode --gfx 10 " + builtStream(Gfx::Gfx12)).exitCode, 2);
}

TEST(Pm4Cli, CorruptFileFailsWithTheDwordOffset) {
    const std::array<uint32_t, 6> dwords = {0xFFFF1000, 0xC0017602, 0x20C, 0x1, 0x40000000, 0};
    const RunResult r = runZinc("pm4 decode " + writeDwords("corrupt.pm4", dwords));
    EXPECT_EQ(r.exitCode, 1) << r.output;
    EXPECT_NE(r.output.find("SET_SH_REG"), std::string::npos) << r.output;  // packets before the fault
    EXPECT_NE(r.output.find("zinc-rt: error: "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("dword 4 (0x4): type-1 packet, header 0x40000000: bad packet type 1"), std::string::npos)
        << r.output;

    const std::array<uint32_t, 2> truncated = {0xC0064900, 0x514};
    const RunResult t = runZinc("pm4 decode " + writeDwords("truncated.pm4", truncated));
    EXPECT_EQ(t.exitCode, 1);
    EXPECT_NE(t.output.find("dword 0 (0x0): RELEASE_MEM"), std::string::npos) << t.output;
}

TEST(Pm4Cli, PartialDwordIsAnError) {
    const auto path = (zinc::test::scratchDir() / "odd.pm4").string();
    std::ofstream(path, std::ios::binary).write("\x00\x10\xFF\xFF\x01", 5);
    const RunResult r = runZinc("pm4 decode " + path);
    EXPECT_EQ(r.exitCode, 1);
    EXPECT_NE(r.output.find("5 bytes is not a whole number of dwords"), std::string::npos) << r.output;
    EXPECT_NE(runZinc("pm4 decode /nonexistent.pm4").output.find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace zinc::pm4
