// A/B between tiers: full agreement with the cpu tier on every golden model, the perturbed layer
// of a doctored model named as the first to diverge, and validate mode's dumps.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "tests/golden_check.h"
#include "tests/trace/perturbed_model.h"
#include "tests/trace/trace_tiers.h"
#include "tools/trace/ab.h"

namespace zinc {
namespace {

using test::TierKind;

struct AbCase {
    std::string golden;
    TierKind tier;
};

std::string abCaseName(const testing::TestParamInfo<AbCase>& info) {
    std::string name = info.param.golden.substr(0, info.param.golden.find('.')) + "_" + test::tierName(info.param.tier);
    for (auto& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return name;
}

std::vector<AbCase> abCases() {
    std::vector<AbCase> cases;
    for (const auto& golden : test::goldenCases())
        for (TierKind tier : test::allTiers()) cases.push_back({golden.golden, tier});
    return cases;
}

class AbAgainstCpu : public testing::TestWithParam<AbCase> {};

// The golden prompt's first tokens, then 6 steps: greedy on the cpu tier, the tier fed those.
TEST_P(AbAgainstCpu, AgreesOnEveryTokenAndLayer) {
    ZINC_REQUIRE_TIER(GetParam().tier);
    const auto golden = test::readGolden(test::sharedPath("reference/" + GetParam().golden));
    auto a = test::open(golden.modelFile, TierKind::Cpu);
    auto b = test::open(golden.modelFile, GetParam().tier);
    trace::AbOptions options;
    options.prompt.assign(golden.prompt.begin(), golden.prompt.begin() + std::min<size_t>(golden.prompt.size(), 6));
    options.tokens = 6;
    const auto r = trace::runAb({"cpu", a.tier.get(), &a.graph}, {test::tierName(GetParam().tier), b.tier.get(), &b.graph}, options);
    // Agreement as the goldens define it: the same token wherever the choice is not a near tie
    // (random-weight models have a few; vulkan on lavapipe flips one on qwen3-tiny and
    // qwen3moe-tiny, the cpu and kfd tiers none).
    EXPECT_EQ(r.firstDivergence, -1) << trace::formatAb(r);
    EXPECT_EQ(r.agreed + int32_t(r.nearTies.size()), 6) << trace::formatAb(r);
    if (GetParam().tier == TierKind::Cpu) {
        EXPECT_EQ(r.agreed, 6);
    }
    EXPECT_EQ(r.firstDivergingLayer, -1) << trace::formatAb(r);
    ASSERT_EQ(r.layers.size(), size_t(a.model->config().nLayer));
    for (const auto& d : r.layers) {
        EXPECT_GT(d.cosine, 0.999) << "layer " << d.layer;
        if (GetParam().tier == TierKind::Cpu) {
            EXPECT_EQ(d.maxAbs, 0.0) << "the same tier twice: bit for bit";
        }
    }
    EXPECT_GT(r.speedRatio, 0.0);
    EXPECT_EQ(r.comparedPosition, int32_t(options.prompt.size()) + 4) << "the last step, when all agree";
}

INSTANTIATE_TEST_SUITE_P(Golden, AbAgainstCpu, testing::ValuesIn(abCases()), abCaseName);

class AbPerturbed : public testing::TestWithParam<TierKind> {};

// stories260K with layer 2's ffn_down negated, on each tier, against the original on the cpu
// tier: the tokens part ways, and the residual first differs after layer 2.
TEST_P(AbPerturbed, NamesThePerturbedLayerFirst) {
    ZINC_REQUIRE_TIER(GetParam());
    const std::string doctored = test::perturbedStories(2);
    auto a = test::open("stories260K.gguf", TierKind::Cpu);
    auto b = test::openPath(doctored, GetParam());
    trace::AbOptions options;
    options.prompt = {1, 403};
    options.tokens = 6;
    const auto r = trace::runAb({"cpu", a.tier.get(), &a.graph}, {"doctored", b.tier.get(), &b.graph}, options);
    EXPECT_GE(r.firstDivergence, 0) << trace::formatAb(r);
    EXPECT_EQ(r.firstDivergingLayer, 2) << trace::formatAb(r);
    for (int l = 0; l < 2; ++l) {
        EXPECT_LE(r.layers[size_t(l)].relative, options.layerTolerance);
        if (GetParam() == TierKind::Cpu) {
            EXPECT_EQ(r.layers[size_t(l)].maxAbs, 0.0) << "layers before 2 are untouched";
        }
    }
    EXPECT_GT(r.layers[2].relative, 0.1);
}

INSTANTIATE_TEST_SUITE_P(Tiers, AbPerturbed, testing::ValuesIn(test::allTiers()), test::tierParamName);

class AbValidate : public testing::TestWithParam<TierKind> {};

std::vector<char> bytesOf(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_P(AbValidate, DumpsNamedTensorsOfBothSides) {
    ZINC_REQUIRE_TIER(GetParam());
    auto a = test::open("qwen3-tiny.gguf", TierKind::Cpu);
    auto b = test::open("qwen3-tiny.gguf", GetParam());
    const auto dir = test::scratchDir() / ("validate-" + test::tierName(GetParam()));
    trace::AbOptions options;
    options.prompt = {1, 300};
    options.tokens = 2;
    options.validateDir = dir.string();
    const auto r = trace::runAb({"cpu", a.tier.get(), &a.graph}, {test::tierName(GetParam()), b.tier.get(), &b.graph}, options);
    std::ifstream in(dir / "index.json");
    const auto index = nlohmann::json::parse(in);
    EXPECT_EQ(index.at("position"), r.comparedPosition);
    const auto& tensors = index.at("tensors");
    ASSERT_EQ(tensors.size(), a.graph.ops.size());
    size_t both = 0;
    for (const auto& t : tensors) {
        ASSERT_FALSE(t.at("a").is_null()) << "the cpu tier captures every op: " << t.at("name");
        if (t.at("b").is_null()) continue;  // fused away on that tier
        ++both;
        EXPECT_LT(double(t.at("relative")), 1e-2) << t.at("name");
    }
    // The cpu and kfd tiers materialise every op; vulkan at least each layer's residual.
    EXPECT_GE(both, GetParam() == TierKind::Vulkan ? size_t(a.model->config().nLayer) : a.graph.ops.size());
    EXPECT_EQ(both, r.dumped.size());
    EXPECT_EQ(tensors[1].at("name"), "blk.0.attn_norm");
    const auto npy = bytesOf(dir / "a" / "blk.0.attn_norm.npy");
    const size_t width = 256;  // qwen3-tiny's embedding width
    ASSERT_EQ(npy.size(), 128 + 4 * width);
    EXPECT_EQ(std::string(npy.data(), 6), "\x93NUMPY");
    EXPECT_NE(std::string(npy.data(), 128).find("'shape': (256,)"), std::string::npos);
    EXPECT_EQ(npy[127], '\n');
}

INSTANTIATE_TEST_SUITE_P(Tiers, AbValidate, testing::ValuesIn(test::allTiers()), test::tierParamName);

TEST(Ab, RefusesGraphsOfDifferentShapes) {
    auto a = test::open("stories260K.gguf", TierKind::Cpu);
    auto b = test::open("qwen3-tiny.gguf", TierKind::Cpu);
    trace::AbOptions options;
    options.prompt = {1};
    EXPECT_THROW(trace::runAb({"a", a.tier.get(), &a.graph}, {"b", b.tier.get(), &b.graph}, options), std::runtime_error);
}

}  // namespace
}  // namespace zinc
