// The zinc-rt command line as a user meets it: exact golden format from `score`, one-line
// errors with a non-zero exit for bad files and unavailable tiers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/cli/run_zinc.h"
#include "tests/golden.h"
#include "tests/run_zinc.h"
#include "tests/test_paths.h"

namespace zinc {
namespace {

using test::RunResult;
using test::runZinc;


TEST(Cli, ScorePrintsTheGoldenFormat) {
    const auto r = runZinc("score " + test::sharedModel("stories260K.gguf") + " --text \"Once upon a time\" --top 5 --greedy 8 --threads 2");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const auto golden = test::readGolden(test::sharedPath("reference/stories260K.golden"));
    std::istringstream in(r.output);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "text Once upon a time");
    std::getline(in, line);
    EXPECT_EQ(line, "prompt 1 403 407 261 378");
    for (const auto& p : golden.positions) {
        std::getline(in, line);
        const std::string head = "pos " + std::to_string(p.pos) + " in " + std::to_string(p.token) + " top " +
                                 std::to_string(p.top[0].first) + ":";
        EXPECT_EQ(line.substr(0, head.size()), head);
    }
    std::getline(in, line);
    std::string want = "greedy";
    for (size_t i = 0; i < 8; ++i) want += " " + std::to_string(golden.greedy[i]);
    EXPECT_EQ(line, want);
}

TEST(Cli, ScoreTakesTokenIds) {
    const auto r = runZinc("score " + test::sharedModel("tiny-qwen3-q8_0.gguf") + " --tokens \"1 2 3 4 5\" --top 1");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("pos 4 in 5 top 5:"), std::string::npos) << r.output;
}

TEST(Cli, UnknownTierIsAClearError) {
    const auto r = runZinc("--tier=gpu score " + test::sharedModel("stories260K.gguf") + " --tokens 1");
    EXPECT_NE(r.output.find("unknown tier 'gpu'"), std::string::npos) << r.output;
}

bool hasGpuDeviceNodes() { return std::filesystem::exists("/dev/kfd") || std::filesystem::exists("/dev/dri"); }

// On a machine without these devices every GPU tier fails with one line saying what it looked
// for, and nothing falls back (no score lines).
TEST(Cli, EveryGpuTierFailsWithOneLineWithoutItsDevice) {
    if (hasGpuDeviceNodes()) GTEST_SKIP() << "this machine has /dev/kfd or /dev/dri";
    const std::string noFallback = "; pass --sim to run on the simulated GPU (no fallback is made)\n";
    const std::string noNode = "no amdgpu render node: looked for /dev/dri/renderD* bound to the amdgpu driver and found none";
    const auto vulkanDevices = runZinc("devices");
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--tier=kfd", "zinc-rt: error: kfd tier: no KFD device: looked for /dev/kfd (the amdgpu kernel driver's compute interface) and found "
                       "nothing" + noFallback},
        {"--tier=umq", "zinc-rt: error: umq tier: " + noNode + noFallback},
        {"--tier=kfd --submit=cs", "zinc-rt: error: kfd tier (--submit=cs): " + noNode + noFallback},
        {"--tier=umq --submit=cs", "zinc-rt: error: umq tier: --submit=cs is the kfd tier's second route; the umq tier submits through its "
                                   "user queue's doorbell (use --tier=kfd --submit=cs)\n"},
    };
    for (const auto& [args, want] : cases) {
        const auto r = runZinc(args + " score " + test::sharedModel("stories260K.gguf") + " --tokens 1");
        EXPECT_EQ(r.exitCode, 1) << args;
        EXPECT_EQ(r.output, want) << args;
    }
    const auto v = runZinc("--tier=vulkan --device 99 score " + test::sharedModel("stories260K.gguf") + " --tokens 1");
    EXPECT_EQ(v.exitCode, 1);
    EXPECT_EQ(v.output.rfind("zinc-rt: error: vulkan tier: no Vulkan device 99 (devices 0..", 0), 0u) << v.output;
    EXPECT_EQ(std::count(v.output.begin(), v.output.end(), '\n'), 1) << v.output;
}

