// The recorded plan as the CP sees it: one IB of launches, barriers only where a dispatch
// depends on an earlier one, every launch's kernarg pointer inside the arena written once.
#include <gtest/gtest.h>

#include <initializer_list>
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

// The kernels of a plan's dispatches, read back from its IB: each DISPATCH_DIRECT's program (the
// COMPUTE_PGM_LO set before it) among `names`' entry addresses.
std::map<std::string, uint32_t> kernelsDispatched(const kfd::RecordedPlan& plan, kfd::KernelTable& kernels,
                                                  std::initializer_list<const char*> names) {
    std::map<uint32_t, std::string> byProgram;
    for (const char* name : names) byProgram[uint32_t(kernels.get(name).entryAddress >> 8)] = name;
    const pm4::Decoded decoded = pm4::decode(plan.built.hostCopy, pm4::Gfx::Gfx11);
    EXPECT_FALSE(decoded.error);
    std::map<std::string, uint32_t> n;
    uint32_t program = 0;
    for (const auto& p : decoded.packets) {
        for (const auto& r : p.registers)
            if (r.reg && std::string_view(r.reg->name) == "COMPUTE_PGM_LO") program = r.value;
        if (p.view.name() == "DISPATCH_DIRECT") ++n[byProgram.count(program) ? byProgram[program] : "(other)"];
    }
    return n;
}

// The fused ops' kernels, read from the decode plan's IB against the plan of every op apart (the
// trace's and capture's, Pm4TierOptions::afterOp's): each DeltaNet conv runs inside attn_qkv's
// matvec (matvec_<type>_conv); each RMSNorm runs inside the quantize kernel
// of its projections' input (no rms_norm dispatch left: every norm of these models feeds a
// quantized matrix); qwen35moe's shared-expert tail (its input gate, sigmoid, add and the residual
// add with the experts' sum) is one moe_shared_add a layer instead of five dispatches; its gated
// norm runs inside the quantization of ssm_out's input where that is 8-bit (qwen35moe-tiny's one
// Q8_0 ssm_out; its F16 ones are converted to halves apart); the experts' SwiGLU runs inside
// the quantization of their down projection's input; and the QK-norms, RoPE and KV store of
// each attention layer are one qk_rope.
TEST(KfdPlan, FusedOpsRunInsideOtherKernels) {
    auto device = test::simDevice();
    kfd::KernelTable kernels(*device);
    for (const char* file : {"qwen3moe-tiny.gguf", "qwen35moe-tiny.gguf"}) {
        SCOPED_TRACE(file);
        auto m = model::Model::load(test::sharedPath(std::string("models/") + file));
        const auto graph = graph::buildDecodeGraph(m->config(), m->weights());
        kfd::TierMemory memory(*device, graph, 64, 4);
        auto count = [&](bool fuse) {
            const auto plan = kfd::recordGraph(*device, kernels, graph, memory, {1, false, true}, {}, 0, nullptr, fuse);
            auto n = kernelsDispatched(plan, kernels,
                                       {"rms_norm", "moe_combine", "moe_shared_add", "sigmoid_gate", "matvec_f32", "gated_norm", "swiglu",
                                        "head_norm", "rope_neox", "kv_store", "qk_rope", "ssm_conv", "matvec_q8_0_conv",
                                        "matvec_q4_k_conv", "matvec_q5_k_conv", "matvec_q6_k_conv", "matvec_f16_conv"});
            n["(dispatches)"] = plan.built.dispatches;
            n["(barriers)"] = plan.built.barriers;
            return n;
        };
        auto fused = count(true), apart = count(false);
        const uint32_t layers = uint32_t(m->config().nLayer);
        EXPECT_EQ(fused["rms_norm"], 0u);
        EXPECT_EQ(apart["rms_norm"], 2 * layers + 1);
        EXPECT_EQ(fused["swiglu"], 0u) << "the experts' (and shared expert's) SwiGLU inside the down projection's quantize";
        EXPECT_GE(apart["swiglu"], layers);
        uint32_t attentionLayers = 0;
        for (int32_t il = 0; il < m->config().nLayer; ++il) attentionLayers += m->config().hybrid.recurrent(il) ? 0 : 1;
        EXPECT_EQ(fused["qk_rope"], attentionLayers);
        for (const char* apartOnly : {"head_norm", "rope_neox"}) {
            EXPECT_EQ(fused[apartOnly], 0u) << apartOnly;
            EXPECT_EQ(apart[apartOnly], 2 * attentionLayers) << apartOnly;
        }
        EXPECT_EQ(fused["kv_store"], 0u);
        EXPECT_EQ(apart["kv_store"], attentionLayers);
        if (m->config().hybrid.enabled()) {
            EXPECT_EQ(fused["moe_shared_add"], layers);
            EXPECT_EQ(fused["moe_combine"], 0u);
            EXPECT_EQ(apart["moe_combine"], layers);
            EXPECT_EQ(fused["matvec_f32"] + layers, apart["matvec_f32"]) << "the shared expert's gate";
            EXPECT_EQ(fused["sigmoid_gate"] + layers, apart["sigmoid_gate"]);
            EXPECT_EQ(apart["gated_norm"], 3u);
            EXPECT_EQ(fused["gated_norm"], 2u);
            const uint32_t recurrent = layers - attentionLayers;
            EXPECT_EQ(fused["ssm_conv"], 0u) << "the conv inside attn_qkv's matvec";
            EXPECT_EQ(apart["ssm_conv"], recurrent);
            uint32_t convMatvecs = 0;
            for (const char* t : {"q8_0", "q4_k", "q5_k", "q6_k", "f16"}) convMatvecs += fused[std::string("matvec_") + t + "_conv"];
            EXPECT_EQ(convMatvecs, recurrent);
        } else {
            EXPECT_EQ(fused["moe_combine"], layers) << "the MoE's sum and its residual add";
        }
        std::printf("%s: %u dispatches (%u barriers) fused, %u (%u) apart\n", file, fused["(dispatches)"], fused["(barriers)"],
                    apart["(dispatches)"], apart["(barriers)"]);
    }
}

