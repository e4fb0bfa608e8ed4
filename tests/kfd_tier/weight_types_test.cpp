// Every weight type the vulkan tier reads (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K,
// Q5_K, Q6_K) decodes on the kfd tier as on the cpu tier: a golden model whose decode graph
// multiplies by (or embeds from) a matrix of that type, 8 steps of the cpu tier's greedy
// continuation fed to both, every step's five largest logits within the model's tolerance and
// the same top-1 wherever the cpu's top-1/top-2 gap is clear (tests/tier_conformance.h). The
// matvecs are bit-exact; what differs is exp's last bit (kernels/README.md), which random-weight
// models amplify at near-ties (qwen3-tiny-q4_1 moves 0.05 at its second position), so greedy
// ids are not compared on their own. Runs on the machine code (the simulated GPU's default).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "model/gguf/ggml_type.h"
#include "tests/kfd_tier/kfd_tier_fixture.h"
#include "tests/tier_conformance.h"

namespace zinc {
namespace {

struct TypeCase {
    model::GgmlType type;
    const char* file;  // a golden model with matrices of `type`
};

const TypeCase kCases[] = {
    {model::GgmlType::F32, "stories260K.gguf"},      {model::GgmlType::F16, "llama-2-tiny-random.gguf"},
    {model::GgmlType::BF16, "qwen3-tiny-bf16.gguf"}, {model::GgmlType::Q4_0, "qwen3-tiny-q4_1.gguf"},
    {model::GgmlType::Q4_1, "qwen3-tiny-q4_1.gguf"}, {model::GgmlType::Q5_0, "qwen3-tiny-q4_1.gguf"},
    {model::GgmlType::Q5_1, "qwen3-tiny-q4_1.gguf"}, {model::GgmlType::Q8_0, "tiny-qwen3-q8_0.gguf"},
    {model::GgmlType::Q4_K, "qwen3-tiny.gguf"},      {model::GgmlType::Q5_K, "qwen3-tiny.gguf"},
    {model::GgmlType::Q6_K, "qwen3-tiny.gguf"},
};

// Both tiers of a model, opened once for the binary (several types share a file). Built in
// place: a tier keeps a reference to its Loaded's graph, so a Loaded never moves.
struct BothTiers {
    test::Loaded cpu, kfd;
    explicit BothTiers(const std::string& file) : cpu(test::load(file, false)), kfd(test::load(file, true)) {}
};
BothTiers& tiersOf(const std::string& file) {
    static std::map<std::string, std::unique_ptr<BothTiers>> loaded;
    auto& slot = loaded[file];
    if (!slot) slot = std::make_unique<BothTiers>(file);
    return *slot;
}

class KfdWeightType : public testing::TestWithParam<TypeCase> {};

TEST_P(KfdWeightType, DecodesAsTheCpuTier) {
    const TypeCase c = GetParam();
    BothTiers& both = tiersOf(c.file);
    test::Loaded* cpu = &both.cpu;
    test::Loaded* kfd = &both.kfd;
    int matrices = 0;
    for (const graph::Op& op : kfd->graph.ops)
        for (const model::WeightRef* w : op.weights())
            if (w && w->present() && w->rows > 1 && w->type == c.type) ++matrices;
    ASSERT_GT(matrices, 0) << c.file << " has no matrix of type " << model::ggmlTypeName(c.type) << " in its decode graph";

    const int32_t vocab = cpu->model->config().nVocab;
    const test::Tolerance tol = test::toleranceFor(c.file);
    std::vector<float> want(static_cast<size_t>(vocab)), got(static_cast<size_t>(vocab));
    int32_t token = 1;
    for (int32_t pos = 0; pos < 8; ++pos) {
        cpu->tier->evaluate({&token, 1}, pos, runtime::LogitsWanted::Last, want);
        kfd->tier->evaluate({&token, 1}, pos, runtime::LogitsWanted::Last, got);
        const std::string what = std::string(c.file) + " (" + std::string(model::ggmlTypeName(c.type)) + "), position " +
                                 std::to_string(pos);
        test::expectNearCpu(got, want, tol, what);
        float worst = 0;
        for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(want[i] - got[i]));
        std::printf("%s: max |logit diff| %g\n", what.c_str(), worst);
        token = runtime::argmax(want);
    }
}

INSTANTIATE_TEST_SUITE_P(Types, KfdWeightType, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<TypeCase>& info) { return std::string(model::ggmlTypeName(info.param.type)); });

}  // namespace
}  // namespace zinc