// --tier=auto here: no AMD doors, lavapipe is a CPU driver, so the cpu tier, and one line why.
TEST(Cli, AutoChoosesTheCpuTierHereAndSaysWhy) {
    if (hasGpuDeviceNodes()) GTEST_SKIP() << "this machine has /dev/kfd or /dev/dri";
    const std::string args = " score " + test::sharedModel("stories260K.gguf") + " --tokens \"1 2 3\" --top 2 --threads 2";
    const auto cpu = runZinc("--tier=cpu" + args);
    const auto r = runZinc("--tier=auto" + args);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const std::string want =
        "tier auto: chose cpu (every core of this machine; umq unavailable: no amdgpu render node: looked for /dev/dri/renderD* bound to "
        "the amdgpu driver and found none; kfd unavailable: no /dev/kfd; vulkan unavailable: ";
    EXPECT_EQ(r.output.rfind(want, 0), 0u) << r.output;
    const auto firstLine = r.output.find('\n');
    EXPECT_EQ(r.output.substr(firstLine + 1), cpu.output) << "the cpu tier's own output after the choice";
}

TEST(Cli, AutoWithSimChoosesTheSimulatedKfdTier) {
    const auto r = runZinc("--tier=auto --sim score " + test::sharedModel("stories260K.gguf") + " --tokens \"1 2\" --top 1");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_EQ(r.output.rfind("tier auto: chose kfd (--sim: the kfd tier on the simulated gfx1100, the simulator's reference path; "
                             "--tier=umq --sim runs its user queues)\n",
                             0),
              0u)
        << r.output;
}

TEST(Cli, PrintConfigShowsTheSubmitRoute) {
    const auto r = runZinc("--submit=cs --print-config");
    EXPECT_NE(r.output.find("submit=cs\n"), std::string::npos) << r.output;
    const auto bad = runZinc("--submit=dma --print-config");
    EXPECT_EQ(bad.exitCode, 2) << bad.output;
}

void writeBytes(const std::filesystem::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string readBytes(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), {});
}

TEST(Cli, BadFilesGiveOneErrorLineAndNonZeroExit) {
    const auto dir = test::scratchDir();
    const std::string good = readBytes(test::sharedModel("qwen3-tiny.gguf"));
    std::string badMagic = good;
    badMagic[0] = 'X';
    std::string absurdCount = good;
    absurdCount[8] = '\xff';  // tensor count low byte
    absurdCount[15] = '\x7f';
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"truncated.gguf", good.substr(0, good.size() / 2)},
        {"header-only.gguf", good.substr(0, 10)},
        {"bad-magic.gguf", badMagic},
        {"absurd-count.gguf", absurdCount},
        {"empty.gguf", ""},
    };
    for (const auto& [name, bytes] : cases) {
        writeBytes(dir / name, bytes);
        for (const char* cmd : {"gguf ", "score --tokens 1 "}) {
            const auto r = runZinc(std::string(cmd) + (dir / name).string());
            EXPECT_EQ(r.exitCode, 1) << name << ": " << r.output;
            EXPECT_EQ(r.output.rfind("zinc-rt: error: ", 0), 0u) << name << ": " << r.output;
            EXPECT_NE(r.output.find(name), std::string::npos) << "the error names the file: " << r.output;
            EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
        }
    }
    const auto missing = runZinc("gguf " + (dir / "does-not-exist.gguf").string());
    EXPECT_EQ(missing.exitCode, 1);
    EXPECT_NE(missing.output.find("does-not-exist.gguf"), std::string::npos);
}

TEST(Cli, ModelWithoutTokenizerRefusesText) {
    const auto r = runZinc("score " + test::sharedModel("tiny-qwen3-q8_0.gguf") + " --text hello");
    EXPECT_EQ(r.exitCode, 1);
    EXPECT_NE(r.output.find("no tokenizer"), std::string::npos) << r.output;
}

