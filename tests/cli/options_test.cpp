// Every option's value is checked before anything runs: a bad one is one line naming the option
// and the allowed range, and exit 2. --gfx is spelled both ways everywhere; `devices --sim` and
// `probe --sim` agree on the doors; `run` takes -f, --system, --tokens and prints its seed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/cli/run_zinc.h"

namespace zinc {
namespace {

using test::cliErrorLine;
using test::runZincCli;

const std::string kStories = test::sharedPath("models/stories260K.gguf");
const std::string kNoTokenizer = test::sharedPath("models/tiny-qwen3-q8_0.gguf");

// What `run` printed on stdout: the prompt and its continuation.
std::string storyText(const std::string& out) {
    const size_t start = out.find("Once upon");
    return start == std::string::npos ? "" : out.substr(start, out.find("\nprefill") - start);
}

void expectUsageError(const std::string& args, const std::string& line, const std::string& env = "") {
    const auto r = runZincCli(args, "", env);
    EXPECT_EQ(r.exitCode, 2) << args << "\n" << r.output;
    EXPECT_EQ(cliErrorLine(r), "zinc-rt: error: " + line) << args;
}

TEST(Options, SamplingValuesOutsideTheirRangeAreRefused) {
    const std::string run = "run " + kStories + " -n 1 ";
    expectUsageError(run + "--top-p 2", "--top-p: 2 is out of range (allowed: [0, 1])");
    expectUsageError(run + "--top-p -0.5", "--top-p: -0.5 is out of range (allowed: [0, 1])");
    expectUsageError(run + "--min-p 1.5", "--min-p: 1.5 is out of range (allowed: [0, 1])");
    expectUsageError(run + "--temp -1", "--temp: -1 is out of range (allowed: >= 0)");
    expectUsageError(run + "--top-k -2", "--top-k: -2 is out of range (allowed: >= 0)");
    expectUsageError(run + "--repeat-penalty 0.0 --repeat-last-n -1", "--repeat-last-n: -1 is out of range (allowed: >= 0)");
    expectUsageError(run + "--top-p x", "--top-p: 'x' is not a number");
    expectUsageError("run " + kStories + " -n -1", "--n-predict: -1 is out of range (allowed: [0, 16777216])");
}

TEST(Options, GlobalValuesOutsideTheirRangeAreRefused) {
    const std::string run = " run " + kStories + " -n 1";
    expectUsageError("--threads -3" + run, "--threads: -3 is out of range (allowed: >= 0)");
    expectUsageError("--batch 0" + run, "--batch: 0 is out of range (allowed: >= 1)");
    expectUsageError("--ctx -5" + run, "--ctx: -5 is out of range (allowed: >= 0)");
    expectUsageError("--device -1" + run, "--device: -1 is out of range (allowed: >= 0)");
    expectUsageError("--device-memory -1" + run, "--device-memory: -1 is out of range (allowed: >= 0)");
    expectUsageError(run, "ZINC_THREADS: -3 is out of range (allowed: >= 0)", "ZINC_THREADS=-3");
    expectUsageError("--gfx gfx900 devices", "--gfx: 'gfx900' is not a target (allowed: gfx1100 or 11, gfx1201 or 12)");
}

TEST(Options, ContextBeyondTheTrainedLengthNeedsRopeScaling) {
    expectUsageError("--ctx 100000 run " + kStories + " -n 1",
                     "--ctx: 100000 is out of range (allowed: [0, 2048], the model's trained length; --rope-scaling none runs past "
                     "it as trained)");
    const auto r = runZincCli("--ctx 4096 --rope-scaling none run " + kStories + " -n 2 --temp 0");
    EXPECT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("context 4096"), std::string::npos) << r.output;
    expectUsageError("--ctx 4096 --rope-scaling yarn run " + kStories, "--rope-scaling: yarn not in {none}");
}

TEST(Options, SimIsOnlyForTiersWithASimulatedGpu) {
    expectUsageError("--sim run " + kStories + " -n 1",
                     "--sim: only with --tier kfd, umq or auto (the tiers with a simulated GPU); the tier is cpu");
    expectUsageError("--sim --tier vulkan score " + kStories + " --tokens 1",
                     "--sim: only with --tier kfd, umq or auto (the tiers with a simulated GPU); the tier is vulkan");
}

TEST(Options, GfxIsSpelledEitherWayEverywhere) {
    for (const char* gfx : {"12", "gfx1201"}) {
        const auto r = runZincCli(std::string("--gfx ") + gfx + " --print-config");
        EXPECT_EQ(r.exitCode, 0) << r.output;
        EXPECT_NE(r.output.find("gfx=gfx1201\n"), std::string::npos) << r.output;
    }
    const auto dwords = test::scratchDir() / "nop.pm4";
    std::ofstream(dwords, std::ios::binary).write("\x00\x00\x00\x80", 4);  // a type-2 NOP
    for (const char* gfx : {"12", "gfx1201"}) {
        const auto r = runZincCli("pm4 decode " + dwords.string() + " --gfx " + gfx);
        EXPECT_EQ(r.exitCode, 0) << r.output;
        EXPECT_NE(r.output.find("1 dwords, gfx12"), std::string::npos) << r.output;
    }
}

TEST(Options, DevicesAndProbeAgreeOnTheDoorsWithSim) {
    const auto devices = runZincCli("--sim devices");
    EXPECT_EQ(devices.exitCode, 0) << devices.output;
    EXPECT_NE(devices.output.find("doors: umq open: simulated amdgpu driver (gfx1100): USERQ answered (chosen by --sim)"),
              std::string::npos)
        << devices.output;
    EXPECT_NE(devices.output.find("cs  open: simulated amdgpu driver (gfx1100): CS answered"), std::string::npos) << devices.output;
    EXPECT_NE(devices.output.find("kfd open: simulated KFD (gfx1100)"), std::string::npos) << devices.output;
}

TEST(Options, RunPrintsARandomSeedThatRepeatsTheRun) {
    const std::string args = "run " + kStories + " -n 12";
    const auto first = runZincCli(args);
    ASSERT_EQ(first.exitCode, 0) << first.output;
    const size_t at = first.output.find(" seed ");
    ASSERT_NE(at, std::string::npos) << first.output;
    const std::string seed = first.output.substr(at + 6, first.output.find('\n', at) - at - 6);
    const auto again = runZincCli(args + " --seed " + seed);
    EXPECT_EQ(storyText(again.output), storyText(first.output));
    const auto other = runZincCli(args);
    EXPECT_NE(other.output.substr(at, 20), first.output.substr(at, 20)) << "two runs drew the same seed";
}

TEST(Options, RunReadsThePromptFromAFileAndWrapsItWithASystemMessage) {
    const auto file = test::scratchDir() / "prompt.txt";
    std::ofstream(file) << "Once upon a time";
    const auto fromFile = runZincCli("run " + kStories + " -f " + file.string() + " -n 4 --temp 0");
    const auto fromFlag = runZincCli("run " + kStories + " -p \"Once upon a time\" -n 4 --temp 0");
    ASSERT_EQ(fromFile.exitCode, 0) << fromFile.output;
    EXPECT_EQ(storyText(fromFile.output), storyText(fromFlag.output));
    EXPECT_NE(fromFile.output.find("prefill: 5 tokens"), std::string::npos) << fromFile.output;
    const auto chat = runZincCli("run " + test::sharedPath("models/qwen3-tiny.gguf") + " --system \"Be brief.\" -p hi -n 2 --temp 0");
    ASSERT_EQ(chat.exitCode, 0) << chat.output;
    EXPECT_EQ(chat.output.find("prefill: 3 tokens"), std::string::npos) << "the chat template wraps the prompt: " << chat.output;
    expectUsageError("run " + kStories + " -f /nonexistent/prompt.txt", "-f: cannot read prompt file /nonexistent/prompt.txt");
}

TEST(Options, RunWithoutATokenizerTakesTokenIds) {
    expectUsageError("run " + kNoTokenizer + " -n 2", "--prompt: the model has no tokenizer; give the prompt as --tokens \"1 2 3\"");
    const auto r = runZincCli("run " + kNoTokenizer + " --tokens \"1 2 3\" -n 3 --temp 0");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("prefill: 3 tokens"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("decode: 2 tokens"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace zinc