// Gate and up of one type and shape are one matvec_<type>_gate_up that writes their SwiGLU
// (stories260K's F32 pair; the Q4_K_M hybrid's shared expert), and the experts' one
// matvec_<type>_expert_gate_up (qwen3moe-tiny's Q4_K pairs; the Q4_K_M hybrid's); of two types
// (qwen3-tiny's Q4_K gate and Q5_K up) they stay two matvecs, their SwiGLU inside the
// quantization of the down projection's input.
TEST(KfdPlan, GateAndUpOfOneTypeAreOneMatvec) {
    auto device = test::simDevice();
    kfd::KernelTable kernels(*device);
    struct Case {
        const char* file;
        uint32_t gateUps, expertGateUps;  // a layer
    };
    for (const Case& c : {Case{"stories260K.gguf", 1, 0}, Case{"qwen3-tiny.gguf", 0, 0}, Case{"qwen3moe-tiny.gguf", 0, 1},
                          Case{"make-model:qwen35moe-tiny:q4_k_m", 1, 1}}) {
        SCOPED_TRACE(c.file);
        auto m = model::Model::load(test::modelFile(c.file));
        const auto graph = graph::buildDecodeGraph(m->config(), m->weights());
        kfd::TierMemory memory(*device, graph, 64, 4);
        auto count = [&](bool fuse) {
            const auto plan = kfd::recordGraph(*device, kernels, graph, memory, {1, false, true}, {}, 0, nullptr, fuse);
            auto n = kernelsDispatched(plan, kernels,
                                       {"swiglu", "matvec_f32_gate_up", "matvec_q4_k_gate_up", "matvec_q4_k_expert_gate_up",
                                        "matvec_q4_k_expert", "matvec_q5_k_expert"});
            return std::pair{n["matvec_f32_gate_up"] + n["matvec_q4_k_gate_up"], n};
        };
        auto [fusedGateUps, fused] = count(true);
        auto [apartGateUps, apart] = count(false);
        const uint32_t layers = uint32_t(m->config().nLayer);
        EXPECT_EQ(fusedGateUps, c.gateUps * layers);
        EXPECT_EQ(fused["matvec_q4_k_expert_gate_up"], c.expertGateUps * layers);
        EXPECT_EQ(apartGateUps + apart["matvec_q4_k_expert_gate_up"], 0u);
        EXPECT_EQ(fused["swiglu"], 0u);
        EXPECT_GE(apart["swiglu"], layers);
        const uint32_t expertMatvecs = apart["matvec_q4_k_expert"] + apart["matvec_q5_k_expert"];
        EXPECT_EQ(fused["matvec_q4_k_expert"] + fused["matvec_q5_k_expert"] + c.expertGateUps * layers * 2, expertMatvecs)
            << "gate and up apart where not fused";
    }
}

// A hybrid's step of decode rows, each in a slot of its own (PlanShape::rowsOwnSlots): delta_net
// takes a workgroup row per sequence row (DIM_Y = rows), as on a card the rows then run side by
// side, and the conv runs inside attn_qkv's matvec (MatMulConv: a row's window stepped where its
// sum lands); where rows share a slot (a prompt chunk beside them) ssm_conv and delta_net walk
// the rows in order in one workgroup row (DIM_Y = 1). Every other dispatch is the same in both.
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
    const auto own = dispatches(true), withConv = dispatches(false);
    std::vector<std::tuple<std::string, uint32_t, uint32_t>> shared;  // but its ssm_conv dispatches
    size_t convs = 0;
    for (const auto& d : withConv) {
        if (std::get<0>(d).find("ssm_conv") == std::string::npos) shared.push_back(d);
        else convs += std::get<2>(d) == 1 ? 1 : 0;
    }
    ASSERT_EQ(own.size(), shared.size());
    size_t recurrent = 0;
    for (size_t i = 0; i < own.size(); ++i) {
        const auto& [label, x, y] = own[i];
        EXPECT_EQ(label, std::get<0>(shared[i])) << "dispatch " << i;
        EXPECT_EQ(x, std::get<1>(shared[i])) << label;
        const bool stepsState = label.find("ssm_conv") != std::string::npos || label.find("delta_net") != std::string::npos;
        recurrent += stepsState ? 1 : 0;
        EXPECT_EQ(y, stepsState ? 4u : std::get<2>(shared[i])) << label;
        if (stepsState) {
            EXPECT_EQ(std::get<2>(shared[i]), 1u) << label << ": rows sharing a slot walk them in order";
        }
    }
    size_t recurrentLayers = 0;
    for (int32_t il = 0; il < m->config().nLayer; ++il) recurrentLayers += m->config().hybrid.recurrent(il) ? 1 : 0;
    EXPECT_GT(recurrentLayers, 0u);
    EXPECT_EQ(recurrent, recurrentLayers) << "a delta step a recurrent layer; the conv inside attn_qkv";
    EXPECT_EQ(convs, recurrentLayers) << "rows sharing a slot: ssm_conv walks them in order";
}

}  // namespace
}  // namespace zinc