// The qwen35moe hybrid runs on the cpu tier: first line of ../shared/reference/qwen35moe-tiny.golden.
TEST(Cli, ScoresTheQwen35Hybrid) {
    const auto r = runZinc("score " + test::sharedModel("qwen35moe-tiny.gguf") + " --tokens 71 --tier=cpu --threads 2");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("pos 0 in 71 top 355:6.26"), std::string::npos) << r.output;
}

TEST(Cli, RunGeneratesStoryText) {
    const auto r = runZinc("run " + test::sharedModel("stories260K.gguf") + " -p \"Once upon a time\" -n 24 --temp 0 --threads 2");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("Once upon a time, there was a little girl named Lily"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("decode: "), std::string::npos);
}

TEST(Cli, BenchPrintsJson) {
    const auto r = runZinc("bench " + test::sharedModel("stories260K.gguf") + " -p 16 -n 8 -r 2 --threads 2 2>/dev/null");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("\"decode_tok_s\""), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("\"prompt_tokens\": 16"), std::string::npos) << r.output;
}

// bench --kernels (vulkan tier): JSON with the copy kernel's rate and a row per matvec shape,
// token count and kernel; on the cpu tier a one-line error. Structure only (lavapipe here).
TEST(Cli, BenchKernelsPrintsARowPerMatVecShapeWithTheCopyRate) {
    const auto r = runZinc("--tier=vulkan bench " + test::sharedModel("qwen3-tiny.gguf") +
                           " --kernels --kernels-tokens 1,2 --kernels-variants v1,v2:r=1 2>/dev/null");
    if (r.exitCode != 0 && runZinc("devices").output.find("vulkan tier: usable") == std::string::npos)
        GTEST_SKIP() << "no usable Vulkan device";
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const auto j = nlohmann::json::parse(r.output.substr(r.output.find("{\n")));  // after the table on stderr
    EXPECT_GT(j["copy_gb_s"].get<double>(), 0.0);
    std::set<std::string> labels, kernels;
    for (const auto& k : j["kernels"]) {
        labels.insert(k["label"].get<std::string>());
        kernels.insert(k["kernel"].get<std::string>());
        EXPECT_GT(k["us_per_call"].get<double>(), 0.0) << k.dump();
        EXPECT_GT(k["weight_gb_s"].get<double>(), 0.0) << k.dump();
    }
    EXPECT_EQ(labels, (std::set<std::string>{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down", "lm_head"}));
    EXPECT_EQ(kernels, (std::set<std::string>{"v1", "v2:r=1"}));
    ASSERT_EQ(j["decode_step_matvecs"].size(), 4u) << r.output;  // 2 kernels x 2 token counts
    for (const auto& step : j["decode_step_matvecs"]) EXPECT_GT(step["matvec_us"].get<double>(), 0.0) << step.dump();
    const auto cpu = runZinc("--tier=cpu bench " + test::sharedModel("qwen3-tiny.gguf") + " --kernels");
    EXPECT_EQ(cpu.exitCode, 2);
    EXPECT_EQ(cpu.output, "zinc-rt: error: --kernels: times the vulkan tier's kernels: needs --tier=vulkan (the tier is cpu)\n");
}

// ZINC_VK_PIPELINE_STATS=1: each pipeline's compiler statistics on stderr where the device has
// VK_KHR_pipeline_executable_properties (NVIDIA, RADV); a device without it (lavapipe) is refused
// by name rather than ignored.
TEST(Cli, PipelineStatisticsArePrintedOrRefusedByName) {
    if (runZinc("devices").output.find("vulkan tier: usable") == std::string::npos) GTEST_SKIP() << "no usable Vulkan device";
    const std::string args = "--tier=vulkan score " + test::sharedModel("stories260K.gguf") + " --tokens 1";
    const auto r = test::runZincCli(args, "", "ZINC_VK_PIPELINE_STATS=1");
    if (r.exitCode == 0) {
        EXPECT_NE(r.output.find("vulkan pipeline rms_norm []: "), std::string::npos) << r.output;
    } else {
        EXPECT_EQ(r.exitCode, 1) << r.output;
        EXPECT_EQ(test::cliErrorLine(r).rfind("zinc-rt: error: vulkan tier: ZINC_VK_PIPELINE_STATS=1 but ", 0), 0u) << r.output;
        EXPECT_NE(r.output.find(" lacks VK_KHR_pipeline_executable_properties"), std::string::npos) << r.output;
    }
    EXPECT_EQ(runZinc(args).output.find("vulkan pipeline "), std::string::npos);  // off by default
}

}  // namespace
}  // namespace zinc

namespace zinc {
namespace {

TEST(Cli, ChatKeepsTheCacheBetweenTurns) {
    const auto input = test::scratchDir() / "chat-input.txt";
    std::ofstream(input) << "Hello there\nWhat next?\n";
    const auto r = runZinc("chat " + test::sharedModel("qwen3-tiny.gguf") + " -n 8 --seed 3 --threads 2 < " + input.string());
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("+ 0 cached tokens"), std::string::npos) << r.output;
    const auto second = r.output.find("cached tokens", r.output.find("+ 0 cached tokens") + 10);
    ASSERT_NE(second, std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("+ 0 cached tokens", r.output.find("+ 0 cached tokens") + 10), std::string::npos)
        << "second turn reused nothing: " << r.output;
}

TEST(Cli, MakeModelWritesALoadableModel) {
    const auto path = (test::scratchDir() / "made-qwen3-tiny.gguf").string();
    auto r = runZinc("make-model --preset qwen3-tiny --quant q4_k_m --seed 5 -o " + path);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    r = runZinc("score " + path + " --tokens \"1 2 3\" --top 3 --greedy 4 --threads 2");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("pos 2 in 3 top "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("greedy "), std::string::npos) << r.output;
}

}  // namespace
}  // namespace zinc

