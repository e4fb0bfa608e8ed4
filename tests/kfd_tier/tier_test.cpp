// The kfd tier on the simulated GPU held to the cpu tier: greedy generation sampled on the GPU
// with tokens queued ahead, batched prefill, and bounded waits that explain a stuck queue.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "kfd/tier/submitter.h"
#include "pm4/stream.h"
#include "runtime/sampler.h"
#include "tests/kfd_tier/kfd_tier_fixture.h"
#include "tests/tier_conformance.h"

namespace zinc {
namespace {

std::vector<int32_t> cpuGreedy(test::Loaded& l, int32_t first, int32_t n) {
    return test::greedyByLogits(*l.tier, l.model->config().nVocab, first, n);
}

TEST(Pm4Tier, StoriesGreedyOnTheGpuEqualsCpuFor64Tokens) {
    auto cpu = test::load("stories260K.gguf", false);
    auto gpu = test::load("stories260K.gguf", true);
    const auto want = cpuGreedy(cpu, 1, 64);
    EXPECT_EQ(gpu.tier->generateGreedy(1, 0, 64, cpu.model->config().nVocab), want);
    EXPECT_EQ(gpu.tier->stats().decodeSubmissions, 64);
    std::printf("%s\n", gpu.tier->describe().c_str());
}

// RDNA4's code object (gfx1201: user SGPRs and RSRC values of its own) through the same plan:
// the same ids as on gfx1100, and the cpu tier's on the trained and dense models (random MoE
// routing has near-ties where the last bit of an exp decides, see the goldens' outliers).
TEST(Pm4Tier, Gfx1201GreedyEqualsGfx1100AndCpu) {
    for (const char* file : {"stories260K.gguf", "qwen3-tiny.gguf", "qwen3moe-tiny.gguf"}) {
        auto cpu = test::load(file, false);
        auto rdna3 = test::load(file, true, 256, "gfx1100");
        auto rdna4 = test::load(file, true, 256, "gfx1201");
        const int32_t vocab = cpu.model->config().nVocab;
        const auto ids = rdna4.tier->generateGreedy(1, 0, 12, vocab);
        EXPECT_EQ(ids, rdna3.tier->generateGreedy(1, 0, 12, vocab)) << file;
        if (std::string(file) != "qwen3moe-tiny.gguf") {
            EXPECT_EQ(ids, cpuGreedy(cpu, 1, 12)) << file;
        }
    }
}

}  // namespace
}  // namespace zinc

