// Plans with their synchronisation taken out, on the simulated GPU executing the machine code:
// dispatches with no wait between them overlap and caches hold stale lines (pm4/executor.h,
// kfd/sim/isa/stale_memory.h), so each broken plan gives a comparison with the cpu tier that
// fails and names the op — never a pass. The intact plan on the same device passes first.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "kfd/tier/plan_builder.h"
#include "pm4/decoder.h"
#include "pm4/packets.h"
#include "runtime/tier_check.h"
#include "tests/kfd_tier/kfd_tier_fixture.h"

namespace zinc {
namespace {

std::shared_ptr<kfd::Device> isaDevice() {
    static std::shared_ptr<kfd::Device> device = [] {
        auto sim = kfd::openSimulatedDevice("gfx1100", {.exec = kfd::SimExec::Isa});
        if (!sim) throw std::runtime_error(sim.error().describe());
        return std::shared_ptr<kfd::Device>(std::move(*sim));
    }();
    return device;
}

// Takes packets out of every plan as it is recorded: after each op, the CS_PARTIAL_FLUSH
// EVENT_WRITEs and/or ACQUIRE_MEMs written since the previous op become NOPs of their length.
struct PlanSurgery {
    bool flushes = false;
    bool acquires = false;
    std::optional<size_t> onlyOp;  // only the packets written while this op was recorded
    int removed = 0;
    const kfd::PlanBuilder* plan = nullptr;
    uint32_t scanned = 0;

    void operator()(kfd::PlanBuilder& b, size_t index, const graph::Op&) {
        if (&b != plan) plan = &b, scanned = 0;  // a new plan (decode, prefill, instrumented)
        pm4::Stream& s = b.stream();
        for (uint32_t at = scanned; at < s.size();) {
            const pm4::ParsedPacket p = pm4::parsePacket(s.dwords(), at, s.gfx());
            if (!p.ok()) throw std::runtime_error("plan surgery: " + p.error->reason);
            const uint32_t n = p.packet.dwords;
            const bool isFlush = p.packet.spec && p.packet.spec->opcode == pm4::Opcode::EVENT_WRITE &&
                                 p.packet.get(pm4::gfx11::EVENT_WRITE::EVENT_TYPE) == pm4::gfx11::CS_PARTIAL_FLUSH;
            const bool isAcquire = p.packet.spec && p.packet.spec->opcode == pm4::Opcode::ACQUIRE_MEM;
            if ((!onlyOp || *onlyOp == index) && ((flushes && isFlush) || (acquires && isAcquire))) {
                s.overwriteWithNop(at, n);
                ++removed;
            }
            at += n;
        }
        scanned = s.size();
    }
};

struct Broken {
    std::unique_ptr<model::Model> model;
    graph::Graph graph;
    std::unique_ptr<runtime::Tier> cpu, gpu;
};

Broken open(const std::string& file, PlanSurgery* surgery) {
    Broken b;
    b.model = model::Model::load(test::sharedPath("models/" + file));
    b.graph = graph::buildDecodeGraph(b.model->config(), b.model->weights());
    runtime::TierOptions options;
    options.threads = 2;
    options.contextLength = 64;
    options.maxBatch = 4;
    kfd::Pm4TierOptions o;
    if (surgery) o.afterOp = std::ref(*surgery);
    b.gpu = kfd::makePm4Tier(b.graph, options, isaDevice(), o);
    b.cpu = cpu::makeCpuTier(b.graph, options);
    return b;
}

// checkEveryOp's verdict on the (broken) kfd tier: the first op that differs, or "" on a pass.
std::string firstOpThatDiffers(Broken& b) {
    try {
        std::printf("passed: %s\n", runtime::checkEveryOp(*b.cpu, *b.gpu, b.graph, 5).c_str());
        return "";
    } catch (const std::exception& e) {
        std::printf("%s\n", e.what());
        return e.what();
    }
}

// A failed comparison naming the first op that differs, or a GPU fault whose error names the op
// of the faulting dispatch (an address computed from a value read too early or stale).
bool namesAnOp(const std::string& verdict) {
    return verdict.find("first op that differs: op ") != std::string::npos ||
           (verdict.find("GPU fault") != std::string::npos && verdict.find("in op '") != std::string::npos);
}

TEST(SimulatedGpuHazards, TheIntactPlanPassesTheOpByOpCheck) {
    Broken b = open("stories260K.gguf", nullptr);
    EXPECT_EQ(firstOpThatDiffers(b), "");
}

TEST(SimulatedGpuHazards, APlanWithoutItsBarriersFailsNamingAnOp) {
    PlanSurgery surgery{.flushes = true, .acquires = true};
    Broken b = open("stories260K.gguf", &surgery);
    const std::string verdict = firstOpThatDiffers(b);
    EXPECT_GT(surgery.removed, 0);
    EXPECT_TRUE(namesAnOp(verdict)) << verdict;
}

TEST(SimulatedGpuHazards, APlanThatNeverInvalidatesCachesFailsNamingAnOp) {
    // The CS_PARTIAL_FLUSH waits stay: the dispatches run in order, but what one writes is stale
    // in the caches of the next (and the token state the CP wrote is stale to the first).
    PlanSurgery surgery{.acquires = true};
    Broken b = open("stories260K.gguf", &surgery);
    const std::string verdict = firstOpThatDiffers(b);
    EXPECT_GT(surgery.removed, 0);
    EXPECT_TRUE(namesAnOp(verdict)) << verdict;
}

TEST(SimulatedGpuHazards, OneMissingBarrierInTheDecodePlanChangesTheLogits) {
    // The barrier in front of layer 0's attention (which reads the q and k that RoPE wrote),
    // taken out of the plain decode plan: the logits no longer match the cpu tier's.
    auto model = model::Model::load(test::sharedPath("models/stories260K.gguf"));
    const graph::Graph graph = graph::buildDecodeGraph(model->config(), model->weights());
    size_t attention = 0;
    while (graph.ops[attention].kind != graph::OpKind::Attention) ++attention;
    PlanSurgery surgery{.flushes = true, .acquires = true, .onlyOp = attention};
    Broken b = open("stories260K.gguf", &surgery);
    const int32_t nVocab = b.graph.config->nVocab;
    std::vector<float> want(size_t(nVocab), 0.0f), got(size_t(nVocab), 0.0f);
    const int32_t token = 5;
    b.cpu->evaluate({&token, 1}, 0, runtime::LogitsWanted::Last, want);
    b.gpu->evaluate({&token, 1}, 0, runtime::LogitsWanted::Last, got);
    // Each barrier is an EVENT_WRITE and an ACQUIRE_MEM; the op's KV store and attention
    // dispatches each had one.
    EXPECT_GE(surgery.removed, 2);
    EXPECT_EQ(surgery.removed % 2, 0);
    double maxDiff = 0, maxRef = 0;
    for (int32_t i = 0; i < nVocab; ++i) {
        const double d = std::fabs(double(got[size_t(i)]) - double(want[size_t(i)]));
        maxDiff = std::isnan(d) ? INFINITY : std::max(maxDiff, d);
        maxRef = std::max(maxRef, std::fabs(double(want[size_t(i)])));
    }
    std::printf("without the barrier before op %zu %s: max |logit diff| %.3g of max |logit| %.3g\n", attention,
                graph.ops[attention].label.c_str(), maxDiff, maxRef);
    EXPECT_GT(maxDiff / std::max(1.0, maxRef), 1e-2) << "op " << graph.ops[attention].label;
}

}  // namespace
}  // namespace zinc
