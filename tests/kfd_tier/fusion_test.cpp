// The PM4 tier's fused ops (graph::fuse, kfd/tier/graph_recorder.cpp acceptsFused: the residual
// adds in the matvecs and moe_combine, SwiGLU and RMSNorm in the quantize kernels, qwen35moe's
// shared-expert tail in moe_shared_add, its DeltaNet conv in attn_qkv's matvec) against the plan of every op apart (a tier with a test
// hook after each op declines every fusion, as the trace's and capture's plans do): the same
// logits bit for bit, since each value goes through the same expressions in both.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/kfd_tier/kfd_tier_fixture.h"
#include "tests/test_paths.h"

namespace zinc {
namespace {

class KfdFusedPlans : public ::testing::TestWithParam<const char*> {};

// A batched prompt, decode steps, a step of rows of a second sequence, rows of both in slots of
// their own, and a one-token step at position 0 (the rows plans fuse the same ops; the plans of
// a row a slot and of one token the conv in attn_qkv's matvec too).
TEST_P(KfdFusedPlans, GiveTheOpByOpPlansBits) {
    auto model = model::Model::load(test::modelFile(GetParam()));
    const graph::Graph graph = graph::buildDecodeGraph(model->config(), model->weights());
    runtime::TierOptions options;
    options.contextLength = 128;
    options.maxBatch = 16;
    options.sequences = 2;
    kfd::Pm4TierOptions apart;
    apart.afterOp = [](kfd::PlanBuilder&, size_t, const graph::Op&) {};
    auto fused = kfd::makePm4Tier(graph, options, test::simDevice(), {});
    auto plain = kfd::makePm4Tier(graph, options, test::simDevice(), apart);
    const size_t vocab = size_t(model->config().nVocab);
    std::vector<float> a(vocab * 2), b(vocab * 2);
    const std::vector<int32_t> prompt = {71, 335, 291, 265, 292, 310, 261};
    fused->evaluate(prompt, 0, runtime::LogitsWanted::Last, std::span(a).first(vocab));
    plain->evaluate(prompt, 0, runtime::LogitsWanted::Last, std::span(b).first(vocab));
    EXPECT_EQ(a, b) << "prompt";
    for (int32_t i = 0; i < 3; ++i) {
        const int32_t token = 100 + i;
        fused->evaluate(std::span(&token, 1), int32_t(prompt.size()) + i, runtime::LogitsWanted::Last, std::span(a).first(vocab));
        plain->evaluate(std::span(&token, 1), int32_t(prompt.size()) + i, runtime::LogitsWanted::Last, std::span(b).first(vocab));
        EXPECT_EQ(a, b) << "decode step " << i;
    }
    const runtime::SequenceRow rows[] = {{.slot = 1, .position = 0, .token = 5, .wantLogits = true},
                                         {.slot = 1, .position = 1, .token = 6, .wantLogits = true}};
    fused->evaluateRows(rows, a);
    plain->evaluateRows(rows, b);
    EXPECT_EQ(a, b) << "a step of rows";
    // Rows each in a slot of its own (a hybrid's conv then runs inside attn_qkv's matvec): slot 1
    // starts again at position 0, so its conv window is cleared first.
    for (int32_t i = 0; i < 2; ++i) {
        const runtime::SequenceRow decodeRows[] = {
            {.slot = 0, .position = int32_t(prompt.size()) + 3 + i, .token = 7 + i, .wantLogits = true},
            {.slot = 1, .position = i, .token = 8 + i, .wantLogits = true}};
        fused->evaluateRows(decodeRows, a);
        plain->evaluateRows(decodeRows, b);
        EXPECT_EQ(a, b) << "rows in slots of their own, step " << i;
    }
    // A one-token step at position 0: the one-token plan clears the state it steps.
    const int32_t first = 42;
    fused->evaluate(std::span(&first, 1), 0, runtime::LogitsWanted::Last, std::span(a).first(vocab));
    plain->evaluate(std::span(&first, 1), 0, runtime::LogitsWanted::Last, std::span(b).first(vocab));
    EXPECT_EQ(std::vector(a.begin(), a.begin() + long(vocab)), std::vector(b.begin(), b.begin() + long(vocab))) << "one token at 0";
}

// Q8_K and Q8_0 activations (qwen3-tiny's mixed types), Q8_1 (qwen3-tiny-q4_1), a MoE
// (qwen3moe-tiny), the hybrid with its shared expert (qwen35moe-tiny: its gated norm into Q8_0,
// its F16 projections apart), the hybrid as Q4_K_M makes it (every gated norm and the
// attention's output gate into Q8_K, as on the Qwen3.6 file); RoPE as llama's pairs without
// QK-norms (stories260K; neox pairs with norms on the qwen ones, a partial rotation on qwen35's)
// and gemma3's (its global layers fused, its sliding ones apart).
INSTANTIATE_TEST_SUITE_P(Kfd, KfdFusedPlans,
                         ::testing::Values("qwen3-tiny.gguf", "qwen3-tiny-q4_1.gguf", "qwen3moe-tiny.gguf", "qwen35moe-tiny.gguf",
                                           "make-model:qwen35moe-tiny:q4_k_m", "stories260K.gguf", "gemma3-tiny.gguf"),
                         [](const auto& info) {
                             std::string name = info.param;
                             name = name.substr(0, name.find(".gguf"));
                             for (char& c : name)
                                 if (c == '-' || c == '.' || c == ':') c = '_';
                             return name;
                         });

}  // namespace
}  // namespace zinc
