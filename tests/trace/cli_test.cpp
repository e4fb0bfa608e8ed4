// `zinc-rt trace` and `zinc-rt ab` from the command line: the files they write, their JSON,
// and their one-line errors.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/run_zinc.h"
#include "tests/test_paths.h"
#include "tests/trace/perturbed_model.h"

namespace zinc {
namespace {

using test::RunResult;
using test::runZinc;

std::string stories() { return test::sharedPath("models/stories260K.gguf"); }

nlohmann::json jsonAfter(const std::string& output) {
    return nlohmann::json::parse(output.substr(output.find("{\n")));
}

TEST(TraceCli, WritesTheTraceTheSvgsAndASummary) {
    const auto dir = test::scratchDir() / "trace-cli";
    std::filesystem::create_directories(dir);
    const auto r = runZinc("--tier=kfd --sim trace " + stories() + " -p \"Once upon\" -n 3 --out " + (dir / "t.json").string() +
                           " --svg " + (dir / "t.svg").string() + " --svg-layers " + (dir / "l.svg").string());
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("trace: 3 decode tokens on kfd"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("1.00 submissions"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("time per op kind (ms per token):"), std::string::npos);
    EXPECT_NE(r.output.find("  layer 4 "), std::string::npos);
    std::ifstream in(dir / "t.json");
    const auto trace = nlohmann::json::parse(in);
    EXPECT_EQ(trace.at("otherData").at("tier"), "kfd");
    size_t ops = 0;
    for (const auto& e : trace.at("traceEvents")) ops += e.value("cat", "") == "op" && e.at("pid") == 2;
    EXPECT_EQ(ops, 3u * 78u) << "stories260K: 5 layers x 15 ops + 3 outside, 3 tokens";
    for (const char* svg : {"t.svg", "l.svg"}) {
        std::ifstream f(dir / svg);
        const std::string text{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
        EXPECT_EQ(text.rfind("<svg", 0), 0u) << svg;
    }
}

// The hybrid's op kinds (conv, delta rule, gated norm, gates) are summarized with the rest (the
// summary's table once ended at MoeFfn and read past its end).
TEST(TraceCli, SummarizesTheHybridsOpKinds) {
    const auto out = test::scratchDir() / "trace-hybrid.json";
    const auto r = runZinc("--tier=kfd --sim --ctx 64 trace " + test::sharedPath("models/qwen35moe-tiny.gguf") +
                           " --tokens \"71 335\" -n 2 --out " + out.string());
    ASSERT_EQ(r.exitCode, 0) << r.output;
    for (const char* kind : {"  delta_net ", "  ssm_conv ", "  gated_norm ", "  sigmoid_gate "})
        EXPECT_NE(r.output.find(kind), std::string::npos) << kind << "\n" << r.output;
}

TEST(AbCli, ReportsFullAgreementBetweenCpuAndKfd) {
    const auto r = runZinc("--sim ab " + stories() + " --tiers cpu,kfd -n 4 --json");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const auto j = jsonAfter(r.output);
    EXPECT_EQ(j.at("a"), "cpu");
    EXPECT_EQ(j.at("b"), "kfd");
    EXPECT_TRUE(j.at("full_agreement").get<bool>());
    EXPECT_EQ(j.at("first_diverging_layer"), -1);
    EXPECT_EQ(j.at("layers").size(), 5u);
}

TEST(AbCli, NamesThePerturbedLayerOfASecondModel) {
    const auto r = runZinc("ab " + stories() + " --model-b " + test::perturbedStories(3) + " -n 4");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("first diverging layer: 3 "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("speed ratio B/A"), std::string::npos);
}

TEST(AbCli, RejectsOneTier) {
    const auto r = runZinc("ab " + stories() + " --tiers cpu");
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.output.find("zinc-rt: error: --tiers: 'cpu' is not two comma-separated values (A,B)"), std::string::npos)
        << r.output;
}

TEST(TraceCli, AModelWithoutTokenizerNeedsTokenIds) {
    const auto model = test::sharedPath("models/tiny-qwen3-q8_0.gguf");
    const auto r = runZinc("trace " + model + " -n 1 --out \"\"");
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.output.find("zinc-rt: error: --prompt: the model has no tokenizer; give the prompt as --tokens \"1 2 3\""),
              std::string::npos)
        << r.output;
    const auto ok = runZinc("trace " + model + " --tokens \"1 2 3\" -n 2 --out \"\"");
    EXPECT_EQ(ok.exitCode, 0) << ok.output;
    EXPECT_NE(ok.output.find("trace: 2 decode tokens on cpu"), std::string::npos) << ok.output;
}

}  // namespace
}  // namespace zinc