namespace zinc {
namespace {

// A prompt of several prefill batches shows "prefill N/M tokens" on a terminal (util-linux's
// `script` gives the command one) and nothing of the kind when stderr is a file or pipe.
TEST(Cli, ChatShowsPrefillProgressOnlyOnATerminal) {
    const auto input = test::scratchDir() / "chat-long-input.txt";
    {
        std::ofstream in(input);
        for (int i = 0; i < 100; ++i) in << "hello ";
        in << "\n/exit\n";
    }
    const std::string chat = test::zincRtBinary() + " --threads 2 --batch 32 chat " + test::sharedModel("qwen3-tiny.gguf") +
                             " -n 2 --seed 1 < " + input.string();
    FILE* pipe = popen(("script -qec '" + chat + "' /dev/null").c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string onTerminal;
    std::array<char, 4096> buf;
    for (size_t n; (n = fread(buf.data(), 1, buf.size(), pipe)) > 0;) onTerminal.append(buf.data(), n);
    EXPECT_EQ(pclose(pipe), 0) << onTerminal;
    EXPECT_NE(onTerminal.find("\rprefill 32/"), std::string::npos) << onTerminal;
    EXPECT_NE(onTerminal.find("\r\033[K"), std::string::npos) << "the progress line is erased";
    const auto piped = runZinc("chat " + test::sharedModel("qwen3-tiny.gguf") + " --threads 2 --batch 32 -n 2 --seed 1 < " +
                               input.string());
    ASSERT_EQ(piped.exitCode, 0) << piped.output;
    EXPECT_EQ(piped.output.find("prefill "), std::string::npos) << piped.output;
    EXPECT_NE(piped.output.find("tok/s"), std::string::npos) << piped.output;
}

}  // namespace
}  // namespace zinc