namespace zinc {
namespace {

// Every op kind and weight type of the golden models, through a batched prompt (one IB for the
// whole batch, every row's logits) and single decode steps after it.
class KfdVsCpuTest : public testing::TestWithParam<const char*> {};

TEST_P(KfdVsCpuTest, BatchedPrefillAndDecodeMatchCpu) {
    auto cpu = test::load(GetParam(), false);
    auto gpu = test::load(GetParam(), true);
    test::expectMatchesCpu(*gpu.tier, *cpu.tier, cpu.model->config().nVocab, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Kfd, KfdVsCpuTest,
                         testing::Values("stories260K.gguf", "llama-2-tiny-random.gguf", "qwen3-tiny.gguf", "qwen3moe-tiny.gguf",
                                         "tiny-qwen3-q8_0.gguf", "llama3-tiny.gguf", "qwen2-tiny.gguf", "qwen3-tiny-q3_k_m.gguf",
                                         "qwen3-tiny-q2_k.gguf", "qwen3-tiny-iq4_xs.gguf", "qwen3-tiny-q4_1.gguf",
                                         "qwen3-tiny-bf16.gguf", "gemma3-tiny.gguf"),
                         test::modelParamName);

// A fence that never signals: the CP sits in a WAIT_REG_MEM on memory nobody writes. The wait
// gives up after its bound with the queue's state instead of hanging.
TEST(Pm4Tier, FenceTimesOutWithQueueState) {
    auto device = test::simDevice();
    kfd::DeviceMemory flag(*device, 4096, kfd::MemoryKind::Gtt, "never written flag");
    kfd::SubmitterOptions options;
    options.timeoutMs = 300;
    kfd::Submitter submitter(*device, pm4::Gfx::Gfx11, options);
    std::vector<uint32_t> storage(64);
    pm4::Stream s(storage, pm4::Gfx::Gfx11);
    s.waitRegMem({.address = flag.gpu(), .function = pm4::CompareFunc::Equal, .reference = 1});
    const auto start = std::chrono::steady_clock::now();
    const uint64_t value = submitter.submitRaw(s.dwords(), "token 7 at position 42");
    try {
        submitter.wait(value);
        FAIL() << "the wait returned although nothing released the WAIT_REG_MEM";
    } catch (const runtime::TierError& e) {
        const std::string m = e.what();
        std::printf("%s\n", m.c_str());
        for (const char* part : {"queue", "token 7 at position 42", "rptr", "wptr", "fence at", "WAIT_REG_MEM", "mailbox"})
            EXPECT_NE(m.find(part), std::string::npos) << "missing '" << part << "' in: " << m;
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(KfdTierCli, KfdWithoutSimAndWithoutDevKfdIsAClearError) {
    if (std::filesystem::exists("/dev/kfd")) GTEST_SKIP() << "this machine has /dev/kfd";
    const auto r = test::runZinc("--tier=kfd score " + test::sharedPath("models/stories260K.gguf") + " --tokens \"1 2\"");
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.output.find("/dev/kfd"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("--sim"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("no fallback"), std::string::npos) << r.output;
}

TEST(KfdTierCli, ScoreOnTheSimulatedGpuPrintsTheCpuTiersTokens) {
    const std::string args = "score " + test::sharedPath("models/stories260K.gguf") + " --text \"Once upon a time\" --top 3 --greedy 8";
    const auto cpu = test::runZinc("--tier=cpu " + args);
    const auto gpu = test::runZinc("--tier=kfd --sim " + args);
    ASSERT_EQ(gpu.exitCode, 0) << gpu.output;
    ASSERT_EQ(cpu.exitCode, 0) << cpu.output;
    // Ids and their order are equal line for line; logits may differ in the last digits.
    auto ids = [](const std::string& out) {
        std::string kept;
        std::istringstream in(out);
        for (std::string line; std::getline(in, line);) {
            if (line.rfind("pos ", 0) == 0) line = line.substr(0, line.find(':'));
            kept += line + "\n";
        }
        return kept;
    };
    EXPECT_EQ(ids(gpu.output), ids(cpu.output));
}

TEST(KfdTierCli, ProbeOnTheSimulatedGpuPassesEveryRung) {
    const auto r = test::runZinc("probe --sim --json --tokens 8");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const auto j = nlohmann::json::parse(r.output);
    EXPECT_TRUE(j["ok"].get<bool>());
    std::vector<std::string> names;
    for (const auto& rung : j["rungs"]) {
        names.push_back(rung["name"]);
        EXPECT_TRUE(rung["ok"].get<bool>()) << rung["name"] << ": " << rung["detail"];
    }
    const std::vector<std::string> want = {"device found", "VM acquired", "memory mapped (VRAM, GTT, doorbell)", "queue created",
                                           "NOP retired", "doorbell observed", "fence retired", "GPU wait released by the CPU",
                                           "copy (WRITE_DATA/COPY_DATA)", "trivial dispatch", "one real kernel equal to the cpu tier",
                                           "one token equal to the cpu tier", "every op of one token equal to the cpu tier",
                                           "whole graph, 8 tokens",
                                           // the amdgpu doors: user queues (T2), then the CS ioctl route
                                           "umq: door open", "umq: device found", "umq: memory mapped (VRAM, GTT, doorbell)",
                                           "umq: queue created", "umq: NOP retired", "umq: doorbell observed", "umq: fence retired",
                                           "umq: GPU wait released by the CPU", "umq: copy (WRITE_DATA/COPY_DATA)", "umq: trivial dispatch",
                                           "umq: one token equal to the cpu tier", "cs: door open", "cs: device found",
                                           "cs: job retired (IB chunk, syncobj wait)", "cs: one token equal to the cpu tier"};
    EXPECT_EQ(names, want);
    EXPECT_TRUE(j["doors"]["umq"]["open"].get<bool>());
    EXPECT_TRUE(j["doors"]["cs"]["open"].get<bool>());
}

// Without --sim on a machine without AMD devices: the KFD ladder fails at its first rung and
// each amdgpu door is listed shut with its reason, its rungs skipped (a shut door is no failure).
TEST(KfdTierCli, ProbeWithoutDevicesSaysWhyEachDoorIsShut) {
    if (std::filesystem::exists("/dev/kfd") || std::filesystem::exists("/dev/dri")) GTEST_SKIP() << "this machine has GPU device nodes";
    const auto r = test::runZinc("probe --json");
    EXPECT_EQ(r.exitCode, 1) << r.output;
    const auto j = nlohmann::json::parse(r.output);
    const std::string noNode = "no amdgpu render node: looked for /dev/dri/renderD* bound to the amdgpu driver and found none";
    EXPECT_FALSE(j["doors"]["umq"]["open"].get<bool>());
    EXPECT_EQ(j["doors"]["umq"]["reason"], noNode);
    EXPECT_EQ(j["doors"]["cs"]["reason"], noNode);
    for (const auto& rung : j["rungs"]) {
        const std::string name = rung["name"];
        if (name == "umq: door open" || name == "cs: door open") {
            EXPECT_TRUE(rung["skipped"].get<bool>()) << name;
            EXPECT_EQ(rung["detail"], "shut: " + noNode) << name;
        }
    }
}

TEST(KfdTierCli, DumpedPm4DecodesWithPm4Decode) {
    const auto dir = test::scratchDir() / "pm4";
    const auto r = test::runZinc("--tier=kfd --sim --dump-pm4 " + dir.string() + " score " + test::sharedPath("models/stories260K.gguf") +
                                 " --tokens \"1 2 3\" --greedy 2");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    ASSERT_TRUE(std::filesystem::exists(dir / "ring.pm4"));
    ASSERT_TRUE(std::filesystem::exists(dir / "ib-1tok.pm4"));
    const auto ring = test::runZinc("pm4 decode " + (dir / "ring.pm4").string());
    EXPECT_EQ(ring.exitCode, 0) << ring.output;
    for (const char* packet : {"WRITE_DATA", "INDIRECT_BUFFER", "RELEASE_MEM", "COPY_DATA"})
        EXPECT_NE(ring.output.find(packet), std::string::npos) << packet;
    const auto ib = test::runZinc("pm4 decode " + (dir / "ib-1tok.pm4").string());
    EXPECT_EQ(ib.exitCode, 0) << ib.output.substr(0, 2000);
    for (const char* packet : {"SET_SH_REG", "COMPUTE_PGM_LO", "COMPUTE_USER_DATA_0", "DISPATCH_DIRECT", "EVENT_WRITE", "ACQUIRE_MEM"})
        EXPECT_NE(ib.output.find(packet), std::string::npos) << packet;
}

}  // namespace
}  // namespace zinc
