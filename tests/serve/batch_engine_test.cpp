// The continuous-batching engine in process (tools/serve/batch_engine.h): jobs that share its
// steps get the texts they get from the one-at-a-time engine (stop() under load: serve_parallel).
#include <gtest/gtest.h>

#include "tests/cpu_tier_fixture.h"
#include "tools/serve/batch_engine.h"
#include "tools/serve/engine_worker.h"

namespace zinc::serve {
namespace {

using Opened = test::OpenedCpuTier;

Opened open(int32_t slots) { return test::openCpuTier("qwen3-tiny.gguf", 128, slots); }

std::shared_ptr<Job> job(int32_t i, int32_t maxTokens) {
    JobInput in;
    in.prompt = {1, 100 + i, 200 + 3 * i, 7};
    for (int32_t k = 0; k < i % 5; ++k) in.prompt.push_back(300 + k);  // prompts of 4..8 tokens
    in.maxTokens = maxTokens;
    in.sampling.temperature = 0.8f;
    in.sampling.seed = static_cast<uint64_t>(i + 1);
    return std::make_shared<Job>(std::move(in));
}

std::vector<std::string> texts(Engine& engine, int32_t jobs, int32_t maxTokens) {
    std::vector<std::shared_ptr<Job>> all;
    for (int32_t i = 0; i < jobs; ++i) {
        all.push_back(job(i, maxTokens));
        EXPECT_TRUE(engine.submit(all.back()));
    }
    std::vector<std::string> out;
    for (auto& j : all) {
        std::string text;
        for (Job::Update u; !u.finished;) text += (u = j->waitForUpdate(std::chrono::milliseconds(100))).text;
        EXPECT_NE(j->result().reason, FinishReason::Error) << j->result().error;
        out.push_back(text + "|" + std::to_string(j->result().completionTokens));
    }
    return out;
}

TEST(BatchEngine, JobsSharingStepsGetTheirTextsAlone) {
    Opened batched = open(4), alone = open(1);
    BatchEngine engine(*batched.model, *batched.tier, 4, 3, 16);
    EngineWorker worker(*alone.model, *alone.tier, 16);
    const auto got = texts(engine, 10, 6);
    EXPECT_EQ(got, texts(worker, 10, 6));
    EXPECT_EQ(engine.counts().completed, 10u);
}

TEST(BatchEngine, NeedsAsManySlotsAsParallel) {
    Opened o = open(2);
    EXPECT_THROW(BatchEngine(*o.model, *o.tier, 3, 64, 4), runtime::TierError);
}

}  // namespace
}  // namespace zinc::serve
