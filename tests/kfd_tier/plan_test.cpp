// The recorded plan as the CP sees it: one IB of launches, barriers only where a dispatch
// depends on an earlier one, every launch's kernarg pointer inside the arena written once.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "graph/batched_step.h"
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

// A plan over rows of several sequences (PlanShape::wantedRows): the layer stack on every row,
// then one gather_rows per buffer crossing the layer end and the output head on the wanted rows;
// a step that wants no logits ends where the layer stack does. The one-sequence plan of as many
// tokens has no gather.
TEST(KfdPlan, RowsPlansGatherTheWantedRowsOrEndAtTheLayerStack) {
    auto device = test::simDevice();
    auto m = model::Model::load(test::sharedPath("models/stories260K.gguf"));
    const auto graph = graph::buildDecodeGraph(m->config(), m->weights());
    kfd::KernelTable kernels(*device);
    kfd::TierMemory memory(*device, graph, 64, 4, 0, 2);
    auto labels = [&](const kfd::PlanShape& shape) {
        std::map<std::string, uint32_t> n;
        for (const auto& [dword, label] : kfd::recordGraph(*device, kernels, graph, memory, shape).built.ops) ++n[label];
        return n;
    };
    const auto prefill = labels({.nTokens = 4});
    const auto two = labels({.nTokens = 4, .wantedRows = 2});
    const auto none = labels({.nTokens = 4, .wantedRows = 0});
    EXPECT_EQ(prefill.count("gather_rows"), 0u);
    EXPECT_EQ(two.at("gather_rows"), graph::buffersCrossingLayerEnd(graph).size());
    EXPECT_EQ(none.count("gather_rows"), 0u);
    EXPECT_EQ(two.at("output_norm"), prefill.at("output_norm"));
    EXPECT_EQ(none.count("output_norm"), 0u);
    EXPECT_EQ(none.at("ffn_down"), prefill.at("ffn_down")) << "the layer stack runs whole";
}

// A hybrid's step of decode rows, each in a slot of its own (PlanShape::rowsOwnSlots): ssm_conv
// and delta_net take a workgroup row per sequence row (DIM_Y = rows), as on a card the rows then
// run side by side; where rows share a slot (a prompt chunk beside them) they walk the rows in
// order in one workgroup row (DIM_Y = 1). Every other dispatch is the same in both plans.
TEST(KfdPlan, DecodeRowsInSlotsOfTheirOwnStepTheRecurrentOpsSideBySide) {
    auto device = test::simDevice();
    auto m = model::Model::load(test::sharedPath("models/qwen35moe-tiny.gguf"));
    const auto graph = graph::buildDecodeGraph(m->config(), m->weights());
    kfd::KernelTable kernels(*device);
    kfd::TierMemory memory(*device, graph, 64, 4, 0, 4);
    // Per dispatch: its op's label and its DISPATCH_DIRECT's DIM_X, DIM_Y.
    auto dispatches = [&](bool ownSlots) {
        const kfd::RecordedPlan plan = kfd::recordGraph(*device, kernels, graph, memory,
                                                        {.nTokens = 4, .wantedRows = 4, .rowsOwnSlots = ownSlots});
        const pm4::Decoded decoded = pm4::decode(plan.built.hostCopy, pm4::Gfx::Gfx11);
        EXPECT_FALSE(decoded.error);
        std::vector<std::tuple<std::string, uint32_t, uint32_t>> out;
        for (const auto& p : decoded.packets)
            if (p.view.name() == "DISPATCH_DIRECT")
                out.emplace_back(plan.built.ops.at(out.size()).second, *p.field("DIM_X"), *p.field("DIM_Y"));
        return out;
    };
    const auto own = dispatches(true), shared = dispatches(false);
    ASSERT_EQ(own.size(), shared.size());
    size_t recurrent = 0;
    for (size_t i = 0; i < own.size(); ++i) {
        const auto& [label, x, y] = own[i];
        EXPECT_EQ(label, std::get<0>(shared[i])) << "dispatch " << i;
        EXPECT_EQ(x, std::get<1>(shared[i])) << label;
        const bool stepsState = label.find("ssm_conv") != std::string::npos || label.find("delta_net") != std::string::npos;
        recurrent += stepsState ? 1 : 0;
        EXPECT_EQ(y, stepsState ? 4u : std::get<2>(shared[i])) << label;
        if (stepsState) EXPECT_EQ(std::get<2>(shared[i]), 1u) << label << ": rows sharing a slot walk them in order";
    }
    size_t recurrentLayers = 0;
    for (int32_t il = 0; il < m->config().nLayer; ++il) recurrentLayers += m->config().hybrid.recurrent(il) ? 1 : 0;
    EXPECT_GT(recurrentLayers, 0u);
    EXPECT_EQ(recurrent, 2 * recurrentLayers) << "a conv and a delta step a recurrent layer";
}

}  // namespace
}  // namespace zinc
