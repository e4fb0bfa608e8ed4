// The cpu tier against an independent engine (llama.cpp's CPU backend) on every golden model,
// by the criteria of ../shared/reference/README.md.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "graph/graph.h"
#include "model/model.h"
#include "runtime/cpu/cpu_tier.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "tests/golden_check.h"
#include "tests/test_paths.h"

namespace zinc {
namespace {

struct Loaded {
    std::unique_ptr<model::Model> model;
    graph::Graph graph;
    std::unique_ptr<runtime::Tier> tier;
    std::unique_ptr<runtime::Session> session;
};

Loaded load(const std::string& file, runtime::Precision precision = runtime::Precision::Ggml) {
    Loaded l;
    l.model = model::Model::load(test::sharedPath("models/" + file));
    l.graph = graph::buildDecodeGraph(l.model->config(), l.model->weights());
    runtime::TierOptions options;
    options.threads = 2;
    options.contextLength = 512;
    options.precision = precision;
    l.tier = cpu::makeCpuTier(l.graph, options);
    l.session = std::make_unique<runtime::Session>(l.model->config(), *l.tier);
    return l;
}

class GoldenTest : public testing::TestWithParam<test::GoldenCase> {};

TEST_P(GoldenTest, TeacherForcedLogitsMatchReference) {
    const auto golden = test::readGoldenCase(GetParam());
    auto l = load(golden.modelFile);
    test::expectMeetsGolden(*l.model, *l.session, GetParam(), golden);
}

INSTANTIATE_TEST_SUITE_P(Cpu, GoldenTest, testing::ValuesIn(test::goldenCases()), test::goldenCaseName);
INSTANTIATE_TEST_SUITE_P(CpuGemma, GoldenTest, testing::ValuesIn(test::gemmaGoldenCases()), test::goldenCaseName);
INSTANTIATE_TEST_SUITE_P(CpuWeightTypes, GoldenTest, testing::ValuesIn(test::weightTypeGoldenCases()), test::goldenCaseName);

// tiny-qwen3-q8_0: all 512 logits for token 5 at position 4 after tokens 1..4 (a RoPE check).
// The reference is a plain float forward pass, so the tier runs in f32 precision.
TEST(CpuTier, TinyQwen3Q8_0MatchesReferenceLogits) {
    auto l = load("tiny-qwen3-q8_0.gguf", runtime::Precision::F32);
    for (int32_t t : {1, 2, 3, 4}) l.session->step(t);
    auto logits = l.session->step(5);
    std::ifstream f(test::sharedPath("models/tiny-qwen3-q8_0.ref_logits.txt"));
    std::string all((std::istreambuf_iterator<char>(f)), {});
    std::replace(all.begin(), all.end(), ',', ' ');
    std::istringstream in(all);
    std::vector<float> want;
    for (float v; in >> v;) want.push_back(v);
    ASSERT_EQ(want.size(), logits.size());
    float maxDiff = 0;
    for (size_t i = 0; i < want.size(); ++i) maxDiff = std::max(maxDiff, std::fabs(want[i] - logits[i]));
    EXPECT_LT(maxDiff, 1e-3f);
    EXPECT_EQ(runtime::argmax(logits), 5);
}

// Batched prefill must give the same logits as feeding one token per step.
TEST(CpuTier, BatchedPrefillEqualsStepByStep) {
    for (const char* file : {"qwen3-tiny.gguf", "qwen3moe-tiny.gguf", "stories260K.gguf", "llama3-tiny.gguf", "qwen2-tiny.gguf",
                             "qwen3-tiny-q2_k.gguf", "gemma3-tiny.gguf"}) {
        auto a = load(file);
        auto b = load(file);
        const std::vector<int32_t> prompt = {1, 17, 200, 33, 400, 5, 6, 77, 300, 12};
        auto batched = a.session->feed(prompt);
        std::span<const float> stepped;
        for (int32_t t : prompt) stepped = b.session->step(t);
        float maxDiff = 0;
        for (size_t i = 0; i < batched.size(); ++i) maxDiff = std::max(maxDiff, std::fabs(batched[i] - stepped[i]));
        EXPECT_LT(maxDiff, 1e-3f) << file;
    }
}

TEST(CpuTier, StoriesGreedyMatchesFp64Reference) {
    // stories260K.ref.txt: greedy ids from [BOS] by a pure-Python fp64 forward pass.
    std::ifstream f(test::sharedPath("models/stories260K.ref.txt"));
    std::string line;
    std::vector<int32_t> want;
    while (std::getline(f, line))
        if (line.rfind("greedy_ids:", 0) == 0) {
            std::istringstream in(line.substr(11));
            for (int32_t id; in >> id;) want.push_back(id);
        }
    ASSERT_GT(want.size(), 10u);
    auto l = load("stories260K.gguf");
    std::vector<int32_t> got = {want[0]};
    l.session->step(want[0]);
    while (got.size() < want.size()) {
        got.push_back(runtime::argmax(l.session->logits()));
        l.session->step(got.back());
    }
    EXPECT_EQ(got, want);
}

TEST(CpuTier, TokenOutsideVocabularyIsAnError) {
    auto l = load("stories260K.gguf");
    EXPECT_THROW(l.session->step(512), runtime::TierError);
    EXPECT_THROW(l.session->step(-1), runtime::TierError);
}

}  // namespace
}  // namespace zinc
