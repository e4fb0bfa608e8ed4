// Events on every tier: one op span per graph op per decode token, device times on the host
// clock inside each token's window, a Chrome trace JSON with the expected tracks, a summary
// whose per-layer times add up to the token time, expert tags equal to the cpu tier's, and
// tracing that changes no result.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>
#include <set>

#include "runtime/sampler.h"
#include "runtime/session.h"
#include "tests/trace/trace_tiers.h"
#include "tools/trace/chrome_trace.h"
#include "tools/trace/summary.h"
#include "tools/trace/svg.h"
#include "tools/trace/timeline.h"

namespace zinc {
namespace {

using runtime::EventKind;
using test::TierKind;

// Feeds `prompt` (one batched step), then `tokens` one per step with the log set; returns
// every step's logits.
std::vector<std::vector<float>> decode(test::Opened& o, runtime::EventLog* log, const std::vector<int32_t>& prompt,
                                       const std::vector<int32_t>& tokens) {
    o.tier->setEventLog(log);
    runtime::Session session(o.model->config(), *o.tier);
    std::vector<std::vector<float>> logits;
    const auto first = session.feed(prompt);
    logits.emplace_back(first.begin(), first.end());
    for (int32_t t : tokens) {
        const auto l = session.step(t);
        logits.emplace_back(l.begin(), l.end());
    }
    o.tier->setEventLog(nullptr);
    return logits;
}

int32_t layersOf(const graph::Graph& g) { return g.config->nLayer; }
int32_t opsOutsideLayers(const graph::Graph& g) {
    int32_t n = 0;
    for (const auto& op : g.ops) n += op.layer < 0;
    return n;
}

class TraceOnTier : public testing::TestWithParam<TierKind> {};

TEST_P(TraceOnTier, RecordsOneOpEventPerGraphOpPerDecodeToken) {
    ZINC_REQUIRE_TIER(GetParam());
    auto o = test::open("stories260K.gguf", GetParam());
    runtime::EventLog log;
    decode(o, &log, {1, 403}, {407, 31, 200});
    const auto& g = o.graph;
    // Counted: every op of the graph once per decode token, the layer stack's ops (layers x
    // ops per layer) and the ops outside it (embed, output norm, lm_head).
    const size_t tokens = 3, perToken = size_t(layersOf(g)) * g.opsPerLayer() + size_t(opsOutsideLayers(g));
    ASSERT_EQ(perToken, g.ops.size());
    std::map<int32_t, std::vector<int32_t>> opsOfStep;
    size_t opEvents = 0;
    for (const auto& e : log.events())
        if (e.kind == EventKind::Op) {
            ++opEvents;
            EXPECT_EQ(e.nTokens, 1) << "op events belong to decode steps only";
            EXPECT_EQ(e.layer, g.ops[size_t(e.op)].layer);
            opsOfStep[e.step].push_back(e.op);
        }
    EXPECT_EQ(opEvents, perToken * tokens);
    ASSERT_EQ(opsOfStep.size(), tokens);
    for (const auto& [step, ops] : opsOfStep) {
        std::vector<int32_t> want(g.ops.size());
        for (size_t i = 0; i < want.size(); ++i) want[i] = int32_t(i);
        EXPECT_EQ(ops, want) << "step " << step;
    }
    EXPECT_EQ(log.steps(), 4);  // the prompt's batched step and three decode steps
}

TEST_P(TraceOnTier, ChromeTraceParsesWithTheExpectedTracksAndSpans) {
    ZINC_REQUIRE_TIER(GetParam());
    auto o = test::open("stories260K.gguf", GetParam());
    runtime::EventLog log;
    decode(o, &log, {1, 403}, {407, 31});
    const auto timeline = trace::buildTimeline(log, o.graph);
    const auto parsed = nlohmann::json::parse(trace::chromeTrace(timeline, "test").dump());
    const auto& g = o.graph;
    std::map<std::pair<int, int>, std::string> threads;
    std::map<std::string, int> spans;  // "pid/tid/cat" -> count
    int counters = 0;
    for (const auto& e : parsed.at("traceEvents")) {
        const std::string ph = e.at("ph");
        if (ph == "M" && e.at("name") == "thread_name") threads[{e.at("pid"), e.at("tid")}] = e.at("args").at("name");
        if (ph == "X") {
            ++spans[std::to_string(int(e.at("pid"))) + "/" + std::to_string(int(e.at("tid"))) + "/" + std::string(e.at("cat"))];
            EXPECT_GE(double(e.at("dur")), 0.0);
        }
        counters += ph == "C";
    }
    auto thread = [&](int pid, int tid) { return threads[std::pair{pid, tid}]; };
    EXPECT_EQ(thread(trace::kHostPid, 1), "host");
    ASSERT_EQ(log.queueNames.size(), 1u);
    EXPECT_EQ(thread(trace::kDevicePid, 1), log.queueNames[0]);
    for (int l = 0; l < layersOf(g); ++l) EXPECT_EQ(thread(trace::kLayersPid, l + 1), "layer " + std::to_string(l));
    EXPECT_EQ(thread(trace::kLayersPid, trace::kOutsideLayersTid), "outside layers");

    const int tokens = 2;
    EXPECT_EQ(spans["2/1/op"], int(g.ops.size()) * tokens);
    for (int l = 0; l < layersOf(g); ++l) EXPECT_EQ(spans["3/" + std::to_string(l + 1) + "/op"], int(g.opsPerLayer()) * tokens);
    EXPECT_EQ(spans["3/" + std::to_string(trace::kOutsideLayersTid) + "/op"], opsOutsideLayers(g) * tokens);
    EXPECT_EQ(spans["1/1/step"], tokens + 1);
    const bool gpu = GetParam() != TierKind::Cpu;
    EXPECT_EQ(spans["1/1/host"], gpu ? 2 * (tokens + 1) : 0) << "a submit and a wait per step";
    EXPECT_EQ(spans["2/1/device"], gpu ? tokens : 0) << "the device span of each decode token";
    EXPECT_EQ(counters, tokens) << "a tok/s counter per decode token";
}

TEST_P(TraceOnTier, OpSpansTileEachTokenAndAddUpToItsTime) {
    ZINC_REQUIRE_TIER(GetParam());
    auto o = test::open("qwen3-tiny.gguf", GetParam());
    runtime::EventLog log;
    decode(o, &log, {1, 300}, {17, 52, 600});
    const auto timeline = trace::buildTimeline(log, o.graph);
    ASSERT_EQ(timeline.tokens.size(), 3u);
    EXPECT_TRUE(timeline.deviceClockConsistent);
    for (const auto& token : timeline.tokens) {
        ASSERT_EQ(token.ops.size(), o.graph.ops.size());
        const auto& first = timeline.events[token.ops.front()];
        if (token.hasDevice) {
            EXPECT_EQ(first.beginNs, token.deviceBegin) << "the first op starts with the submission";
            EXPECT_GE(token.deviceBegin, token.stepBegin) << "device work inside the host's call";
            EXPECT_LE(token.deviceEnd, token.stepEnd);
        }
        int64_t previous = first.beginNs;
        for (size_t index : token.ops) {
            const auto& e = timeline.events[index];
            EXPECT_EQ(e.beginNs, e.fused ? e.endNs : previous) << "op " << e.op << " of step " << token.step;
            EXPECT_GE(e.endNs, e.beginNs);
            previous = e.endNs;
        }
        EXPECT_LE(previous, token.tokenBegin() + token.tokenNs());
    }
    const auto s = trace::summarize(timeline);
    EXPECT_EQ(s.tokens, 3);
    EXPECT_EQ(s.opEventsPerToken, int32_t(o.graph.ops.size()));
    double layers = 0;
    for (const auto& l : s.byLayer) layers += l.msPerToken;
    EXPECT_NEAR(layers, s.layersMs + s.outsideMs, 1e-9);
    // The op spans tile the token; what they leave out is named, not assumed small: a timed
    // bound (it was 5 % of the token) failed in CI when lavapipe's logits copy took 7.7 ms.
    EXPECT_NEAR(s.layersMs + s.outsideMs + s.beforeOpsMs + s.afterOpsMs, s.tokenMs, 1e-6)
        << "per-layer times (+ the ops outside the layers + the time before and after them) against the token time\n"
        << trace::formatSummary(s);
    EXPECT_GE(s.afterOpsMs, 0.0);
    EXPECT_GE(s.beforeOpsMs, 0.0);
    if (GetParam() != TierKind::Cpu) {
        EXPECT_EQ(s.beforeOpsMs, 0.0) << "the first op opens the device span";
    }
    EXPECT_NE(trace::formatSummary(s).find(fmt::format("{:.3f} ms after the last", s.afterOpsMs)), std::string::npos);
    EXPECT_DOUBLE_EQ(s.submissionsPerToken, GetParam() == TierKind::Cpu ? 0.0 : 1.0);
    EXPECT_GT(s.tokensPerSecond, 0.0);
}

TEST_P(TraceOnTier, TracingChangesNoResultAndStopsWhenUnset) {
    ZINC_REQUIRE_TIER(GetParam());
    auto o = test::open("qwen3-tiny.gguf", GetParam());
    runtime::EventLog log;
    const auto traced = decode(o, &log, {1, 300}, {17, 52});
    const size_t recorded = log.events().size();
    const auto plain = decode(o, nullptr, {1, 300}, {17, 52});
    EXPECT_EQ(traced, plain) << "logits with and without events";
    EXPECT_EQ(log.events().size(), recorded) << "nothing recorded once the log is unset";
}

TEST_P(TraceOnTier, TagsMoeOpsWithTheCpuTiersExperts) {
    ZINC_REQUIRE_TIER(GetParam());
    auto cpu = test::open("qwen3moe-tiny.gguf", TierKind::Cpu);
    auto o = test::open("qwen3moe-tiny.gguf", GetParam());
    runtime::EventLog cpuLog, log;
    decode(cpu, &cpuLog, {1}, {300, 17});
    decode(o, &log, {1}, {300, 17});
    auto experts = [](const runtime::EventLog& l, const graph::Graph& g) {
        std::map<std::pair<int32_t, int32_t>, std::vector<int32_t>> byStepOp;
        for (const auto& e : l.events())
            if (e.kind == EventKind::Op && (g.ops[size_t(e.op)].kind == graph::OpKind::MoeRoute ||
                                            g.ops[size_t(e.op)].kind == graph::OpKind::MoeFfn))
                byStepOp[{e.step, e.op}] = e.experts;
        return byStepOp;
    };
    const auto want = experts(cpuLog, cpu.graph), got = experts(log, o.graph);
    const auto& c = cpu.model->config();
    ASSERT_EQ(want.size(), size_t(3 * 2 * c.nLayer));  // route and experts op, per layer, 3 one-token steps
    for (const auto& [key, ids] : want) {
        ASSERT_EQ(ids.size(), size_t(c.nExpertUsed));
        EXPECT_EQ(std::set<int32_t>(ids.begin(), ids.end()).size(), ids.size()) << "distinct experts";
        for (int32_t id : ids) EXPECT_TRUE(id >= 0 && id < c.nExpert);
    }
    EXPECT_EQ(got, want);
}

TEST_P(TraceOnTier, DrawsTheTimelineAndTheLayerBars) {
    ZINC_REQUIRE_TIER(GetParam());
    auto o = test::open("stories260K.gguf", GetParam());
    runtime::EventLog log;
    decode(o, &log, {1}, {403, 407});
    const auto timeline = trace::buildTimeline(log, o.graph);
    const std::string svg = trace::tokenTimelineSvg(timeline, "t & <test>");
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
    EXPECT_NE(svg.find("t &amp; &lt;test&gt;"), std::string::npos) << "text is escaped";
    EXPECT_NE(svg.find("<title>attn_q (matmul, layer 0): "), std::string::npos);
    EXPECT_NE(svg.find("token 2 (pos 2)"), std::string::npos) << "the one-token prompt is a decode step too";
    EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
    const std::string bars = trace::layerBarsSvg(trace::summarize(timeline), "bars");
    EXPECT_NE(bars.find(">layer 4<"), std::string::npos);
    EXPECT_NE(bars.find(">outside layers<"), std::string::npos);
    EXPECT_NE(bars.find("<title>layer 0 matmul: "), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Tiers, TraceOnTier, testing::ValuesIn(test::allTiers()), test::tierParamName);

// The hook a tier without events (umq, until it has them) falls back on: a clear error.
TEST(Trace, ATierWithoutEventsSaysSo) {
    struct Silent final : runtime::Tier {
        std::string name() const override { return "umq"; }
        std::string describe() const override { return "umq"; }
        int32_t contextLength() const override { return 1; }
        int32_t maxBatch() const override { return 1; }
        void evaluate(std::span<const int32_t>, int32_t, runtime::LogitsWanted, std::span<float>) override {}
    } tier;
    runtime::EventLog log;
    try {
        tier.setEventLog(&log);
        FAIL() << "no error";
    } catch (const runtime::TierError& e) {
        EXPECT_STREQ(e.what(), "umq tier: records no events (runtime/events.h)");
    }
    EXPECT_NO_THROW(tier.setEventLog(nullptr));
}

}  // namespace
}  // namespace zinc
