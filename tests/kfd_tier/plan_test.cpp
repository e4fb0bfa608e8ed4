// The recorded plan as the CP sees it: one IB of launches, barriers only where a dispatch
// depends on an earlier one, every launch's kernarg pointer inside the arena written once.
#include <gtest/gtest.h>

#include <map>

#include "kfd/tier/graph_recorder.h"
#include "kfd/tier/plan_builder.h"
#include "kfd/tier/tier_memory.h"
#include "pm4/decoder.h"
#include "tests/kfd_tier/kfd_tier_fixture.h"

namespace zinc {
namespace {

TEST(KfdPlan, DecodePlanIsOneIbWithBarriersOnlyBetweenDependentDispatches) {
    auto device = test::simDevice();
    for (const char* file : {"stories260K.gguf", "qwen3moe-tiny.gguf"}) {
        auto m = model::Model::load(test::sharedPath(std::string("models/") + file));
        const auto graph = graph::buildDecodeGraph(m->config(), m->weights());
        kfd::KernelTable kernels(*device);
        kfd::TierMemory memory(*device, graph, 64, 4);
        const kfd::RecordedPlan plan = kfd::recordGraph(*device, kernels, graph, memory, {1, false, true});
        const pm4::Decoded decoded = pm4::decode(plan.built.hostCopy, pm4::Gfx::Gfx11);
        ASSERT_FALSE(decoded.error) << decoded.error->describe();
        std::map<std::string, uint32_t> count;
        for (const auto& p : decoded.packets) ++count[std::string(p.view.name())];
        EXPECT_EQ(decoded.packets.front().view.name(), "ACQUIRE_MEM") << file << ": the plan starts by invalidating caches";
        EXPECT_EQ(decoded.packets.back().view.name(), "EVENT_WRITE") << file << ": the plan ends with CS_PARTIAL_FLUSH";
        EXPECT_EQ(count["DISPATCH_DIRECT"], plan.built.dispatches) << file;
        EXPECT_EQ(count["EVENT_WRITE"], plan.built.barriers + 1) << file;
        EXPECT_EQ(count["ACQUIRE_MEM"], plan.built.barriers + 1) << file;
        // q, k and v (and gate and up) read the same input: no barrier between them.
        EXPECT_LT(plan.built.barriers + 2 * uint32_t(m->config().nLayer), plan.built.dispatches) << file;
        // Nothing but launches and barriers: no host-written values, no expert ids from the host.
        for (const auto& [name, n] : count)
            EXPECT_TRUE(name == "SET_SH_REG" || name == "DISPATCH_DIRECT" || name == "EVENT_WRITE" || name == "ACQUIRE_MEM")
                << file << ": " << name;
        // What the plan took before graph::lower (graph/lower.h) placed its quantize steps and
        // scratch buffers (argmax included): the lowering may only keep or shrink it.
        const std::map<std::string, std::pair<uint32_t, uint32_t>> before = {{"stories260K.gguf", {84, 63}},
                                                                             {"qwen3moe-tiny.gguf", {109, 84}}};
        EXPECT_LE(plan.built.dispatches, before.at(file).first) << file;
        EXPECT_LE(plan.built.barriers, before.at(file).second) << file;
        std::printf("%s: IB %u dwords, %u dispatches, %u barriers\n", file, plan.built.ibDwords, plan.built.dispatches,
                    plan.built.barriers);
    }
}

}  // namespace
}  // namespace zinc
