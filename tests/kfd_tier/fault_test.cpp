// Faults on the GPU tiers (issue 22): the simulated GPU makes a page fault, a hang or a bad
// fence at a chosen token and op (kfd/tier/fault_spec.h), through each door — a KFD queue, an
// amdgpu user queue, the amdgpu CS ioctl. The request in flight fails with an error naming the
// token, the layer and the op; the tier recovers on its own, and the next request's tokens
// equal a fresh tier's. Runs with kernels on PoCL (meson test kfd_tier_faults): the fault path
// does not depend on how a dispatch executes, and the ISA interpreter would only make it slower.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>

#include "tests/kfd_tier/kfd_tier_fixture.h"

namespace zinc {
namespace {

using test::Door;
using Kind = kfd::InjectedFault::Kind;

constexpr uint32_t kTierTimeoutMs = 4000;  // the tier's bound on a wait: the hang is detected by it (1,500 ms timed out a healthy
                                           // 10-token sampled chunk under ASan beside the vulkan suite on 2 cores)
constexpr uint32_t kJobTimeoutMs = 300;    // the simulated amdgpu's job timeout (its TDR), below the tier's


// A simulated amdgpu node of its own, whose kernel ring resets a job after kJobTimeoutMs.
std::shared_ptr<kfd::Device> drmDevice() {
    static std::shared_ptr<kfd::Device> device = [] {
        auto sim = umq::openSimulatedDrmDevice(test::defaultSimGfx(), {.runner = test::sharedRunner(), .jobTimeoutMs = kJobTimeoutMs});
        if (!sim) throw std::runtime_error(sim.error().describe());
        return std::shared_ptr<kfd::Device>(*sim);
    }();
    return device;
}

test::Loaded openTier(Door door, std::optional<kfd::FaultSpec> fault, bool loop = false) {
    test::Loaded r;
    r.model = model::Model::load(test::sharedPath("models/stories260K.gguf"));
    r.graph = graph::buildDecodeGraph(r.model->config(), r.model->weights());
    runtime::TierOptions options;
    options.contextLength = 64;
    options.maxBatch = 8;
    kfd::Pm4TierOptions o;
    o.route = door == Door::Cs ? kfd::SubmitRoute::Cs : kfd::SubmitRoute::Doorbell;
    o.tierName = door == Door::Umq ? "umq" : "kfd";
    o.timeoutMs = kTierTimeoutMs;
    o.injectFault = std::move(fault);
    o.loop = loop;
    r.tier = kfd::makePm4Tier(r.graph, options, door == Door::Kfd ? test::simDevice() : drmDevice(), o);
    return r;
}

// One request: a 3-token prompt (one prefill step, positions 0..2), then 6 greedy tokens
// queued on the GPU (positions 3..8).
std::vector<int32_t> request(test::Loaded& r) {
    runtime::Session session(r.model->config(), *r.tier);
    const std::vector<int32_t> prompt = {1, 400, 30};
    session.feed(prompt);
    const int32_t first = runtime::argmax(session.logits());
    std::vector<int32_t> ids = r.tier->generateGreedy(first, 3, 6, r.model->config().nVocab);
    ids.insert(ids.begin(), first);
    return ids;
}

class FaultTest : public testing::TestWithParam<std::tuple<Door, Kind>> {
protected:
    void SetUp() override {
        if (kfd::simExecFromEnvironment() != kfd::SimExec::Pocl) GTEST_SKIP() << "runs with ZINC_SIM_EXEC=pocl (meson test kfd_tier_faults)";
    }
};

TEST_P(FaultTest, RequestFailsNamingTokenLayerOpAndTheNextEqualsAFreshTier) {
    const auto [door, kind] = GetParam();
    test::Loaded fresh = openTier(door, std::nullopt);
    const std::vector<int32_t> want = request(fresh);
    ASSERT_EQ(want.size(), 7u);

    // Greedy token 2 runs at position 5 (the prompt's 3 positions, then tokens 0 and 1).
    const std::string spec = std::string(kfd::injectedFaultName(kind)) + ":5:blk.1.attn_output";
    test::Loaded faulty = openTier(door, kfd::parseFaultSpec(spec));
    const auto start = std::chrono::steady_clock::now();
    try {
        request(faulty);
        FAIL() << spec << " on " << doorName(door) << ": the request did not fail";
    } catch (const runtime::TierError& e) {
        const std::string m = e.what();
        std::printf("%s: %s\n", doorName(door).c_str(), m.substr(0, 600).c_str());
        // The CS route: a hung job is ended by the kernel's reset (the job timeout), which is what the tier sees.
        const std::string kindText = kind == Kind::BadFence ? "bad fence" : kind == Kind::PageFault ? "GPU fault" : door == Door::Cs ? "GPU reset" : "GPU hang";
        EXPECT_EQ(m.rfind(fmt::format("{} tier: {} at greedy token 2 at position 5", door == Door::Umq ? "umq" : "kfd", kindText), 0), 0u) << m;
        if (kind != Kind::BadFence) {
            EXPECT_NE(m.find(", layer 1, op 'attn_output' (op "), std::string::npos) << m;
        }
        // Recovery: a new queue (CS: a new context); the plans recorded anew after a fault or reset only.
        EXPECT_NE(m.find(door == Door::Cs ? "; recovered: kernel-ring context made anew" : "; recovered: queue made anew"), std::string::npos) << m;
        const bool replanned = kind == Kind::PageFault || (kind == Kind::Hang && door == Door::Cs);
        EXPECT_EQ(m.find("plans recorded anew") != std::string::npos, replanned) << m;
        EXPECT_NE(m.find("weights and KV cache kept"), std::string::npos) << m;
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
    // The next request on the same tier, as on a fresh one.
    EXPECT_EQ(request(faulty), want) << spec << " on " << doorName(door);
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultTest,
                         testing::Combine(testing::Values(Door::Kfd, Door::Umq, Door::Cs), testing::Values(Kind::PageFault, Kind::Hang, Kind::BadFence)),
                         [](const auto& info) {
                             return doorName(std::get<0>(info.param)) + "_" + std::string(kfd::injectedFaultName(std::get<1>(info.param)));
                         });

// A fault inside the prompt's prefill step (3 tokens at once) and one inside a chunk of tokens
// sampled on the GPU (seeded, so a fresh tier draws the same): the error names the step and the
// op, and the next request equals a fresh tier's.
std::vector<int32_t> sampledRequest(test::Loaded& r) {
    runtime::Session session(r.model->config(), *r.tier);
    session.feed(std::vector<int32_t>{1, 400, 30});
    runtime::SamplerParams p;
    p.seed = 7;
    runtime::Sampler sampler(p);
    return session.stepSampled(runtime::argmax(session.logits()), 10, sampler);
}

TEST(Faults, PrefillAndSampledChunksFailNamingTheirOpAndRecover) {
    if (kfd::simExecFromEnvironment() != kfd::SimExec::Pocl) GTEST_SKIP() << "runs with ZINC_SIM_EXEC=pocl (meson test kfd_tier_faults)";
    test::Loaded fresh = openTier(Door::Kfd, std::nullopt);
    const std::vector<int32_t> greedy = request(fresh), sampled = sampledRequest(fresh);
    struct Case {
        const char* spec;
        bool sampledRun;
        const char* head;
    };
    for (const Case& c : {Case{"fault:1:blk.0.attn_q", false, "kfd tier: GPU fault at 3 token(s) at position 0, layer 0, op 'attn_q'"},
                          Case{"fault:8:lm_head", true, "kfd tier: GPU fault at sampled token 5 ("}}) {
        test::Loaded faulty = openTier(Door::Kfd, kfd::parseFaultSpec(c.spec));
        try {
            c.sampledRun ? sampledRequest(faulty) : request(faulty);
            ADD_FAILURE() << c.spec << ": the request did not fail";
        } catch (const runtime::TierError& e) {
            const std::string m = e.what();
            EXPECT_EQ(m.rfind(c.head, 0), 0u) << m;
            if (c.sampledRun) {
                EXPECT_NE(m.find("op 'lm_head' (op 78 of 78)"), std::string::npos) << m;
            }
        }
        EXPECT_EQ(c.sampledRun ? sampledRequest(faulty) : request(faulty), c.sampledRun ? sampled : greedy) << c.spec;
    }
    // The persistent loop (--loop): one submission for the whole generation, polled by the host.
    // (Its fence is written when the loop ends, which a later call does: a bad one fails that call.)
    for (const char* spec : {"hang:8:lm_head", "fault:8:blk.4.attn_q"}) {
        test::Loaded looped = openTier(Door::Kfd, kfd::parseFaultSpec(spec), true);
        try {
            sampledRequest(looped);
            ADD_FAILURE() << spec << " (--loop): the request did not fail";
        } catch (const runtime::TierError& e) {
            const std::string m = e.what();
            EXPECT_NE(m.find(spec[0] == 'h' ? "GPU hang at token 5 (position 8), op 'lm_head'" : "GPU fault at token 5 (position 8), layer 4, op 'attn_q'"),
                      std::string::npos) << m;
        }
        EXPECT_EQ(sampledRequest(looped), sampled) << spec << " (--loop)";
    }
}

TEST(FaultSpec, ParsesAndRefusesWithTheReason) {
    const kfd::FaultSpec s = kfd::parseFaultSpec("hang:3:blk.1.attn_q");
    EXPECT_EQ(s.kind, Kind::Hang);
    EXPECT_EQ(s.position, 3);
    EXPECT_EQ(s.layer, 1);
    EXPECT_EQ(s.op, "attn_q");
    EXPECT_EQ(kfd::parseFaultSpec("fault:0:lm_head").layer, -1);
    EXPECT_EQ(kfd::parseFaultSpec("fence:2").kind, Kind::BadFence);
    try {
        (void)kfd::parseFaultSpec("melt:3:blk.1.attn_q");
        FAIL();
    } catch (const runtime::TierError& e) {
        EXPECT_NE(std::string(e.what()).find("kind \"melt\""), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)kfd::parseFaultSpec("hang:x:attn_q"), runtime::TierError);
    EXPECT_THROW((void)kfd::parseFaultSpec("hang:3"), runtime::TierError);
}

}  // namespace
}  // namespace zinc
