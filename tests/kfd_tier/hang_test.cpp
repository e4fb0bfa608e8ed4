// A packet that never retires inside a recorded plan, on the simulated GPU: the tier's wait
// gives up after its bound, and the error names the queue, the token, the op the CP is stuck
// in, rptr/wptr and the last fence, instead of hanging.
#include <gtest/gtest.h>

#include <chrono>

#include "kfd/tier/plan_builder.h"
#include "pm4/stream.h"
#include "tests/kfd_tier/kfd_tier_fixture.h"

namespace zinc {
namespace {

TEST(Pm4Tier, HungOpIsNamedWithTheQueueState) {
    auto device = test::simDevice();
    kfd::DeviceMemory flag(*device, 4096, kfd::MemoryKind::Gtt, "never written flag");
    const uint64_t flagAddress = flag.gpu();
    auto model = model::Model::load(test::sharedPath("models/stories260K.gguf"));
    const graph::Graph graph = graph::buildDecodeGraph(model->config(), model->weights());
    std::string hungOp;
    bool armed = true;
    kfd::Pm4TierOptions kfdOptions;
    // The prefill's fence must retire within it: 3 tokens through the ISA interpreter took 0.65 s
    // of wall time on a loaded 2-core machine (load average 13), and over 2 s under ASan with a
    // second test suite beside this one (2026-12-01): 4 s, so that the hung token's error still
    // comes well inside the 10 s below.
    kfdOptions.timeoutMs = 4000;
    kfdOptions.afterOp = [&](kfd::PlanBuilder& b, size_t index, const graph::Op& op) {
        if (!armed || index != 7) return;
        hungOp = op.label;  // a wait on memory nobody writes, right after this op's dispatch
        b.stream().waitRegMem({.address = flagAddress, .function = pm4::CompareFunc::Equal, .reference = 1});
    };
    runtime::TierOptions options;
    options.contextLength = 64;
    options.maxBatch = 4;
    auto tier = kfd::makePm4Tier(graph, options, device, kfdOptions);  // records the decode plan
    ASSERT_FALSE(hungOp.empty());
    armed = false;  // the prefill plan, recorded on first use, runs to its fence
    runtime::Session session(model->config(), *tier);
    const std::vector<int32_t> prompt = {1, 400, 30};
    session.feed(prompt);
    const auto start = std::chrono::steady_clock::now();
    try {
        session.step(7);
        FAIL() << "the token retired although its plan waits on memory nobody writes";
    } catch (const runtime::TierError& e) {
        const std::string m = e.what();
        std::printf("%s\n", m.c_str());
        for (const std::string& part : {std::string("kfd tier: queue"), std::string("1 token(s) at position 3"),
                                        std::string("(timeline value 2, 1 retired)"), std::string("rptr"),
                                        std::string("wptr"), std::string("fence at"), std::string("last fence: 0x1"),
                                        std::string("packet at rptr: INDIRECT_BUFFER"),
                                        "(WAIT_REG_MEM) in op '" + hungOp + "'"})
            EXPECT_NE(m.find(part), std::string::npos) << "missing '" << part << "' in: " << m;
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

}  // namespace
}  // namespace zinc
