// The PM4 tier through the other two doors to the simulated GPU — an amdgpu user queue + doorbell
// (`--tier=umq`) and the amdgpu CS ioctl (`--tier=kfd --submit=cs`) — held to the goldens by the
// same test body as every tier, and to the KFD door: the same PM4 stream, so the same numbers.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>

#include "kfd/tier/submitter.h"
#include "pm4/stream.h"
#include "runtime/sampler.h"
#include "tests/golden_check.h"
#include "tests/kfd_tier/kfd_tier_fixture.h"
#include "tests/kfd_tier/score_golden.h"

namespace zinc {
namespace {

using test::Door;


class DoorGoldenTest : public testing::TestWithParam<std::tuple<Door, test::GoldenCase>> {};

TEST_P(DoorGoldenTest, MeetsTheGoldenOnTheSimulatedGpu) {
    const auto& [door, c] = GetParam();
    const auto golden = test::readGoldenCase(c);
    auto l = test::loadOnDoor(golden.modelFile, door);
    test::expectMeetsGolden(*l.model, *l.session, c, golden);
}

INSTANTIATE_TEST_SUITE_P(Doors, DoorGoldenTest, testing::Combine(testing::Values(Door::Umq, Door::Cs), testing::ValuesIn(test::goldenCases())),
                         [](const auto& info) {
                             return doorName(std::get<0>(info.param)) + "_" +
                                    test::goldenCaseName({std::get<1>(info.param), info.index});
                         });

// The command line: `score --tier=umq --sim` and `score --tier=kfd --submit=cs --sim` meet each
// golden, and print the same text (the same IB through two doors gives the same logits).
class DoorScoreTest : public testing::TestWithParam<test::GoldenCase> {};

TEST_P(DoorScoreTest, UmqAndCsScoreMeetTheGoldenAndAgree) {
    const std::string umq = test::expectScoreMeetsGolden(GetParam(), "--tier=umq --sim");
    const std::string cs = test::expectScoreMeetsGolden(GetParam(), "--tier=kfd --submit=cs --sim");
    EXPECT_FALSE(umq.empty());
    EXPECT_EQ(umq, cs);
}

// The command line through the doors, on two models (the dense trained one and the MoE): every
// golden through each door is DoorGoldenTest's, in process; these run zinc-rt, whose kernels the
// interpreter executes again, so more models would only repeat that.
INSTANTIATE_TEST_SUITE_P(Doors, DoorScoreTest, testing::Values(test::goldenCases()[0], test::goldenCases()[3]), test::goldenCaseName);

// Greedy sampled on the GPU, tokens queued ahead: the three doors and the cpu tier agree.
TEST(Doors, StoriesGreedyIsTheSameThroughEveryDoor) {
    auto cpu = test::load("stories260K.gguf", false);
    std::vector<int32_t> want;
    int32_t token = 1;
    for (int i = 0; i < 24; ++i) want.push_back(token = runtime::argmax(cpu.session->step(token)));
    const int32_t vocab = cpu.model->config().nVocab;
    for (Door door : {Door::Kfd, Door::Umq, Door::Cs}) {
        auto gpu = test::loadOnDoor("stories260K.gguf", door);
        EXPECT_EQ(gpu.tier->generateGreedy(1, 0, 24, vocab), want) << doorName(door);
        EXPECT_EQ(gpu.tier->name(), door == Door::Umq ? "umq" : "kfd");
        const std::string route = door == Door::Cs ? "submit: cs, amdgpu CS, context" : "submit: doorbell, queue";
        EXPECT_NE(gpu.tier->describe().find(route), std::string::npos) << gpu.tier->describe();
    }
}

// A CS job that never ends (the CP sits in a WAIT_REG_MEM nobody releases): the wait gives up
// after its bound and names the route, the token and the kernel ring's jobs.
TEST(Doors, CsWaitTimesOutNamingTheJob) {
    auto device = test::simDrmDevice();
    kfd::DeviceMemory flag(*device, 4096, kfd::MemoryKind::Gtt, "never written flag");
    kfd::SubmitterOptions options;
    options.timeoutMs = 300;
    options.route = kfd::SubmitRoute::Cs;
    std::vector<uint32_t> storage(64);
    pm4::Stream s(storage, pm4::Gfx::Gfx11);
    s.waitRegMem({.address = flag.gpu(), .function = pm4::CompareFunc::Equal, .reference = 1});
    const auto start = std::chrono::steady_clock::now();
    {
        kfd::Submitter submitter(*device, pm4::Gfx::Gfx11, options);
        const uint64_t value = submitter.submitRaw(s.dwords(), "token 7 at position 42");
        try {
            submitter.wait(value);
            FAIL() << "the wait returned although nothing released the WAIT_REG_MEM";
        } catch (const runtime::TierError& e) {
            const std::string m = e.what();
            for (const char* part : {"kfd tier: cs, amdgpu CS, context", "token 7 at position 42", "SYNCOBJ_WAIT", "1 job(s) submitted, 0 known retired"})
                EXPECT_NE(m.find(part), std::string::npos) << "missing '" << part << "' in: " << m;
        }
        *flag.cpu<uint32_t>() = 1;  // let the job end before the submitter goes
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

}  // namespace
}  // namespace zinc
