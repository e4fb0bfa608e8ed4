// The limits a user can run into, each met with one clear error line (or, where documented,
// handled): a full context (refused, never slid), a model larger than the device's memory,
// a prompt longer than the batch (split into batches), an unsupported tensor type, a chat
// template of no known family, and nonsense sizes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <vector>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "tests/cli/run_zinc.h"
#include "tests/test_paths.h"

namespace zinc {
namespace {

using test::RunResult;
using test::runZinc;

const std::string kStoriesModel = test::sharedModel("stories260K.gguf");

std::string errorLine(const RunResult& r) { return test::cliErrorLine(r); }

// A copy of `source` with metadata values replaced or added and, optionally, one tensor given
// another type (its data zero-filled at the new type's size).
std::string rewrittenModel(const std::string& name, const std::vector<std::pair<std::string, std::string>>& strings,
                           const std::string& retypeTensor = "", model::GgmlType newType = model::GgmlType::F32,
                           const std::function<void(model::GgufWriter&)>& addMore = {}) {
    const auto source = model::GgufFile::open(kStoriesModel);
    const std::string path = (test::scratchDir() / name).string();
    model::GgufWriter out(path, source->alignment());
    for (const auto& [key, value] : source->metadata()) {
        if (key == "general.alignment") continue;  // the writer records it itself
        bool replaced = false;
        for (const auto& [k, v] : strings) replaced |= k == key;
        if (!replaced) out.add(key, value);
    }
    for (const auto& [k, v] : strings) out.addString(k, v);
    if (addMore) addMore(out);
    for (const auto& t : source->tensors())
        out.addTensor(t.name, t.name == retypeTensor ? newType : t.type, std::span<const uint64_t>(t.ne.data(), t.nDims));
    out.writeHeader();
    for (size_t i = 0; i < source->tensors().size(); ++i) {
        const auto& t = source->tensors()[i];
        if (t.name == retypeTensor) {
            out.writeTensorData(i, std::vector<uint8_t>(out.tensors()[i].nbytes, 0));
        } else {
            out.writeTensorData(i, {t.data, t.nbytes});
        }
    }
    out.finish();
    return path;
}

bool vulkanDevicePresent() { return runZinc("devices").output.find("vulkan tier: usable") != std::string::npos; }

TEST(Limits, PromptLongerThanTheContextIsRefused) {
    const auto r = runZinc("--ctx 8 run " + kStoriesModel + " -p \"Once upon a time there was a little girl named\" -n 4");
    EXPECT_EQ(r.exitCode, 1) << r.output;
    EXPECT_EQ(errorLine(r), "zinc-rt: error: context full: 0 tokens cached + 13 new > context length 8 (use --ctx to raise it)");
}

TEST(Limits, GenerationStopsWhenTheContextIsFull) {
    const auto r = runZinc("--ctx 16 run " + kStoriesModel + " -p \"Once upon a time\" -n 40 --temp 0");
    EXPECT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("decode: 11 tokens"), std::string::npos) << "5 prompt + 11 generated = 16: " << r.output;
    EXPECT_NE(r.output.find(", context full"), std::string::npos) << r.output;
}

TEST(Limits, ChatRefusesATurnThatDoesNotFitAndGoesOn) {
    const auto r = runZinc("--ctx 24 chat " + kStoriesModel + " --temp 0 -n 4", "Once upon a time there was a little girl\\n/exit\\n");
    EXPECT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(errorLine(r).find("zinc-rt: error: context full: "), std::string::npos);
    EXPECT_NE(r.output.find("the turn was dropped, /reset to start over"), std::string::npos) << r.output;
}

TEST(Limits, PromptLongerThanTheBatchIsSplitIntoBatches) {
    const std::string args = "run " + kStoriesModel + " -p \"Once upon a time there was a little girl named\" -n 8 --temp 0";
    const auto whole = runZinc(args);
    const auto split = runZinc("--batch 3 " + args);
    ASSERT_EQ(whole.exitCode, 0) << whole.output;
    ASSERT_EQ(split.exitCode, 0) << split.output;
    EXPECT_NE(split.output.find("prefill: 13 tokens"), std::string::npos) << split.output;
    auto text = [](const std::string& out) {
        const size_t start = out.find("Once upon a time");
        return out.substr(start, out.find('\n', start) - start);
    };
    EXPECT_EQ(text(split.output), text(whole.output));
}

// In the sanitized build (test.sh) LeakSanitizer checks zinc-rt at exit and makes it fail on a
// leak; a long generation must leave nothing behind.
TEST(Limits, LongGenerationEndsCleanly) {
    const auto r = runZinc("--ctx 600 run " + kStoriesModel + " -p \"Once upon a time\" -n 500 --seed 3");
    EXPECT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("decode: 499 tokens"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("LeakSanitizer"), std::string::npos) << r.output;
}

TEST(Limits, NonsenseSizesAreErrors) {
    EXPECT_EQ(errorLine(runZinc("--batch 0 run " + kStoriesModel + " -n 1")), "zinc-rt: error: --batch: 0 is out of range (allowed: >= 1)");
    EXPECT_EQ(errorLine(runZinc("--ctx -5 run " + kStoriesModel + " -n 1")), "zinc-rt: error: --ctx: -5 is out of range (allowed: >= 0)");
}

TEST(Limits, ModelLargerThanTheSimulatedGpusMemory) {
    const auto r = runZinc("--tier=kfd --sim --device-memory 1 score " + kStoriesModel + " --tokens 1");
    EXPECT_EQ(r.exitCode, 1) << r.output;
    const std::string e = errorLine(r);
    for (const char* part : {"kfd tier: the model needs ", "MiB of VRAM (weights ", "but simulated", "has 1.0 MiB to use (--device-memory"})
        EXPECT_NE(e.find(part), std::string::npos) << "missing '" << part << "' in: " << e;
}

TEST(Limits, ModelLargerThanTheVulkanDevicesMemory) {
    if (!vulkanDevicePresent()) GTEST_SKIP() << "no usable Vulkan device";
    const auto r = runZinc("--tier=vulkan --device-memory 1 score " + kStoriesModel + " --tokens 1");
    EXPECT_EQ(r.exitCode, 1) << r.output;
    const std::string e = errorLine(r);
    for (const char* part : {"vulkan tier: the model needs ", "MiB of device memory (weights ", "KV cache", "has 1.0 MiB to use (--device-memory"})
        EXPECT_NE(e.find(part), std::string::npos) << "missing '" << part << "' in: " << e;
}

TEST(Limits, UnsupportedTensorTypeIsNamed) {
    const std::string path = rewrittenModel("q8_1.gguf", {}, "blk.0.ffn_up.weight", model::GgmlType::Q8_1);
    const auto r = runZinc("score " + path + " --tokens 1");
    EXPECT_EQ(r.exitCode, 1) << r.output;
    EXPECT_NE(errorLine(r).find("tensor blk.0.ffn_up.weight has type Q8_1, which zinc-rt does not support"), std::string::npos);
}

TEST(Limits, UnsupportedRopeScalingIsNamed) {
    const std::string path = rewrittenModel("longrope.gguf", {{"llama.rope.scaling.type", "longrope"}});
    const auto r = runZinc("score " + path + " --tokens 1");
    EXPECT_EQ(r.exitCode, 1) << r.output;
    EXPECT_NE(errorLine(r).find("rope scaling type 'longrope' (llama.rope.scaling.type) is not supported; supported: none, "
                                "linear, yarn"),
              std::string::npos)
        << r.output;
}

// stories260K (trained 2048) as if its GGUF said YaRN x4 from 2048: --ctx may reach 8192 without
// --rope-scaling, and the refusal past it names that length.
TEST(Limits, GgufRopeScalingExtendsTheAllowedContext) {
    const std::string path = rewrittenModel("yarn.gguf", {{"llama.rope.scaling.type", "yarn"}}, "", model::GgmlType::F32,
                                            [](model::GgufWriter& w) {
                                                w.addF32("llama.rope.scaling.factor", 4.0f);
                                                w.addU32("llama.rope.scaling.original_context_length", 2048);
                                            });
    const auto r = runZinc("--ctx 8192 score " + path + " --tokens 1");
    EXPECT_EQ(r.exitCode, 0) << r.output;
    EXPECT_EQ(errorLine(runZinc("--ctx 8193 score " + path + " --tokens 1")),
              "zinc-rt: error: --ctx: 8193 is out of range (allowed: [0, 8192], the model's length with its GGUF's rope scaling; "
              "--rope-scaling none runs past it as trained)");
}

TEST(Limits, UnsupportedArchitectureIsNamed) {
    const std::string path = rewrittenModel("mamba.gguf", {{"general.architecture", "mamba"}});
    const auto r = runZinc("score " + path + " --tokens 1");
    EXPECT_EQ(r.exitCode, 1) << r.output;
    EXPECT_NE(errorLine(r).find("unsupported architecture 'mamba'"), std::string::npos);
}

TEST(Limits, ChatTemplateOfNoKnownFamilyIsAnError) {
    const std::string path =
        rewrittenModel("jinja.gguf", {{"tokenizer.chat_template", "{% for m in messages %}{{ m.content }}{% endfor %}"}});
    const auto r = runZinc("chat " + path, "hello\\n");
    EXPECT_EQ(r.exitCode, 1) << r.output;
    const std::string e = errorLine(r);
    EXPECT_NE(e.find("unsupported chat template (starts with: {% for m in messages %}"), std::string::npos) << e;
    EXPECT_NE(e.find("--template"), std::string::npos) << "says how to choose one: " << e;
    const auto named = runZinc("chat " + path + " --template chatml -n 2 --temp 0", "hello\\n");
    EXPECT_EQ(named.exitCode, 0) << named.output;
    EXPECT_EQ(errorLine(runZinc("chat " + kStoriesModel + " --template jinja", "hello\\n")),
              "zinc-rt: error: unknown chat template name 'jinja'; known: chatml, qwen3, llama3, llama2, gemma, phi3");
}

}  // namespace
}  // namespace zinc
